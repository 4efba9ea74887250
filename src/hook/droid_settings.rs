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
    claude_settings::runs_the_hook_of,
    inspection::{Entry, Inspection, deadline_of, read_json, seconds, timing_problems},
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
            if !runs_the_hook_of(command, "droid") {
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
            if !command.trim_end().ends_with("|| exit 2") {
                problems.push("Droid runs the tool when a hook crashes, cannot start or exits 1; end the command with `|| exit 2`".into());
            }
            inspection.entries.push(Entry { file: file.to_owned(), location, problems });
        }
    }
}

/// `settings` with the guard's entry in `hooks.PreToolUse`, every earlier
/// dongle entry replaced and everything else kept. The command ends in
/// `|| exit 2`: Droid runs the tool when a hook crashes.
pub fn with_guard(settings: Value, command: &str, timeout_secs: u64) -> Result<Value, String> {
    let mut settings = without_guard(settings)?;
    let entry = serde_json::json!({
        "matcher": "*",
        "hooks": [{ "type": "command", "command": format!("{command} || exit 2"), "timeout": timeout_secs }]
    });
    let groups = super::inspection::array_at(&mut settings, &["hooks", "PreToolUse"])?;
    groups.push(entry);
    Ok(settings)
}

/// `settings` without the dongle's entries (a group left empty goes too).
pub fn without_guard(mut settings: Value) -> Result<Value, String> {
    let groups = super::inspection::array_at(&mut settings, &["hooks", "PreToolUse"])?;
    for group in groups.iter_mut() {
        if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
            handlers.retain(|handler| {
                !handler
                    .get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| runs_the_hook_of(c, "droid"))
            });
        }
    }
    groups
        .retain(|group| group.get("hooks").and_then(Value::as_array).is_none_or(|h| !h.is_empty()));
    Ok(settings)
}
