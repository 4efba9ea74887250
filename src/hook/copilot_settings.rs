//! Copilot CLI's hook files, checked for a dongle hook that fails open or
//! is skipped.
//!
//! Copilot reads hook files from the user's folder (`~/.copilot/hooks/*.json`
//! and the `hooks` of `~/.copilot/settings.json`; `COPILOT_HOME` moves
//! `~/.copilot`) and from the project (`.github/hooks/*.json`). It runs a
//! project's hooks only in a folder the person trusts (listed, or under
//! one listed, in `trustedFolders` of `~/.copilot/config.json`), and skips
//! them silently elsewhere. It runs the tool when a hook times out
//! (`timeoutSec`, seconds, default [`COPILOT_DEFAULT_TIMEOUT_SECS`]); a
//! hook that crashes or exits non-zero blocks the call, so no `|| exit 2`
//! is needed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    claude_settings::MARGIN_SECS,
    harness::Harness,
    inspection::{
        Entry, Inspection, deadline_of, json_files_in, read_json, seconds, timing_problems,
    },
    install::{HookLine, InstallError, Scope, SettingsWriter, pretty},
    install::{TimeoutUnit, runs_the_hook},
};

/// Copilot's time-out for a hook entry that sets no `timeoutSec`.
pub const COPILOT_DEFAULT_TIMEOUT_SECS: u64 = 30;
/// The events whose entries run before a tool call (camelCase and the
/// VS Code-compatible PascalCase format).
const EVENTS: [&str; 2] = ["preToolUse", "PreToolUse"];

/// Copilot's folder of settings and state.
pub fn copilot_home(home: &Path) -> PathBuf {
    std::env::var_os("COPILOT_HOME").map_or_else(|| home.join(".copilot"), PathBuf::from)
}

/// The dongle's entries in the user's and the project's hook files.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let copilot = copilot_home(home);
    let mut inspection = Inspection::default();
    let trusted = trusted(&copilot, project, &mut inspection);
    let user =
        json_files_in(&copilot.join("hooks")).into_iter().chain([copilot.join("settings.json")]);
    for file in user {
        read(&file, None, approval_timeout_secs, &mut inspection);
    }
    for file in json_files_in(&project.join(".github/hooks")) {
        let skipped = (!trusted).then(|| format!(
            "Copilot skips this project's hooks without a word: {} is not a trusted folder; trust it once (answer Copilot's folder prompt with \"remember\", or add it to trustedFolders in {}), or install the hook for the user instead (safety-dongle install copilot --user)",
            project.display(),
            copilot.join("config.json").display()
        ));
        read(&file, skipped, approval_timeout_secs, &mut inspection);
    }
    inspection
}

/// Whether `project` is in (or under) a folder the person trusts.
fn trusted(copilot: &Path, project: &Path, inspection: &mut Inspection) -> bool {
    let config = copilot.join("config.json");
    let document = match read_json(&config) {
        None => return false,
        Some(Err(reason)) => {
            inspection.unreadable.push(reason);
            return false;
        }
        Some(Ok(document)) => document,
    };
    let folders = document
        .get("trustedFolders")
        .or_else(|| document.get("trusted_folders"))
        .and_then(Value::as_array);
    folders
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|folder| project.starts_with(folder))
}

fn read(
    file: &Path,
    skipped: Option<String>,
    approval_timeout_secs: u64,
    inspection: &mut Inspection,
) {
    let document = match read_json(file) {
        None => return,
        Some(Err(reason)) => {
            inspection.unreadable.push(reason);
            return;
        }
        Some(Ok(document)) => document,
    };
    inspection.files.push(file.to_owned());
    for event in EVENTS {
        let Some(handlers) = document.pointer(&format!("/hooks/{event}")).and_then(Value::as_array)
        else {
            continue;
        };
        for (index, handler) in handlers.iter().enumerate() {
            let command = handler.get("bash").and_then(Value::as_str).unwrap_or("");
            if !runs_the_hook(command, Harness::Copilot) {
                continue;
            }
            let location = format!("hooks.{event}[{index}]");
            let mut problems: Vec<String> = skipped.iter().cloned().collect();
            let timeout = match handler.get("timeoutSec") {
                None => Ok(COPILOT_DEFAULT_TIMEOUT_SECS),
                Some(value) => seconds(value, &location, "timeoutSec"),
            };
            match (timeout, deadline_of(command)) {
                (Ok(timeout), Ok(deadline)) => problems.extend(timing_problems(
                    "Copilot",
                    "timeoutSec",
                    TimeoutUnit::Seconds,
                    timeout,
                    deadline,
                    approval_timeout_secs,
                )),
                (Err(problem), _) | (_, Err(problem)) => problems.push(problem),
            }
            if handler.get("timeout").is_some() && handler.get("timeoutSec").is_none() {
                problems.push("Copilot reads \"timeoutSec\", not \"timeout\" (Claude Code's key): this entry gets Copilot's 30 s".into());
            }
            inspection.entries.push(Entry { file: file.to_owned(), location, problems });
        }
    }
}

/// Installs the guard into a hook file of its own.
pub struct Writer;

/// How `install` writes Copilot's hook.
pub const WRITER: Writer = Writer;

impl SettingsWriter for Writer {
    fn file(&self, scope: Scope, project: &Path, home: &Path) -> PathBuf {
        match scope {
            Scope::Project => project.join(".github/hooks/safety-dongle.json"),
            Scope::User => copilot_home(home).join("hooks/safety-dongle.json"),
        }
    }

    fn with_hook(&self, _: Option<&str>, hook: &HookLine) -> Result<String, InstallError> {
        pretty(&guard_file(&hook.command, hook.deadline_secs + 2 * MARGIN_SECS))
    }

    /// The file is the guard's alone: without it, nothing is left.
    fn without_hook(&self, _: &str) -> Result<String, InstallError> {
        Ok(String::new())
    }

    fn by_hand(&self, scope: Scope, _: &Path) -> Vec<String> {
        match scope {
            Scope::Project => vec!["Copilot runs a project's hooks only in a folder you trust, and skips them without a word elsewhere: start `copilot` in the project and choose to remember the folder (or add it to trustedFolders in ~/.copilot/config.json), or install with --user. `safety-dongle doctor` says whether it is trusted.".into()],
            Scope::User => Vec::new(),
        }
    }
}

/// The guard's hook file for Copilot: a file of its own
/// (`safety-dongle.json` in a hooks folder), so installing replaces it
/// whole and uninstalling removes it. `timeout_secs` is Copilot's
/// `timeoutSec`, beyond the hook's own deadline; a crash of the hook blocks
/// in Copilot, so the command needs no `|| exit 2`.
pub fn guard_file(command: &str, timeout_secs: u64) -> Value {
    serde_json::json!({
        "version": 1,
        "hooks": {
            "preToolUse": [
                { "type": "command", "bash": command, "timeoutSec": timeout_secs }
            ]
        }
    })
}
