//! Installing the hook into a harness's own settings: one [`SettingsWriter`]
//! per harness, each knowing its settings file, the entry's shape, the
//! failure guards that make the harness block when the hook itself fails,
//! its time-out unit, and what a person must still do that a file cannot.
//!
//! Writing is a pure function of the document: the dongle's earlier
//! entries (any command running `safety-dongle hook HARNESS`) are removed
//! and one entry is added, everything else kept, so installing twice
//! changes nothing and uninstalling gives back the document without the
//! entry. The command line (`cli::install`) reads and writes the file,
//! keeps a backup and prints the diff.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::hook::{claude_settings::MARGIN_SECS, harness::Harness};

/// Which settings file: the project's (checked in, shared) or the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

/// The hook command to install, before the harness's failure guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLine {
    /// `PROGRAM hook HARNESS --timeout N [--config FILE]`, shell-quoted.
    pub command: String,
    /// The hook's own deadline (`--timeout`), seconds.
    pub deadline_secs: u64,
}

/// Why a settings document was not changed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("the settings file is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the settings file's {0} is not what the harness reads there, so it is left alone")]
    Shape(String),
}

/// How the hook is installed into one harness's settings.
pub trait SettingsWriter: Sync {
    /// The settings file for `scope`.
    fn file(&self, scope: Scope, project: &Path, home: &Path) -> PathBuf;
    /// The document (`None`: no file yet) with the dongle's hook installed.
    fn with_hook(&self, current: Option<&str>, hook: &HookLine) -> Result<String, InstallError>;
    /// The document without the dongle's hook.
    fn without_hook(&self, current: &str) -> Result<String, InstallError>;
    /// What a person must do once that a settings file cannot.
    fn by_hand(&self, scope: Scope, file: &Path) -> Vec<String>;
}

impl Harness {
    /// Its settings writer, `None` while `install` does not write its settings.
    pub fn settings_writer(self) -> Option<&'static dyn SettingsWriter> {
        match self {
            Self::ClaudeCode => Some(&CLAUDE_CODE),
            Self::Codex => Some(&CODEX),
            Self::Gemini => Some(&GEMINI),
            Self::Droid => Some(&DROID),
            Self::Copilot => Some(&super::copilot_settings::WRITER),
            Self::Cursor => Some(&super::cursor_settings::WRITER),
            Self::Opencode => Some(&super::opencode_settings::WRITER),
        }
    }
}

/// The time-out unit a harness reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutUnit {
    Seconds,
    Milliseconds,
}

impl TimeoutUnit {
    /// `secs` written in this unit.
    pub fn written(self, secs: u64) -> u64 {
        match self {
            Self::Seconds => secs,
            Self::Milliseconds => secs.saturating_mul(MILLIS_PER_SEC),
        }
    }

    /// A time-out written in this unit, in whole seconds.
    pub fn seconds(self, value: u64) -> u64 {
        match self {
            Self::Seconds => value,
            Self::Milliseconds => value / MILLIS_PER_SEC,
        }
    }
}

/// How the hook's own failure (a crash, a missing binary) is made to block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureGuard {
    /// `|| exit 2` and `"onFailure": "block"` (Claude Code).
    ExitTwoAndOnFailure,
    /// Exit 2 (Droid).
    ExitTwo,
    /// Exit 2 with a reason on stderr: the harness blocks on exit 2 only
    /// with text there (Codex, Gemini).
    ExitTwoWithReason,
}

/// A harness whose settings hold `hooks.<EVENT>: [{matcher, hooks: [handler]}]`
/// in a JSON file (Claude Code's shape, copied by Codex and Gemini).
#[derive(Debug, Clone, Copy)]
pub struct HookGroups {
    pub harness: Harness,
    /// The settings file relative to the project and to the home folder.
    pub project_file: &'static str,
    pub user_file: &'static str,
    pub event: &'static str,
    pub timeout_unit: TimeoutUnit,
    /// The harness's time-out for an entry that sets none, in its unit.
    pub default_timeout: u64,
    pub guard: FailureGuard,
    /// Settings the hook needs switched on, as `(JSON pointer, value)`.
    pub switches: &'static [(&'static str, bool)],
    /// What a person must do once, per scope.
    pub by_hand: fn(Scope, &Path) -> Vec<String>,
}

pub const CLAUDE_CODE: HookGroups = HookGroups {
    harness: Harness::ClaudeCode,
    project_file: ".claude/settings.json",
    user_file: ".claude/settings.json",
    event: "PreToolUse",
    timeout_unit: TimeoutUnit::Seconds,
    default_timeout: super::claude_settings::CLAUDE_CODE_DEFAULT_TIMEOUT_SECS,
    guard: FailureGuard::ExitTwoAndOnFailure,
    switches: &[],
    by_hand: |_, _| Vec::new(),
};

pub const CODEX: HookGroups = HookGroups {
    harness: Harness::Codex,
    project_file: ".codex/hooks.json",
    user_file: ".codex/hooks.json",
    event: "PreToolUse",
    timeout_unit: TimeoutUnit::Seconds,
    default_timeout: super::codex_settings::CODEX_DEFAULT_TIMEOUT_SECS,
    guard: FailureGuard::ExitTwoWithReason,
    switches: &[],
    by_hand: |scope, file| {
        let hook = format!(
            "Codex skips a hook nobody has trusted, without a word: start `codex`, open `/hooks`, review the safety-dongle hook from {} and trust it (again after every change to it).",
            file.display()
        );
        match scope {
            Scope::Project => vec![
                "Codex ignores the .codex folder of a project it does not trust: trust the project when `codex` asks in it (or run `codex exec --trust` there once).".into(),
                hook,
            ],
            Scope::User => vec![hook],
        }
    },
};

pub const GEMINI: HookGroups = HookGroups {
    harness: Harness::Gemini,
    project_file: ".gemini/settings.json",
    user_file: ".gemini/settings.json",
    event: "BeforeTool",
    timeout_unit: TimeoutUnit::Milliseconds,
    default_timeout: super::gemini_settings::GEMINI_DEFAULT_TIMEOUT_MS,
    guard: FailureGuard::ExitTwoWithReason,
    switches: &[("/hooksConfig/enabled", true)],
    by_hand: |_, _| {
        vec![
            "Gemini CLI runs no hook at all, the user's included, in a folder it does not trust: run `gemini` in each project and trust the folder when it asks (headless runs refuse an untrusted folder unless given --skip-trust). `safety-dongle doctor` says whether it is trusted.".into(),
        ]
    },
};

/// Droid reads Claude Code's shape, runs the tool when a hook exits 1,
/// crashes or times out, and blocks on exit 2 (with the reason on stderr).
pub const DROID: HookGroups = HookGroups {
    harness: Harness::Droid,
    project_file: ".factory/settings.json",
    user_file: ".factory/settings.json",
    event: "PreToolUse",
    timeout_unit: TimeoutUnit::Seconds,
    default_timeout: super::droid_settings::DROID_DEFAULT_TIMEOUT_SECS,
    guard: FailureGuard::ExitTwo,
    switches: &[],
    by_hand: |_, _| Vec::new(),
};

/// Gemini CLI's time-out is in milliseconds (`gemini hooks migrate
/// --from-claude` copies Claude Code's seconds as they are).
const MILLIS_PER_SEC: u64 = 1000;

impl HookGroups {
    fn handler(&self, hook: &HookLine) -> Value {
        let timeout_secs = hook.deadline_secs + 2 * MARGIN_SECS;
        let timeout = self.timeout_unit.written(timeout_secs);
        match self.guard {
            FailureGuard::ExitTwoAndOnFailure => json!({
                "type": "command",
                "command": format!("{} || exit 2", hook.command),
                "timeout": timeout,
                "onFailure": "block",
            }),
            // A reason on stderr costs nothing where exit 2 alone blocks.
            FailureGuard::ExitTwo | FailureGuard::ExitTwoWithReason => json!({
                "type": "command",
                "command": format!(
                    "{} || {{ echo 'safety-dongle failed, so this tool call is refused' >&2; exit 2; }}",
                    hook.command
                ),
                "timeout": timeout,
            }),
        }
    }

    /// The event's groups with every handler of the dongle's removed (and
    /// groups left empty by that removed).
    fn remove_ours(&self, document: &mut Value) -> Result<(), InstallError> {
        let harness = self.harness;
        let Some(groups) = document.pointer_mut(&format!("/hooks/{}", self.event)) else {
            return Ok(());
        };
        let groups = groups
            .as_array_mut()
            .ok_or_else(|| InstallError::Shape(format!("hooks.{}", self.event)))?;
        for group in groups.iter_mut() {
            if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                handlers.retain(|handler| {
                    !handler
                        .get("command")
                        .and_then(Value::as_str)
                        .is_some_and(|command| runs_the_hook(command, harness))
                });
            }
        }
        groups.retain(|group| {
            group.get("hooks").and_then(Value::as_array).is_none_or(|handlers| !handlers.is_empty())
        });
        Ok(())
    }
}

/// Whether `command` runs `safety-dongle hook HARNESS`.
pub fn runs_the_hook(command: &str, harness: Harness) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    words.windows(3).any(|w| match w {
        [program, "hook", name] => {
            *name == harness.name()
                && program
                    .trim_matches(['\'', '"'])
                    .rsplit('/')
                    .next()
                    .is_some_and(|name| name.starts_with("safety-dongle"))
        }
        _ => false,
    })
}

fn object<'a>(value: &'a mut Value, at: &str) -> Result<&'a mut Map<String, Value>, InstallError> {
    value.as_object_mut().ok_or_else(|| InstallError::Shape(at.to_owned()))
}

pub fn pretty(document: &Value) -> Result<String, InstallError> {
    Ok(format!("{}\n", serde_json::to_string_pretty(document)?))
}

impl SettingsWriter for HookGroups {
    fn file(&self, scope: Scope, project: &Path, home: &Path) -> PathBuf {
        match scope {
            Scope::Project => project.join(self.project_file),
            Scope::User => home.join(self.user_file),
        }
    }

    fn with_hook(&self, current: Option<&str>, hook: &HookLine) -> Result<String, InstallError> {
        let mut document = match current {
            Some(text) if !text.trim().is_empty() => serde_json::from_str(text)?,
            _ => json!({}),
        };
        object(&mut document, "top level")?;
        self.remove_ours(&mut document)?;
        for (pointer, value) in self.switches {
            let mut at = &mut document;
            let mut parts = pointer.split('/').skip(1).peekable();
            while let Some(part) = parts.next() {
                let map = object(at, pointer)?;
                if parts.peek().is_none() {
                    map.insert(part.to_owned(), json!(value));
                    break;
                }
                at = map.entry(part.to_owned()).or_insert_with(|| json!({}));
            }
        }
        let root = object(&mut document, "top level")?;
        let hooks = object(root.entry("hooks").or_insert_with(|| json!({})), "hooks")?;
        let groups = hooks.entry(self.event).or_insert_with(|| json!([]));
        groups
            .as_array_mut()
            .ok_or_else(|| InstallError::Shape(format!("hooks.{}", self.event)))?
            .push(json!({ "matcher": "*", "hooks": [self.handler(hook)] }));
        pretty(&document)
    }

    fn without_hook(&self, current: &str) -> Result<String, InstallError> {
        let mut document: Value = serde_json::from_str(current)?;
        self.remove_ours(&mut document)?;
        let event_empty = document
            .pointer(&format!("/hooks/{}", self.event))
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty);
        if event_empty && let Some(hooks) = document.get_mut("hooks").and_then(Value::as_object_mut)
        {
            hooks.remove(self.event);
            if hooks.is_empty()
                && let Some(root) = document.as_object_mut()
            {
                root.remove("hooks");
            }
        }
        pretty(&document)
    }

    fn by_hand(&self, scope: Scope, file: &Path) -> Vec<String> {
        (self.by_hand)(scope, file)
    }
}

/// A line diff of two texts, `-`/`+`/` ` prefixed (longest common
/// subsequence; settings files are small).
pub fn diff(old: &str, new: &str) -> String {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let (n, m) = (old.len(), new.len());
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0_usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let value = if old.get(i) == new.get(j) {
                common.get(i + 1).and_then(|row| row.get(j + 1)).map_or(0, |v| v + 1)
            } else {
                let down = common.get(i + 1).and_then(|row| row.get(j)).copied().unwrap_or(0);
                let right = common.get(i).and_then(|row| row.get(j + 1)).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = common.get_mut(i).and_then(|row| row.get_mut(j)) {
                *cell = value;
            }
        }
    }
    let at = |i: usize, j: usize| common.get(i).and_then(|row| row.get(j)).copied().unwrap_or(0);
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        match (old.get(i), new.get(j)) {
            (Some(a), Some(b)) if a == b => {
                out.push_str(&format!("  {a}\n"));
                i += 1;
                j += 1;
            }
            (Some(a), _) if j >= m || at(i + 1, j) >= at(i, j + 1) => {
                out.push_str(&format!("- {a}\n"));
                i += 1;
            }
            (_, Some(b)) => {
                out.push_str(&format!("+ {b}\n"));
                j += 1;
            }
            (Some(a), None) => {
                out.push_str(&format!("- {a}\n"));
                i += 1;
            }
            (None, None) => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(harness: Harness) -> HookLine {
        HookLine {
            command: format!("/opt/bin/safety-dongle hook {harness} --timeout 170"),
            deadline_secs: 170,
        }
    }

    #[test]
    fn installing_keeps_what_is_there_and_twice_is_once_and_uninstall_gives_it_back() {
        let theirs = r#"{"model": "x", "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "prettier"}]}], "Stop": []}}"#;
        for harness in [Harness::ClaudeCode, Harness::Codex, Harness::Gemini] {
            let Some(writer) = harness.settings_writer() else { panic!("{harness}") };
            let once = writer.with_hook(Some(theirs), &line(harness)).unwrap();
            let twice = writer.with_hook(Some(&once), &line(harness)).unwrap();
            assert_eq!(once, twice, "{harness}: installing again changes nothing");
            assert!(once.contains("prettier") && once.contains("\"model\""), "{harness}: {once}");
            assert_eq!(once.matches("hook ").count(), 1, "{harness}: {once}");
            let removed = writer.without_hook(&once).unwrap();
            let original: Value = serde_json::from_str(theirs).unwrap();
            let mut back: Value = serde_json::from_str(&removed).unwrap();
            if let Some(config) = back.get_mut("hooksConfig").and_then(Value::as_object_mut) {
                config.remove("enabled");
            }
            back.as_object_mut().unwrap().retain(|_, v| v != &json!({}));
            assert_eq!(back, original, "{harness}: {removed}");
            let fresh = writer.with_hook(None, &line(harness)).unwrap();
            assert_eq!(
                writer.without_hook(&fresh).unwrap().trim(),
                if harness == Harness::Gemini {
                    "{\n  \"hooksConfig\": {\n    \"enabled\": true\n  }\n}"
                } else {
                    "{}"
                }
            );
        }
    }

    #[test]
    fn each_entry_carries_its_harness_failure_guard_and_time_out_unit() {
        for groups in [CLAUDE_CODE, CODEX, GEMINI, DROID] {
            let harness = groups.harness;
            let written: Value =
                serde_json::from_str(&groups.with_hook(None, &line(harness)).unwrap()).unwrap();
            let found = groups.dongle_hooks(&written).unwrap();
            assert_eq!(found.len(), 1, "{harness}: {written}");
            assert_eq!(groups.problems(&found[0], 120), Vec::<String>::new(), "{harness}");
        }

        let gemini: Value =
            serde_json::from_str(&GEMINI.with_hook(None, &line(Harness::Gemini)).unwrap()).unwrap();
        let handler = &gemini["hooks"]["BeforeTool"][0]["hooks"][0];
        assert_eq!(handler["timeout"], 180_000, "Gemini's unit is milliseconds");
        assert!(handler["command"].as_str().unwrap().ends_with(">&2; exit 2; }"));
        assert_eq!(gemini["hooksConfig"]["enabled"], true);

        let codex: Value =
            serde_json::from_str(&CODEX.with_hook(None, &line(Harness::Codex)).unwrap()).unwrap();
        assert_eq!(codex["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"], 180);
        assert!(!CODEX.by_hand(Scope::Project, Path::new("x")).is_empty());
    }

    #[test]
    fn a_document_of_another_shape_is_left_alone() {
        for bad in ["[1]", r#"{"hooks": []}"#, r#"{"hooks": {"PreToolUse": {}}}"#, "not json"] {
            assert!(CLAUDE_CODE.with_hook(Some(bad), &line(Harness::ClaudeCode)).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_diff_shows_lines_removed_and_added() {
        assert_eq!(diff("a\nb\nc\n", "a\nx\nc\n"), "  a\n- b\n+ x\n  c\n");
        assert_eq!(diff("", "a\n"), "+ a\n");
    }
}
