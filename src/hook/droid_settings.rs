//! Factory Droid's settings, checked for a dongle hook that fails open.
//!
//! Droid reads Claude Code's hook format from `~/.factory/settings.json`
//! and the project's `.factory/settings.json` and `settings.local.json`:
//! `hooks.PreToolUse[].hooks[]` entries of `type: "command"` with a
//! `timeout` in seconds (default [`DROID_DEFAULT_TIMEOUT_SECS`]). Droid
//! runs the tool when a hook times out, exits 1 or crashes: only exit 2
//! and a deny block, so the entry must end in `|| exit 2`.

use std::path::Path;

use serde_json::Value;

use super::{
    harness::Harness,
    inspection::{Entry, Inspection, deadline_of, read_json, seconds, timing_problems},
    install::runs_the_hook,
};

/// Droid's time-out for a command hook whose entry sets none.
pub const DROID_DEFAULT_TIMEOUT_SECS: u64 = 60;

/// The dongle's entries in the user's and the project's settings.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    for file in [
        home.join(".factory/settings.json"),
        project.join(".factory/settings.json"),
        project.join(".factory/settings.local.json"),
    ] {
        read(&file, approval_timeout_secs, &mut inspection);
    }
    inspection
}

fn read(file: &Path, approval_timeout_secs: u64, inspection: &mut Inspection) {
    let document = match read_json(file) {
        None => return,
        Some(Err(reason)) => {
            inspection.unreadable.push(reason);
            return;
        }
        Some(Ok(document)) => document,
    };
    inspection.files.push(file.to_owned());
    let groups = document.pointer("/hooks/PreToolUse").and_then(Value::as_array);
    for (g, group) in groups.into_iter().flatten().enumerate() {
        let handlers = group.get("hooks").and_then(Value::as_array);
        for (h, handler) in handlers.into_iter().flatten().enumerate() {
            let command = handler.get("command").and_then(Value::as_str).unwrap_or("");
            if !runs_the_hook(command, Harness::Droid) {
                continue;
            }
            let location = format!("hooks.PreToolUse[{g}].hooks[{h}]");
            let mut problems = Vec::new();
            let timeout = match handler.get("timeout") {
                None => Ok(DROID_DEFAULT_TIMEOUT_SECS),
                Some(value) => seconds(value, &location, "timeout"),
            };
            match (timeout, deadline_of(command)) {
                (Ok(timeout), Ok(deadline)) => problems.extend(timing_problems(
                    "Droid",
                    "timeout",
                    timeout,
                    deadline,
                    approval_timeout_secs,
                )),
                (Err(problem), _) | (_, Err(problem)) => problems.push(problem),
            }
            if !command.split_once("||").is_some_and(|(_, guard)| guard.contains("exit 2")) {
                problems.push("Droid runs the tool when a hook crashes, cannot start or exits 1; end the command with `|| exit 2`".into());
            }
            inspection.entries.push(Entry { file: file.to_owned(), location, problems });
        }
    }
}
