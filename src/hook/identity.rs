//! The agent name a hook attributes its calls to when none is given:
//! per harness, machine and user, and per project where the harness names
//! one. Blocks, pauses and the step budget are per agent name, and a team
//! database is shared by every machine, so a name that is the same
//! everywhere (`claude-code`) would let one developer's block refuse
//! everyone's calls, make the team share one step budget, and let an
//! `unblock` on one machine lift another's block.
//!
//! The name reads `HARNESS:USER@HOST-ID[:PROJECT]`: the harness's name
//! (`claude-code`, `codex`, `gemini`, ..., so `[agents."codex*"]` sections
//! apply to one harness and a block raised in one does not block
//! another), the
//! system's name for the user, the host name with the first eight digits
//! of the machine id where the system keeps one (two laptops may share a
//! host name), and the project folder's name when the harness names it
//! (Claude Code's `CLAUDE_PROJECT_DIR`, Gemini's `GEMINI_PROJECT_DIR`:
//! each adapter's `project_variable`). Characters outside
//! `[A-Za-z0-9._-]` become `_`, so the name is one word to type back to
//! `unblock`.

use std::path::{Path, PathBuf};

use crate::hook::harness::Harness;

/// The default agent name for `harness` on this machine, for this user, in
/// the project its adapter's variable names, if any.
pub fn default_agent(harness: Harness) -> String {
    let project = harness
        .adapter()
        .and_then(|adapter| adapter.project_variable)
        .and_then(std::env::var_os)
        .map(PathBuf::from);
    agent_name(
        harness.name(),
        &crate::platform::user_name(),
        &crate::platform::machine_name(),
        project.as_deref(),
    )
}

/// The name from its parts: `machine` as `platform::machine_name` gives it
/// (`HOST` or `HOST/MACHINE-ID`).
fn agent_name(harness: &str, user: &str, machine: &str, project: Option<&Path>) -> String {
    let machine = match machine.split_once('/') {
        Some((host, id)) => format!("{host}-{}", id.get(..8).unwrap_or(id)),
        None => machine.to_owned(),
    };
    let mut name = format!("{harness}:{}@{}", word(user), word(&machine));
    if let Some(project) = project.and_then(Path::file_name) {
        name.push(':');
        name.push_str(&word(&project.to_string_lossy()));
    }
    name
}

/// `text` as one plain word (empty as `unknown`).
fn word(text: &str) -> String {
    if text.is_empty() {
        return "unknown".into();
    }
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_differ_by_machine_user_and_project() {
        let name = |user: &str, machine: &str, project: Option<&str>| {
            agent_name("claude-code", user, machine, project.map(Path::new))
        };
        let alice = name("alice", "laptop/0123456789abcdef", None);
        assert_eq!(alice, "claude-code:alice@laptop-01234567");
        let distinct = [
            alice.clone(),
            name("bob", "laptop/0123456789abcdef", None),
            name("alice", "laptop/fedcba9876543210", None),
            name("alice", "ci-runner", None),
            name("alice", "laptop/0123456789abcdef", Some("/home/alice/src/app")),
            name("alice", "laptop/0123456789abcdef", Some("/home/alice/src/lib")),
        ];
        let unique: std::collections::BTreeSet<&String> = distinct.iter().collect();
        assert_eq!(unique.len(), distinct.len(), "{distinct:?}");
        assert!(
            distinct.iter().all(|name| name.starts_with("claude-code")),
            "[agents.\"claude-code*\"] sections still apply"
        );
    }

    #[test]
    fn a_name_is_one_word_to_type_back() {
        let name = agent_name(
            "claude-code",
            "DOMAIN\\ann smith",
            "",
            Some(Path::new("/srv/my project; rm -rf ~")),
        );
        assert_eq!(name, "claude-code:DOMAIN_ann_smith@unknown:my_project__rm_-rf__");
        assert!(!default_agent(Harness::Codex).contains(char::is_whitespace));
        assert!(default_agent(Harness::Gemini).starts_with("gemini:"));
    }
}
