//! Claude Code settings files (`.claude/settings.json`), checked for what
//! makes the dongle's PreToolUse hook fail open.
//!
//! Claude Code runs the tool call anyway when a hook times out, crashes or
//! exits with a code other than 0 and 2. So every hook entry that runs
//! `safety-dongle hook claude-code` must: (1) have its own deadline
//! (`--timeout`, default [`DEFAULT_DEADLINE_SECS`]) at least
//! [`MARGIN_SECS`] inside the entry's `timeout` (Claude Code's default for
//! command hooks is [`CLAUDE_CODE_DEFAULT_TIMEOUT_SECS`]), so the hook
//! denies before it is killed; (2) leave room inside that deadline for
//! `approval_timeout_secs`, or a human's Approve arrives after the hook has
//! denied; (3) make its own failure blocking, with `"onFailure": "block"`
//! (Claude Code 2.1.295 and later) or a command ending in `|| exit 2`.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The hook's own deadline when `--timeout` is not given.
pub const DEFAULT_DEADLINE_SECS: u64 = 170;
/// Claude Code's time-out for a command hook whose entry sets none.
pub const CLAUDE_CODE_DEFAULT_TIMEOUT_SECS: u64 = 600;
/// Room left between nested deadlines (process start, the answer's way back).
pub const MARGIN_SECS: u64 = 5;

/// The settings files Claude Code reads for a project in `dir`, then the
/// user's own: those that exist.
pub fn discover(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let project = [dir.join(".claude/settings.json"), dir.join(".claude/settings.local.json")];
    let user = home.map(|home| home.join(".claude/settings.json"));
    project.into_iter().chain(user).filter(|path| path.is_file()).collect()
}

/// One of the dongle's hook entries in a settings file, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// Where it sits, as `hooks.PreToolUse[0].hooks[1]`.
    pub location: String,
    /// Claude Code's time-out for it, seconds.
    pub timeout_secs: u64,
    /// The hook's own deadline (`--timeout`), seconds.
    pub deadline_secs: u64,
    /// Whether a crash or a failure to start blocks the tool call.
    pub failure_blocks: bool,
    /// The agent name it passes (`--agent`), if any: else each machine,
    /// user and project has its own (`hook::identity`).
    pub agent: Option<String>,
}

/// Why a settings document cannot be read as Claude Code settings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("hooks.PreToolUse is not an array")]
    NotAnArray,
    #[error("{location}.timeout is not a whole number of seconds")]
    Timeout { location: String },
    #[error("{location}.command: --timeout '{value}' is not a whole number of seconds")]
    Deadline { location: String, value: String },
}

/// The dongle's PreToolUse hook entries in a settings document.
pub fn dongle_hooks(settings: &Value) -> Result<Vec<HookEntry>, SettingsError> {
    let Some(groups) = settings.pointer("/hooks/PreToolUse") else {
        return Ok(Vec::new());
    };
    let groups = groups.as_array().ok_or(SettingsError::NotAnArray)?;
    let mut found = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let Some(handlers) = group.get("hooks").and_then(Value::as_array) else { continue };
        for (h, handler) in handlers.iter().enumerate() {
            let Some(command) = handler.get("command").and_then(Value::as_str) else { continue };
            if handler.get("type").and_then(Value::as_str) != Some("command")
                || !runs_the_hook(command)
            {
                continue;
            }
            let location = format!("hooks.PreToolUse[{g}].hooks[{h}]");
            let timeout_secs = match handler.get("timeout") {
                None => CLAUDE_CODE_DEFAULT_TIMEOUT_SECS,
                Some(value) => value
                    .as_u64()
                    .ok_or_else(|| SettingsError::Timeout { location: location.clone() })?,
            };
            let deadline_secs = match flag_value(command, "--timeout") {
                None => DEFAULT_DEADLINE_SECS,
                Some(value) => value.parse().map_err(|_| SettingsError::Deadline {
                    location: location.clone(),
                    value: value.to_owned(),
                })?,
            };
            let agent = flag_value(command, "--agent").map(str::to_owned);
            let failure_blocks = handler.get("onFailure").and_then(Value::as_str) == Some("block")
                || command.trim_end().ends_with("|| exit 2");
            found.push(HookEntry { location, timeout_secs, deadline_secs, failure_blocks, agent });
        }
    }
    Ok(found)
}

fn runs_the_hook(command: &str) -> bool {
    crate::hook::install::runs_the_hook(command, crate::hook::harness::Harness::ClaudeCode)
}

/// The value a hook command passes for `flag` (`--flag VALUE` or
/// `--flag=VALUE`), if it passes one.
pub fn flag_value<'a>(command: &'a str, flag: &str) -> Option<&'a str> {
    let words: Vec<&str> = command.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        match word.strip_prefix(flag) {
            Some("") => return Some(words.get(i + 1).copied().unwrap_or("")),
            Some(rest) if rest.starts_with('=') => return Some(rest.get(1..).unwrap_or_default()),
            _ => {}
        }
    }
    None
}

/// What makes an entry fail open, each as a sentence; none if it is sound
/// for a dongle whose approvals wait `approval_timeout_secs`.
pub fn problems(entry: &HookEntry, approval_timeout_secs: u64) -> Vec<String> {
    let mut problems = Vec::new();
    let (timeout, deadline) = (entry.timeout_secs, entry.deadline_secs);
    if deadline + MARGIN_SECS > timeout {
        problems.push(format!(
            "{}: Claude Code stops the hook after {timeout} s, before its own deadline of {deadline} s, and a hook that times out lets the tool run; set \"timeout\" to at least {} or pass --timeout {} or less",
            entry.location,
            deadline + MARGIN_SECS,
            timeout.saturating_sub(MARGIN_SECS),
        ));
    }
    if approval_timeout_secs + MARGIN_SECS > deadline {
        problems.push(format!(
            "{}: approval_timeout_secs ({approval_timeout_secs}) does not fit inside the hook's deadline ({deadline} s): a human's Approve would come after the hook has denied; lower approval_timeout_secs to {} or raise --timeout to {}",
            entry.location,
            deadline.saturating_sub(MARGIN_SECS),
            approval_timeout_secs + MARGIN_SECS,
        ));
    }
    if !entry.failure_blocks {
        problems.push(format!(
            "{}: a hook that crashes or cannot start lets the tool run; add \"onFailure\": \"block\" (Claude Code 2.1.295 and later) or end the command with `|| exit 2`",
            entry.location
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entries(handler: Value) -> Vec<HookEntry> {
        dongle_hooks(&json!({ "hooks": { "PreToolUse": [ { "matcher": "*", "hooks": [ { "type": "command", "command": "prettier --write ." }, handler ] } ] } })).unwrap()
    }

    #[test]
    fn the_shipped_example_is_sound() {
        let example: Value =
            serde_json::from_str(include_str!("../../examples/claude-code/.claude/settings.json"))
                .unwrap();
        let found = dongle_hooks(&example).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(problems(&found[0], 120), Vec::<String>::new());
    }

    #[test]
    fn only_the_dongle_hook_is_read_with_its_deadline_and_time_out() {
        let found = entries(
            json!({ "type": "command", "command": "/usr/local/bin/safety-dongle hook claude-code --timeout=50 --agent x || exit 2", "timeout": 60 }),
        );
        assert_eq!(
            found,
            vec![HookEntry {
                location: "hooks.PreToolUse[0].hooks[1]".into(),
                timeout_secs: 60,
                deadline_secs: 50,
                failure_blocks: true,
                agent: Some("x".into())
            }]
        );
        let defaults = entries(
            json!({ "type": "command", "command": "safety-dongle hook claude-code", "onFailure": "block" }),
        );
        assert_eq!(
            (defaults[0].timeout_secs, defaults[0].deadline_secs, defaults[0].failure_blocks),
            (CLAUDE_CODE_DEFAULT_TIMEOUT_SECS, DEFAULT_DEADLINE_SECS, true)
        );
        assert!(
            entries(json!({ "type": "command", "command": "echo safety-dongle hook" })).is_empty()
        );
    }

    #[test]
    fn each_way_to_fail_open_is_named() {
        let killed_first = entries(
            json!({ "type": "command", "command": "safety-dongle hook claude-code || exit 2", "timeout": 60 }),
        );
        let found = problems(&killed_first[0], 30);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].contains("stops the hook after 60 s, before its own deadline of 170 s"),
            "{found:?}"
        );

        let approval_too_long = entries(
            json!({ "type": "command", "command": "safety-dongle hook claude-code --timeout 50", "timeout": 60, "onFailure": "block" }),
        );
        let found = problems(&approval_too_long[0], 120);
        assert!(
            found.len() == 1 && found[0].contains("approval_timeout_secs (120) does not fit"),
            "{found:?}"
        );

        let crash_passes = entries(
            json!({ "type": "command", "command": "safety-dongle hook claude-code", "timeout": 180 }),
        );
        let found = problems(&crash_passes[0], 120);
        assert!(found.len() == 1 && found[0].contains("crashes or cannot start"), "{found:?}");
    }

    #[test]
    fn a_malformed_value_is_an_error_not_a_default() {
        let settings = json!({ "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "safety-dongle hook claude-code --timeout soon" } ] } ] } });
        assert!(dongle_hooks(&settings).unwrap_err().to_string().contains("--timeout 'soon'"));
        let settings = json!({ "hooks": { "PreToolUse": [ { "hooks": [ { "type": "command", "command": "safety-dongle hook claude-code", "timeout": "180" } ] } ] } });
        assert!(
            dongle_hooks(&settings)
                .unwrap_err()
                .to_string()
                .contains("timeout is not a whole number")
        );
    }
}
