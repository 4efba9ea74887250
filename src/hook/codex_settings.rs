//! Codex CLI's settings, checked for a dongle hook that fails open or that
//! Codex skips without a word.
//!
//! Codex reads hooks in Claude Code's shape (`hook::grouped`) from
//! `hooks.json` in `~/.codex` and in a project's `.codex` folder, with a
//! `timeout` in seconds (default [`CODEX_DEFAULT_TIMEOUT_SECS`]). It runs
//! such a hook only when:
//! - for a project's hooks, the project is trusted: `[projects."PATH"]
//!   trust_level = "trusted"` in `~/.codex/config.toml`, for the folder or
//!   its git top level (Codex ignores an untrusted project's `.codex`);
//! - a person trusted the hook itself (`/hooks` in Codex):
//!   `[hooks.state."FILE:pre_tool_use:GROUP:HANDLER"] trusted_hash` equals
//!   the hash of the entry as it is now, so an entry changed since it was
//!   trusted is skipped too; `enabled = false` there switches it off.
//!
//! The hash is Codex's own: SHA-256 over the canonical JSON of the event's
//! key and the entry's group, reduced to that one handler with Codex's
//! defaults filled in (checked against `codex app-server`'s `hooks/list`
//! by the real-harness suite).

use std::path::Path;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{
    grouped::HookEntry,
    inspection::{Inspection, read_text},
    install::CODEX,
};
use crate::protocol::canonical::canonical;

/// Codex's time-out for a command hook whose entry sets none.
pub const CODEX_DEFAULT_TIMEOUT_SECS: u64 = 600;

/// The event's key in Codex's hook keys and hashes.
const EVENT_KEY: &str = "pre_tool_use";

/// The dongle's entries in the user's and the project's `hooks.json`, each
/// with what would make it fail open or be skipped.
pub fn inspect(home: &Path, project: &Path, approval_timeout_secs: u64) -> Inspection {
    let mut inspection = Inspection::default();
    let config = home.join(".codex/config.toml");
    let Some(config) = read_toml(&config, &mut inspection) else {
        return inspection;
    };
    let project_trusted = project_trusted(&config, project);
    for (file, is_project) in
        [(home.join(".codex/hooks.json"), false), (project.join(".codex/hooks.json"), true)]
    {
        let before = inspection.entries.len();
        let Some((document, hooks)) =
            CODEX.inspect_file(&file, approval_timeout_secs, &mut inspection)
        else {
            continue;
        };
        for (entry, hook) in inspection.entries.iter_mut().skip(before).zip(&hooks) {
            if is_project && !project_trusted {
                entry.problems.push(format!(
                    "Codex ignores the .codex folder of a project it does not trust, this hook with it: trust {} when `codex` asks there (it writes [projects.\"{}\"] trust_level = \"trusted\" into {})",
                    project.display(),
                    project.display(),
                    home.join(".codex/config.toml").display(),
                ));
            }
            entry.problems.extend(hook_trust_problem(&config, &file, &document, hook));
        }
    }
    inspection
}

/// `~/.codex/config.toml` as a table (empty when it does not exist); `None`
/// when it cannot be read, which is recorded.
fn read_toml(file: &Path, inspection: &mut Inspection) -> Option<toml::Table> {
    let parsed = match read_text(file) {
        None => return Some(toml::Table::new()),
        Some(text) => text.and_then(|text| {
            toml::from_str(&text)
                .map_err(|error| format!("{}: is not TOML: {error}", file.display()))
        }),
    };
    parsed.map_err(|reason| inspection.unreadable.push(reason)).ok()
}

/// Whether the project, or the git top level above it, is trusted.
fn project_trusted(config: &toml::Table, project: &Path) -> bool {
    let git_top = project.ancestors().find(|folder| folder.join(".git").exists());
    let projects = config.get("projects").and_then(toml::Value::as_table);
    [Some(project), git_top].into_iter().flatten().any(|folder| {
        projects
            .and_then(|projects| projects.get(folder.to_string_lossy().as_ref()))
            .and_then(|entry| entry.get("trust_level"))
            .and_then(toml::Value::as_str)
            == Some("trusted")
    })
}

/// Why Codex skips this hook for want of a person's trust, if it does.
fn hook_trust_problem(
    config: &toml::Table,
    file: &Path,
    document: &Value,
    hook: &HookEntry,
) -> Option<String> {
    let key = format!("{}:{EVENT_KEY}:{}:{}", file.display(), hook.group, hook.handler);
    let state =
        config.get("hooks").and_then(|hooks| hooks.get("state")).and_then(|state| state.get(&key));
    if state.and_then(|state| state.get("enabled")).and_then(toml::Value::as_bool) == Some(false) {
        return Some(format!(
            "switched off in Codex (enabled = false under [hooks.state.\"{key}\"]); switch it on in `/hooks`"
        ));
    }
    let review = "start `codex`, open `/hooks`, review the safety-dongle hook and trust it";
    let trusted = state.and_then(|state| state.get("trusted_hash")).and_then(toml::Value::as_str);
    match (trusted, current_hash(document, hook)) {
        (None, _) => {
            Some(format!("Codex skips a hook nobody has trusted, without a word: {review}"))
        }
        (Some(trusted), Some(current)) if trusted == current => None,
        (Some(_), _) => Some(format!(
            "the hook changed since it was trusted, and Codex skips a changed hook until it is trusted again: {review}"
        )),
    }
}

/// Codex's hash of one handler: its group with only that handler, the
/// matcher kept, the time-out and `async` defaulted as Codex does.
fn current_hash(document: &Value, hook: &HookEntry) -> Option<String> {
    let group = document.pointer(&format!("/hooks/{}/{}", CODEX.event, hook.group))?;
    let handler = group.get("hooks")?.get(hook.handler)?;
    let mut normal = Map::new();
    normal.insert("type".into(), json!("command"));
    normal.insert("command".into(), handler.get("command")?.clone());
    normal.insert("timeout".into(), json!(hook.timeout.max(1)));
    normal.insert(
        "async".into(),
        json!(handler.get("async").and_then(Value::as_bool).unwrap_or(false)),
    );
    if let Some(message) = handler.get("statusMessage").filter(|m| m.is_string()) {
        normal.insert("statusMessage".into(), message.clone());
    }
    let mut identity = Map::new();
    identity.insert("event_name".into(), json!(EVENT_KEY));
    if let Some(matcher) = group.get("matcher").filter(|m| m.is_string()) {
        identity.insert("matcher".into(), matcher.clone());
    }
    identity.insert("hooks".into(), json!([normal]));
    let digest = Sha256::digest(canonical(&Value::Object(identity)).as_bytes());
    Some(format!("sha256:{}", crate::hex::encode(&digest)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash `codex app-server` 0.171.0 reported (`hooks/list`,
    /// `currentHash`) for these two entries.
    #[test]
    fn the_hash_is_the_one_codex_computes() {
        let plain = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "/x/safety-dongle hook codex --timeout 180 || { echo 'x' >&2; exit 2; }", "timeout": 190}]}]}});
        let hooks = CODEX.dongle_hooks(&plain).unwrap();
        assert_eq!(
            current_hash(&plain, &hooks[0]).unwrap(),
            "sha256:73f9fa2ac76ca980332eb3b128611d026918accb70707105802560f86f16b589"
        );
        let matched = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/x/safety-dongle hook codex", "statusMessage": "checking é"}]}]}});
        let hooks = CODEX.dongle_hooks(&matched).unwrap();
        assert_eq!(
            current_hash(&matched, &hooks[0]).unwrap(),
            "sha256:a27b2fee6fbd7f76bd6558bbae3de6fcce41a529419ed624c85f7b97397936a8"
        );
    }
}
