//! Reading settings in Claude Code's shape, `hooks.<EVENT>: [{matcher,
//! hooks: [handler]}]`, which Claude Code, Codex, Gemini CLI and Droid all
//! read: the dongle's handlers in a document, and what would make each one
//! fail open by that harness's own rules ([`HookGroups`]: its event, its
//! time-out key's unit and default, and what makes a failure of the hook
//! block there). Where a harness also skips entries (an untrusted folder
//! or hook), its own settings module adds that.

use std::path::Path;

use serde_json::Value;

use super::{
    claude_settings::{DEFAULT_DEADLINE_SECS, flag_value},
    inspection::{Entry, Inspection, read_json, timing_problems},
    install::{FailureGuard, HookGroups, TimeoutUnit, runs_the_hook},
};

/// One of the dongle's handlers in a settings document, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookEntry {
    /// Where it sits, as `hooks.PreToolUse[0].hooks[1]`.
    pub location: String,
    /// Its group's and its own place in the event's list.
    pub group: usize,
    pub handler: usize,
    /// The command it runs.
    pub command: String,
    /// The harness's time-out for it, in the harness's unit (its default
    /// when the entry sets none).
    pub timeout: u64,
    /// The hook's own deadline (`--timeout`), seconds.
    pub deadline_secs: u64,
    /// Whether a crash or a failure to start blocks the tool call.
    pub failure_blocks: bool,
    /// The agent name it passes (`--agent`), if any: else each machine,
    /// user and project has its own (`hook::identity`).
    pub agent: Option<String>,
}

/// Why a settings document cannot be read in this shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("hooks.{event} is not an array")]
    NotAnArray { event: &'static str },
    #[error("{location}.timeout is not a whole number")]
    Timeout { location: String },
    #[error("{location}.command: --timeout '{value}' is not a whole number of seconds")]
    Deadline { location: String, value: String },
}

impl HookGroups {
    /// The dongle's handlers for this harness in `settings`.
    pub fn dongle_hooks(&self, settings: &Value) -> Result<Vec<HookEntry>, SettingsError> {
        let Some(groups) = settings.get("hooks").and_then(|hooks| hooks.get(self.event)) else {
            return Ok(Vec::new());
        };
        let groups = groups.as_array().ok_or(SettingsError::NotAnArray { event: self.event })?;
        let mut found = Vec::new();
        for (group, handlers) in groups.iter().enumerate() {
            let Some(handlers) = handlers.get("hooks").and_then(Value::as_array) else { continue };
            for (handler, entry) in handlers.iter().enumerate() {
                let Some(command) = entry.get("command").and_then(Value::as_str) else { continue };
                if entry.get("type").and_then(Value::as_str) != Some("command")
                    || !runs_the_hook(command, self.harness)
                {
                    continue;
                }
                let location = format!("hooks.{}[{group}].hooks[{handler}]", self.event);
                let timeout = match entry.get("timeout") {
                    None => self.default_timeout,
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
                found.push(HookEntry {
                    location,
                    group,
                    handler,
                    command: command.to_owned(),
                    timeout,
                    deadline_secs,
                    failure_blocks: self.failure_blocks(entry, command),
                    agent: flag_value(command, "--agent").map(str::to_owned),
                });
            }
        }
        Ok(found)
    }

    /// Whether the hook's own failure blocks the call in this harness.
    fn failure_blocks(&self, entry: &Value, command: &str) -> bool {
        let tail = command.rsplit_once("||").map(|(_, tail)| tail);
        let exits_two = tail.is_some_and(|tail| tail.contains("exit 2"));
        match self.guard {
            FailureGuard::ExitTwoAndOnFailure => {
                entry.get("onFailure").and_then(Value::as_str) == Some("block")
                    || command.trim_end().ends_with("|| exit 2")
            }
            FailureGuard::ExitTwo => exits_two,
            FailureGuard::ExitTwoWithReason => {
                exits_two && tail.is_some_and(|tail| tail.contains(">&2"))
            }
        }
    }

    /// What makes an entry fail open, each as a sentence; none if it is
    /// sound for approvals that wait `approval_timeout_secs`.
    pub fn problems(&self, entry: &HookEntry, approval_timeout_secs: u64) -> Vec<String> {
        let product = self.harness.product();
        let mut problems = Vec::new();
        if self.timeout_unit == TimeoutUnit::Milliseconds && entry.timeout < 1000 {
            problems.push(format!(
                "{product} reads \"timeout\" in milliseconds: {} is {} ms, so {product} stops the hook at once and runs the tool (seconds written where milliseconds are read, as `gemini hooks migrate --from-claude` copies Claude Code's); set it to {}",
                entry.timeout,
                entry.timeout,
                self.timeout_unit.written(entry.deadline_secs + 2 * super::claude_settings::MARGIN_SECS),
            ));
        } else {
            problems.extend(timing_problems(
                product,
                "timeout",
                self.timeout_unit,
                entry.timeout,
                entry.deadline_secs,
                approval_timeout_secs,
            ));
        }
        if !entry.failure_blocks {
            problems.push(match self.guard {
                FailureGuard::ExitTwoAndOnFailure => "a hook that crashes or cannot start lets the tool run; add \"onFailure\": \"block\" (Claude Code 2.1.295 and later) or end the command with `|| exit 2`".to_owned(),
                FailureGuard::ExitTwo => format!("{product} runs the tool when a hook crashes, cannot start or exits 1; end the command with `|| exit 2`"),
                FailureGuard::ExitTwoWithReason => format!("{product} runs the tool when a hook crashes or cannot start, and blocks on exit 2 only with a reason on stderr; end the command with `|| {{ echo 'safety-dongle failed' >&2; exit 2; }}`"),
            });
        }
        problems
    }

    /// Reads `file` into `inspection`: its entries with their problems.
    /// The document, when there is one, for the harness's own checks.
    pub fn inspect_file(
        &self,
        file: &Path,
        approval_timeout_secs: u64,
        inspection: &mut Inspection,
    ) -> Option<(Value, Vec<HookEntry>)> {
        let document = match read_json(file)? {
            Err(reason) => {
                inspection.unreadable.push(reason);
                return None;
            }
            Ok(document) => document,
        };
        inspection.files.push(file.to_owned());
        match self.dongle_hooks(&document) {
            Ok(hooks) => {
                inspection.entries.extend(hooks.iter().map(|entry| Entry {
                    file: file.to_owned(),
                    location: entry.location.clone(),
                    problems: self.problems(entry, approval_timeout_secs),
                }));
                Some((document, hooks))
            }
            Err(error) => {
                inspection.unreadable.push(format!("{}: {error}", file.display()));
                None
            }
        }
    }
}
