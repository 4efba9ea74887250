//! opencode's guard plugin, checked where opencode loads it.
//!
//! opencode loads every `.js`/`.ts` file in `~/.config/opencode/plugins/`
//! (or `plugin/`) and the project's `.opencode/plugins/` (or `plugin/`).
//! The guard is the shipped `safety-dongle.js`; a copy is an entry when
//! its `COMMAND` runs `safety-dongle hook opencode`. Its own wait,
//! `DEADLINE_MS`, is in milliseconds and must outlast the dongle's
//! `--timeout` (seconds), or the plugin refuses every call that waits for
//! a human; a `DEADLINE_MS` that reads as seconds is named as the unit
//! mistake it is.

use std::path::{Path, PathBuf};

use super::{
    claude_settings::MARGIN_SECS,
    harness::Harness,
    inspection::{Entry, Inspection, approval_problem, deadline_of},
    install::runs_the_hook,
    install::{HookLine, InstallError, Scope, SettingsWriter},
};

/// The folders opencode loads plugins from, the user's first.
pub fn plugin_folders(home: &Path, project: &Path) -> Vec<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map_or_else(|| home.join(".config"), PathBuf::from)
        .join("opencode");
    let local = project.join(".opencode");
    ["plugins", "plugin"]
        .into_iter()
        .map(|name| config.join(name))
        .chain(["plugins", "plugin"].into_iter().map(|name| local.join(name)))
        .collect()
}

/// The guard plugins opencode would load.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    for folder in plugin_folders(home, project) {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|e| e == "js" || e == "ts"))
            .collect();
        files.sort();
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                inspection.unreadable.push(format!("{}: cannot be read", file.display()));
                continue;
            };
            inspection.files.push(file.clone());
            if let Some(entry) = read(&file, &text, approval_timeout_secs) {
                inspection.entries.push(entry);
            }
        }
    }
    inspection
}

/// The plugin's entry, if `text` is the guard plugin.
fn read(file: &Path, text: &str, approval_timeout_secs: u64) -> Option<Entry> {
    let command: Vec<String> = serde_json::from_str(constant(text, "COMMAND")?).ok()?;
    let command = command.join(" ");
    if !runs_the_hook(&command, Harness::Opencode) {
        return None;
    }
    let mut problems = Vec::new();
    let wait_ms =
        constant(text, "DEADLINE_MS").and_then(|value| value.replace('_', "").parse::<u64>().ok());
    match (wait_ms, deadline_of(&command)) {
        (_, Err(problem)) => problems.push(problem),
        (None, _) => problems.push("DEADLINE_MS is not a whole number of milliseconds".into()),
        (Some(wait_ms), Ok(deadline)) => {
            let needed_ms = (deadline + MARGIN_SECS) * 1000;
            if wait_ms < needed_ms {
                let unit = if wait_ms * 1000 >= needed_ms {
                    format!(
                        " ({wait_ms} reads as seconds, but DEADLINE_MS is in milliseconds: {wait_ms} ms is {} s)",
                        wait_ms as f64 / 1000.0
                    )
                } else {
                    String::new()
                };
                problems.push(format!(
                    "the plugin stops waiting after {wait_ms} ms{unit}, before the dongle's own deadline of {deadline} s: every call that waits for a human is refused; set DEADLINE_MS to at least {needed_ms}"
                ));
            }
            problems.extend(approval_problem(deadline, approval_timeout_secs));
        }
    }
    Some(Entry { file: file.to_owned(), location: "COMMAND".into(), problems })
}

/// The text after `const NAME =` up to the end of its line.
fn constant<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let prefix = format!("const {name} = ");
    text.lines().find_map(|line| line.trim().strip_prefix(prefix.as_str())).map(str::trim)
}

/// Installs the guard plugin.
pub struct Writer;

/// How `install` writes opencode's plugin.
pub const WRITER: Writer = Writer;

impl SettingsWriter for Writer {
    fn file(&self, scope: Scope, project: &Path, home: &Path) -> PathBuf {
        let folder = match scope {
            Scope::Project => project.join(".opencode/plugins"),
            Scope::User => plugin_folders(home, project).into_iter().next().unwrap_or_default(),
        };
        folder.join("safety-dongle.js")
    }

    fn with_hook(&self, _: Option<&str>, hook: &HookLine) -> Result<String, InstallError> {
        Ok(plugin(&shell_words(&hook.command), hook.deadline_secs))
    }

    /// The file is the guard's alone: without it, nothing is left.
    fn without_hook(&self, _: &str) -> Result<String, InstallError> {
        Ok(String::new())
    }

    fn by_hand(&self, _: Scope, _: &Path) -> Vec<String> {
        vec![
            "opencode loads plugins when it starts, and none with --pure: run it without --pure."
                .into(),
        ]
    }
}

/// The words of a command line quoted as `cli::install` quotes them
/// (plain words, or single-quoted with `'\''` for a quote).
fn shell_words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let (mut quoted, mut escaped, mut started) = (false, false, false);
    for c in command.chars() {
        if escaped {
            word.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\'' => {
                quoted = !quoted;
                started = true;
            }
            '\\' if !quoted => {
                escaped = true;
                started = true;
            }
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

/// The shipped plugin.
pub const PLUGIN: &str = include_str!("../../integrations/opencode/safety-dongle.js");

/// The plugin with `command` (the dongle and its arguments) as its
/// `COMMAND` and a `DEADLINE_MS` beyond the dongle's own deadline.
pub fn plugin(command: &[String], deadline_secs: u64) -> String {
    let command = serde_json::to_string(command).unwrap_or_default();
    let wait_ms = (deadline_secs + 2 * MARGIN_SECS) * 1000;
    PLUGIN
        .lines()
        .map(|line| {
            if line.starts_with("const COMMAND = ") {
                format!("const COMMAND = {command}")
            } else if line.starts_with("const DEADLINE_MS = ") {
                format!("const DEADLINE_MS = {wait_ms}")
            } else {
                line.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_command_line_splits_back_into_its_words() {
        assert_eq!(
            shell_words(
                r"'/opt/my dongle/safety-dongle' hook opencode --config '/home/o'\''brien/c.toml'"
            ),
            [
                "/opt/my dongle/safety-dongle",
                "hook",
                "opencode",
                "--config",
                "/home/o'brien/c.toml"
            ]
        );
    }
}
