//! Claude Code settings files (`.claude/settings.json`): where they are,
//! and the deadlines the dongle's PreToolUse hook must keep there (read by
//! `hook::grouped`, as Claude Code's shape is shared by other harnesses).
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::hook::{grouped::HookEntry, install::CLAUDE_CODE};

    fn dongle_hooks(
        settings: &Value,
    ) -> Result<Vec<HookEntry>, crate::hook::grouped::SettingsError> {
        CLAUDE_CODE.dongle_hooks(settings)
    }

    fn problems(entry: &HookEntry, approval_timeout_secs: u64) -> Vec<String> {
        CLAUDE_CODE.problems(entry, approval_timeout_secs)
    }

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
                group: 0,
                handler: 1,
                command:
                    "/usr/local/bin/safety-dongle hook claude-code --timeout=50 --agent x || exit 2"
                        .into(),
                timeout: 60,
                deadline_secs: 50,
                failure_blocks: true,
                agent: Some("x".into())
            }]
        );
        let defaults = entries(
            json!({ "type": "command", "command": "safety-dongle hook claude-code", "onFailure": "block" }),
        );
        assert_eq!(
            (defaults[0].timeout, defaults[0].deadline_secs, defaults[0].failure_blocks),
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
