//! `safety-dongle install HARNESS` and `uninstall HARNESS`: the hook entry
//! written into (or removed from) the harness's own settings file by its
//! writer (`hook::install`), merged with what is there, the file before
//! kept as `FILE.safety-dongle.bak`, the diff printed, and what a person
//! must still do said plainly. `--dry-run` prints the diff and writes
//! nothing. Exit 0 when the file is as asked (also when nothing changed),
//! 1 when it could not be read or written.

use std::{
    path::{Path, PathBuf},
    process::ExitCode,
};

use crate::hook::{
    harness::Harness,
    install::{self, HookLine, Scope, SettingsWriter},
};

use super::InstallArgs;

/// The suffix of the copy kept of a settings file before it is changed.
const BACKUP_SUFFIX: &str = "safety-dongle.bak";

pub(super) fn install(args: InstallArgs) -> ExitCode {
    apply(&args, |writer, current| {
        let hook = hook_line(&args)?;
        writer.with_hook(current, &hook).map_err(|error| error.to_string())
    })
}

pub(super) fn uninstall(args: InstallArgs) -> ExitCode {
    apply(&args, |writer, current| match current {
        Some(current) => writer.without_hook(current).map_err(|error| error.to_string()),
        None => Ok(String::new()),
    })
}

/// The command the harness runs: the hook's front (`cli::front`) where it
/// stands next to this binary on a platform with a judge, else this
/// binary, by its absolute path.
fn hook_line(args: &InstallArgs) -> Result<HookLine, String> {
    let this = std::env::current_exe()
        .map_err(|error| format!("cannot tell where this binary is: {error}"))?;
    let front = this.with_file_name(super::front::FRONT_BINARY);
    let program = if cfg!(unix) && front.is_file() { front } else { this };
    let mut words = vec![
        quote(&program.display().to_string()),
        "hook".into(),
        args.harness.name().into(),
        "--timeout".into(),
        args.timeout.to_string(),
    ];
    if let Some(config) = &args.config {
        let config = std::path::absolute(config)
            .map_err(|error| format!("cannot resolve {}: {error}", config.display()))?;
        words.push("--config".into());
        words.push(quote(&config.display().to_string()));
    }
    Ok(HookLine { command: words.join(" "), deadline_secs: args.timeout })
}

/// `word` as one POSIX shell word.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '=' | ':'))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

fn apply(
    args: &InstallArgs,
    change: impl FnOnce(&dyn SettingsWriter, Option<&str>) -> Result<String, String>,
) -> ExitCode {
    let harness: Harness = args.harness;
    let Some(writer) = harness.settings_writer() else {
        eprintln!("safety-dongle: install does not write {harness}'s settings yet");
        return ExitCode::FAILURE;
    };
    let scope = if args.user { Scope::User } else { Scope::Project };
    let (project, home) =
        match (std::env::current_dir(), std::env::var_os("HOME").map(PathBuf::from)) {
            (Ok(project), Some(home)) => (project, home),
            _ => {
                eprintln!("safety-dongle: cannot tell the project folder or the home folder");
                return ExitCode::FAILURE;
            }
        };
    let file = writer.file(scope, &project, &home);
    let current = match std::fs::read_to_string(&file) {
        Ok(text) => Some(text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            eprintln!("safety-dongle: cannot read {}: {error}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let wanted = match change(writer, current.as_deref()) {
        Ok(wanted) => wanted,
        Err(error) => {
            eprintln!("safety-dongle: {}: {error}", file.display());
            return ExitCode::FAILURE;
        }
    };
    let before = current.as_deref().unwrap_or("");
    if wanted == before || (current.is_none() && wanted.is_empty()) {
        println!("{}: already as asked, nothing to change", file.display());
    } else {
        print!("{}:\n{}", file.display(), install::diff(before, &wanted));
        if args.dry_run {
            println!("(dry run: nothing written)");
        } else if let Err(error) = write(&file, current.as_deref(), &wanted) {
            eprintln!("safety-dongle: cannot write {}: {error}", file.display());
            return ExitCode::FAILURE;
        }
    }
    for step in writer.by_hand(scope, &file) {
        println!("By hand, once: {step}");
    }
    ExitCode::SUCCESS
}

/// Writes `wanted` to `file`, keeping the file as it was beside it.
fn write(file: &Path, current: Option<&str>, wanted: &str) -> std::io::Result<()> {
    if let Some(current) = current {
        std::fs::write(backup_of(file), current)?;
    }
    // Nothing left: the file was the guard's own (Copilot's hook file,
    // opencode's plugin).
    if wanted.is_empty() {
        return std::fs::remove_file(file);
    }
    if let Some(folder) = file.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let temporary = file.with_extension("safety-dongle.tmp");
    std::fs::write(&temporary, wanted)?;
    std::fs::rename(&temporary, file)
}

fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".");
    name.push(BACKUP_SUFFIX);
    file.with_file_name(name)
}
