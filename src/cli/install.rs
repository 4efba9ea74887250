//! `safety-dongle install HARNESS` and `uninstall HARNESS`: the guard's
//! hook written into (or taken out of) that harness's own settings, with
//! the failure guards that harness needs, merged with what is there, the
//! file before kept beside it (`.bak`), the change printed as a diff, and
//! nothing written when nothing changes. `--dry-run` prints the diff only.
//! What a file cannot do (trust a folder, restart an editor) is said in
//! plain words after.
//!
//! Each harness's writer lives with its reader (`hook::*_settings`): the
//! hook command names this binary by its full path, the hook's own
//! deadline (`--timeout`) and the config given, and the harness's
//! time-out is set [`MARGIN_SECS`] beyond that deadline, in the harness's
//! unit.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use serde_json::Value;

use crate::hook::{
    claude_settings::MARGIN_SECS, copilot_settings, cursor_settings, droid_settings,
    harness::Harness, inspection::read_json, opencode_settings,
};

use super::InstallArgs;

/// What one install or uninstall does to one file.
struct Change {
    file: PathBuf,
    before: Option<String>,
    /// `None`: the file is removed.
    after: Option<String>,
    /// What a person must still do.
    notes: Vec<String>,
}

pub(super) fn install(args: InstallArgs) -> ExitCode {
    apply(&args, plan(&args, true))
}

pub(super) fn uninstall(args: InstallArgs) -> ExitCode {
    apply(&args, plan(&args, false))
}

fn apply(args: &InstallArgs, change: Result<Change, String>) -> ExitCode {
    let change = match change {
        Ok(change) => change,
        Err(reason) => {
            eprintln!("{}: {reason}", args.harness);
            return ExitCode::from(1);
        }
    };
    if change.before == change.after {
        println!("{}: nothing to change", change.file.display());
    } else {
        print_diff(&change);
        if !args.dry_run
            && let Err(reason) = write(&change)
        {
            eprintln!("{}: {reason}", change.file.display());
            return ExitCode::from(1);
        }
    }
    for note in &change.notes {
        println!("note: {note}");
    }
    ExitCode::SUCCESS
}

/// The file's new content (or its removal) for `harness`.
fn plan(args: &InstallArgs, installing: bool) -> Result<Change, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("this program's path is unknown: {e}"))?;
    let mut words = vec![exe.display().to_string(), "hook".into(), args.harness.name().into()];
    words.extend(["--timeout".into(), args.timeout.to_string()]);
    if let Some(config) = &args.config {
        let config = std::path::absolute(config).unwrap_or_else(|_| config.clone());
        words.extend(["--config".into(), config.display().to_string()]);
    }
    let command = words.iter().map(|word| shell_word(word)).collect::<Vec<_>>().join(" ");
    let harness_timeout = args.timeout + 2 * MARGIN_SECS;
    let home = std::env::var_os("HOME").map(PathBuf::from).ok_or("HOME is not set")?;
    let project = match &args.dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let user = args.user;
    let mut notes = Vec::new();
    let (file, after) = match args.harness {
        Harness::Copilot => {
            let file = if user {
                copilot_settings::copilot_home(&home).join("hooks/safety-dongle.json")
            } else {
                project.join(".github/hooks/safety-dongle.json")
            };
            if installing && !user {
                notes.push(format!(
                    "Copilot runs a project's hooks only in a folder you trust, and skips them without a word elsewhere: trust {} once (start copilot there and choose to remember the folder), or install for your user instead (--user). `safety-dongle doctor` says whether it is trusted.",
                    project.display()
                ));
            }
            let after = installing
                .then(|| pretty(&copilot_settings::guard_file(&command, harness_timeout)));
            (file, after)
        }
        Harness::Droid => {
            let file = if user {
                home.join(".factory/settings.json")
            } else {
                project.join(".factory/settings.json")
            };
            let existing = existing_json(&file)?;
            let after = if installing {
                droid_settings::with_guard(existing, &command, harness_timeout)?
            } else {
                droid_settings::without_guard(existing)?
            };
            (file, Some(pretty(&after)))
        }
        Harness::Cursor => {
            let file = if user {
                home.join(".cursor/hooks.json")
            } else {
                project.join(".cursor/hooks.json")
            };
            let existing = existing_json(&file)?;
            let after = if installing {
                cursor_settings::with_guard(existing, &command, harness_timeout)?
            } else {
                cursor_settings::without_guard(existing)?
            };
            if installing {
                notes.push("Cursor reads hooks.json when it starts: restart Cursor, then check its Hooks settings tab lists the four safety-dongle entries.".into());
            }
            (file, Some(pretty(&after)))
        }
        Harness::Opencode => {
            let folder = if user {
                opencode_settings::plugin_folders(&home, &project)
                    .into_iter()
                    .next()
                    .unwrap_or_default()
            } else {
                project.join(".opencode/plugins")
            };
            let file = folder.join("safety-dongle.js");
            let after = installing.then(|| opencode_settings::plugin(&words, args.timeout));
            if installing {
                notes.push("opencode loads plugins when it starts, and not at all with --pure: run it without --pure.".into());
            }
            (file, after)
        }
        Harness::ClaudeCode => {
            return Err("this version installs the hook for copilot, droid, cursor and opencode; for Claude Code see examples/claude-code".into());
        }
    };
    let before = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => return Err(format!("{}: cannot be read: {error}", file.display())),
    };
    Ok(Change { file, before, after, notes })
}

/// The JSON document in `file`, or an empty object when there is none.
fn existing_json(file: &Path) -> Result<Value, String> {
    match read_json(file) {
        None => Ok(Value::Object(serde_json::Map::new())),
        Some(result) => result,
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// `word` as one shell word: quoted when it holds anything but plain
/// characters.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-=:+@".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Keeps the file before as `FILE.bak`, then writes the new content (or
/// removes the file) through a temporary file renamed into place.
fn write(change: &Change) -> Result<(), String> {
    let io = |e: std::io::Error| crate::diagnostics::io_reason(&e).to_string();
    if change.before.is_some() {
        let mut backup = change.file.clone().into_os_string();
        backup.push(".bak");
        std::fs::copy(&change.file, PathBuf::from(backup)).map_err(io)?;
    }
    match &change.after {
        None => std::fs::remove_file(&change.file).map_err(io),
        Some(text) => {
            if let Some(parent) = change.file.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            let mut temporary = change.file.clone().into_os_string();
            temporary.push(".safety-dongle-new");
            let temporary = PathBuf::from(temporary);
            std::fs::write(&temporary, text).map_err(io)?;
            std::fs::rename(&temporary, &change.file).map_err(io)
        }
    }
}

/// The change as a line diff (`-` before, `+` after).
fn print_diff(change: &Change) {
    let before: Vec<&str> =
        change.before.as_deref().map(|t| t.lines().collect()).unwrap_or_default();
    let after: Vec<&str> = change.after.as_deref().map(|t| t.lines().collect()).unwrap_or_default();
    println!(
        "--- {}",
        if change.before.is_some() {
            change.file.display().to_string()
        } else {
            "/dev/null".into()
        }
    );
    println!(
        "+++ {}",
        if change.after.is_some() { change.file.display().to_string() } else { "/dev/null".into() }
    );
    for line in diff_lines(&before, &after) {
        println!("{line}");
    }
}

/// The lines of a longest-common-subsequence diff; past a size where that
/// costs too much, the whole file out and the whole file in.
fn diff_lines(before: &[&str], after: &[&str]) -> Vec<String> {
    const MAX_CELLS: usize = 4_000_000;
    if before.len().saturating_mul(after.len()) > MAX_CELLS {
        return before
            .iter()
            .map(|l| format!("-{l}"))
            .chain(after.iter().map(|l| format!("+{l}")))
            .collect();
    }
    let width = after.len() + 1;
    let mut common = vec![0usize; (before.len() + 1) * width];
    let at = |i: usize, j: usize| i * width + j;
    for i in (0..before.len()).rev() {
        for j in (0..after.len()).rev() {
            let value = if before.get(i) == after.get(j) {
                common.get(at(i + 1, j + 1)).copied().unwrap_or(0) + 1
            } else {
                let down = common.get(at(i + 1, j)).copied().unwrap_or(0);
                let right = common.get(at(i, j + 1)).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = common.get_mut(at(i, j)) {
                *cell = value;
            }
        }
    }
    let (mut i, mut j, mut lines) = (0, 0, Vec::new());
    while i < before.len() || j < after.len() {
        let cell = |i: usize, j: usize| common.get(at(i, j)).copied().unwrap_or(0);
        match (before.get(i), after.get(j)) {
            (Some(old), Some(new)) if old == new => {
                lines.push(format!(" {old}"));
                i += 1;
                j += 1;
            }
            (Some(old), Some(_)) if cell(i + 1, j) >= cell(i, j + 1) => {
                lines.push(format!("-{old}"));
                i += 1;
            }
            (Some(old), None) => {
                lines.push(format!("-{old}"));
                i += 1;
            }
            (_, Some(new)) => {
                lines.push(format!("+{new}"));
                j += 1;
            }
            (None, None) => break,
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_keeps_what_stays_and_marks_what_changes() {
        assert_eq!(
            diff_lines(&["a", "b", "c"], &["a", "x", "c", "d"]),
            [" a", "-b", "+x", " c", "+d"]
        );
        assert_eq!(shell_word("/opt/safety dongle/bin"), "'/opt/safety dongle/bin'");
        assert_eq!(shell_word("/usr/bin/safety-dongle"), "/usr/bin/safety-dongle");
    }
}
