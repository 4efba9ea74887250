//! What `safety-dongle doctor` finds in one harness's settings: the
//! dongle's hook entries, each with what would make it fail open or be
//! skipped, and whether the harness is guarded at all.
//!
//! A harness is guarded when at least one of its entries runs the dongle's
//! hook with nothing that lets a call through unjudged: the harness kills
//! the hook before the hook's own deadline (and then runs the tool), a
//! human's Approve cannot arrive inside that deadline, a crash of the hook
//! lets the tool run, or the harness skips the entry (an untrusted
//! folder). Some harnesses need several entries (Cursor has one event per
//! kind of call): their inspector names what is left uncovered.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{
    claude_settings::{DEFAULT_DEADLINE_SECS, MARGIN_SECS, flag_value},
    install::TimeoutUnit,
};

/// One entry that runs the dongle's hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub file: PathBuf,
    /// Where in the file, as `hooks.preToolUse[0]`.
    pub location: String,
    /// What makes it fail open or be skipped; empty when it is sound.
    pub problems: Vec<String>,
}

/// One harness's settings, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inspection {
    /// Every settings file read.
    pub files: Vec<PathBuf>,
    pub entries: Vec<Entry>,
    /// Files that could not be read, each with why.
    pub unreadable: Vec<String>,
    /// Kinds of calls no sound entry covers (for harnesses with one event
    /// per kind).
    pub uncovered: Vec<String>,
}

impl Inspection {
    /// Whether some sound entry guards every kind of call.
    pub fn guarded(&self) -> bool {
        self.uncovered.is_empty() && self.entries.iter().any(|entry| entry.problems.is_empty())
    }
}

/// The text of `path`, if it exists; `Err` says why it cannot be read.
pub fn read_text(path: &Path) -> Option<Result<String, String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(Ok(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => Some(Err(format!(
            "{}: cannot be read: {}",
            path.display(),
            crate::diagnostics::io_reason(&error)
        ))),
    }
}

/// The JSON in `path`, if it exists: comments (`//` lines, as Copilot's
/// `config.json` has) are skipped. `Err` says why it cannot be read.
pub fn read_json(path: &Path) -> Option<Result<Value, String>> {
    Some(read_text(path)?.and_then(|text| {
        let json: String = text
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        serde_json::from_str(&json)
            .map_err(|error| format!("{}: is not JSON: {error}", path.display()))
    }))
}

/// The `.json` files in `folder`, sorted; none when it does not exist.
pub fn json_files_in(folder: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(folder)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|e| e == "json") && path.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The hook's own deadline in a hook command (`--timeout`, else the
/// default), or why it cannot be read.
pub fn deadline_of(command: &str) -> Result<u64, String> {
    match flag_value(command, "--timeout") {
        None => Ok(DEFAULT_DEADLINE_SECS),
        Some(value) => value
            .parse()
            .map_err(|_| format!("--timeout '{value}' is not a whole number of seconds")),
    }
}

/// The problems of an entry the harness stops after `timeout` (in `unit`;
/// and then runs the tool), whose hook decides within `deadline_secs`, for
/// a dongle whose approvals wait `approval_timeout_secs`. `harness` and
/// `timeout_key` name them in the sentences.
pub fn timing_problems(
    harness: &str,
    timeout_key: &str,
    unit: TimeoutUnit,
    timeout: u64,
    deadline_secs: u64,
    approval_timeout_secs: u64,
) -> Vec<String> {
    let mut problems = Vec::new();
    let timeout_secs = unit.seconds(timeout);
    if deadline_secs + MARGIN_SECS > timeout_secs {
        problems.push(format!(
            "{harness} stops the hook after {timeout_secs} s, before its own deadline of {deadline_secs} s, and then runs the tool; set \"{timeout_key}\" to at least {} or pass --timeout {} or less",
            unit.written(deadline_secs + MARGIN_SECS),
            timeout_secs.saturating_sub(MARGIN_SECS),
        ));
    }
    problems.extend(approval_problem(deadline_secs, approval_timeout_secs));
    problems
}

/// The problem of a hook whose deadline leaves no room for a human's
/// Approve, if it has one.
pub fn approval_problem(deadline_secs: u64, approval_timeout_secs: u64) -> Option<String> {
    (approval_timeout_secs + MARGIN_SECS > deadline_secs).then(|| format!(
        "approval_timeout_secs ({approval_timeout_secs}) does not fit inside the hook's deadline ({deadline_secs} s): a human's Approve would come after the hook has refused; lower approval_timeout_secs to {} or raise --timeout to {}",
        deadline_secs.saturating_sub(MARGIN_SECS),
        approval_timeout_secs + MARGIN_SECS,
    ))
}

/// A whole number of seconds in `value`, or the sentence saying it is not.
pub fn seconds(value: &Value, location: &str, key: &str) -> Result<u64, String> {
    value.as_u64().ok_or_else(|| format!("{location}.{key} is not a whole number of seconds"))
}

/// The array at `path` in `document`, made (with the objects above it)
/// when missing; an error naming the path when something else is there.
pub fn array_at<'a>(document: &'a mut Value, path: &[&str]) -> Result<&'a mut Vec<Value>, String> {
    let mut here = document;
    for (depth, key) in path.iter().enumerate() {
        let last = depth + 1 == path.len();
        let object = here.as_object_mut().ok_or_else(|| {
            format!("{} is not an object", path.get(..depth).unwrap_or_default().join("."))
        })?;
        here = object.entry(*key).or_insert_with(|| {
            if last { Value::Array(Vec::new()) } else { Value::Object(serde_json::Map::new()) }
        });
    }
    here.as_array_mut().ok_or_else(|| format!("{} is not a list", path.join(".")))
}
