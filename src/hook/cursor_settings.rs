//! Cursor's `hooks.json`, checked for a dongle hook that fails open.
//!
//! Cursor reads `~/.cursor/hooks.json` and the project's
//! `.cursor/hooks.json`: `{"version": 1, "hooks": {EVENT: [{"command",
//! "timeout" (seconds), "failClosed", "matcher"}]}}`. The dongle guards
//! each kind of call through its own event ([`EVENTS`]); a kind whose
//! event has no sound entry is unguarded. Cursor lets the action through
//! when a hook fails or times out, unless the entry says
//! `"failClosed": true`; without it the command needs `|| exit 2` and a
//! `timeout` beyond the hook's own deadline.

use std::path::Path;

use serde_json::Value;

use super::{
    harness::Harness,
    inspection::{
        Entry, Inspection, approval_problem, deadline_of, read_json, seconds, timing_problems,
    },
    install::{HookLine, InstallError, Scope, SettingsWriter, pretty},
    install::{TimeoutUnit, runs_the_hook},
};

/// The events the dongle is installed for, each with the calls it guards.
pub const EVENTS: [(&str, &str); 4] = [
    ("beforeShellExecution", "shell commands"),
    ("beforeMCPExecution", "MCP calls"),
    ("beforeReadFile", "file reads"),
    ("preToolUse", "writes and edits"),
];

/// The dongle's entries in the user's and the project's hooks.json.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    for file in [home.join(".cursor/hooks.json"), project.join(".cursor/hooks.json")] {
        read(&file, approval_timeout_secs, &mut inspection);
    }
    if inspection.entries.is_empty() {
        return inspection;
    }
    for (event, calls) in EVENTS {
        let prefix = format!("hooks.{event}[");
        let covered = inspection
            .entries
            .iter()
            .any(|entry| entry.problems.is_empty() && entry.location.starts_with(&prefix));
        if !covered {
            inspection.uncovered.push(format!("{calls} ({event})"));
        }
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
    for (event, _) in EVENTS {
        let handlers = document.pointer(&format!("/hooks/{event}")).and_then(Value::as_array);
        for (index, handler) in handlers.into_iter().flatten().enumerate() {
            let command = handler.get("command").and_then(Value::as_str).unwrap_or("");
            if !runs_the_hook(command, Harness::Cursor) {
                continue;
            }
            let location = format!("hooks.{event}[{index}]");
            let fail_closed = handler.get("failClosed").and_then(Value::as_bool) == Some(true);
            let mut problems = Vec::new();
            match (handler.get("timeout"), deadline_of(command)) {
                (_, Err(problem)) => problems.push(problem),
                (Some(value), Ok(deadline)) => match seconds(value, &location, "timeout") {
                    Ok(timeout) if fail_closed => problems.extend(approval_problem(deadline, approval_timeout_secs).into_iter().chain(
                        (deadline + super::claude_settings::MARGIN_SECS > timeout).then(|| format!(
                            "Cursor stops the hook after {timeout} s, before its own deadline of {deadline} s: every call that waits for a human is refused; set \"timeout\" to at least {}",
                            deadline + super::claude_settings::MARGIN_SECS
                        )),
                    )),
                    Ok(timeout) => problems.extend(timing_problems("Cursor", "timeout", TimeoutUnit::Seconds, timeout, deadline, approval_timeout_secs)),
                    Err(problem) => problems.push(problem),
                },
                (None, Ok(deadline)) => {
                    problems.extend(approval_problem(deadline, approval_timeout_secs));
                    if !fail_closed {
                        problems.push(format!("the entry sets no \"timeout\", and Cursor lets the action through when it stops a hook; set \"timeout\" to at least {} and \"failClosed\": true", deadline + super::claude_settings::MARGIN_SECS));
                    }
                }
            }
            if !fail_closed && !command.trim_end().ends_with("|| exit 2") {
                problems.push("Cursor lets the action through when a hook crashes or cannot start; add \"failClosed\": true (or end the command with `|| exit 2`)".into());
            }
            inspection.entries.push(Entry { file: file.to_owned(), location, problems });
        }
    }
}

/// Installs the guard into `hooks.json`.
pub struct Writer;

/// How `install` writes Cursor's hooks.
pub const WRITER: Writer = Writer;

impl SettingsWriter for Writer {
    fn file(&self, scope: Scope, project: &Path, home: &Path) -> std::path::PathBuf {
        match scope {
            Scope::Project => project.join(".cursor/hooks.json"),
            Scope::User => home.join(".cursor/hooks.json"),
        }
    }

    fn with_hook(&self, current: Option<&str>, hook: &HookLine) -> Result<String, InstallError> {
        let document = parse(current)?;
        let timeout = hook.deadline_secs + 2 * super::claude_settings::MARGIN_SECS;
        pretty(&with_guard(document, &hook.command, timeout).map_err(InstallError::Shape)?)
    }

    fn without_hook(&self, current: &str) -> Result<String, InstallError> {
        pretty(&without_guard(parse(Some(current))?).map_err(InstallError::Shape)?)
    }

    fn by_hand(&self, _: Scope, _: &Path) -> Vec<String> {
        vec!["Cursor reads hooks.json when it starts: restart Cursor, then check its Hooks settings list the four safety-dongle entries.".into()]
    }
}

fn parse(current: Option<&str>) -> Result<Value, InstallError> {
    match current {
        Some(text) if !text.trim().is_empty() => Ok(serde_json::from_str(text)?),
        _ => Ok(Value::Object(serde_json::Map::new())),
    }
}

/// The tools `preToolUse` is installed for: the writes and edits (shell
/// commands, MCP calls and reads have their own events, so they are not
/// judged twice).
pub const WRITE_TOOLS: &str = "Write|StrReplace|Edit|MultiEdit|Delete";

/// `hooks` (a `hooks.json`) with the guard on each of [`EVENTS`], fail
/// closed, every earlier dongle entry replaced and everything else kept.
pub fn with_guard(hooks: Value, command: &str, timeout_secs: u64) -> Result<Value, String> {
    let mut hooks = without_guard(hooks)?;
    if let Some(object) = hooks.as_object_mut() {
        object.entry("version").or_insert(serde_json::json!(1));
    }
    for (event, _) in EVENTS {
        let mut entry =
            serde_json::json!({ "command": command, "timeout": timeout_secs, "failClosed": true });
        if event == "preToolUse"
            && let Some(entry) = entry.as_object_mut()
        {
            entry.insert("matcher".into(), WRITE_TOOLS.into());
        }
        super::inspection::array_at(&mut hooks, &["hooks", event])?.push(entry);
    }
    Ok(hooks)
}

/// `hooks` without the dongle's entries (an event left empty goes too).
pub fn without_guard(mut hooks: Value) -> Result<Value, String> {
    for (event, _) in EVENTS {
        let entries = super::inspection::array_at(&mut hooks, &["hooks", event])?;
        entries.retain(|entry| {
            !entry
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(|c| runs_the_hook(c, Harness::Cursor))
        });
        if entries.is_empty()
            && let Some(events) = hooks.get_mut("hooks").and_then(Value::as_object_mut)
        {
            events.remove(event);
        }
    }
    Ok(hooks)
}
