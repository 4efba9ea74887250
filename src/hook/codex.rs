//! Codex CLI's PreToolUse hook: Claude Code's payload shape, its own tool
//! names, and Claude Code's `hookSpecificOutput` answer.
//!
//! Codex runs the hook for `Bash` (its shell tool, whatever the model
//! called it), `apply_patch` and MCP tools (`mcp__<server>__<tool>`). A
//! patch arrives as a command holding the `*** Begin Patch` envelope,
//! under `Bash` or `apply_patch`: both are read as the files it adds,
//! changes, moves and deletes (`analysis::envelope`), never as a command line.
//! Codex reads a deny in `hookSpecificOutput` on standard output with
//! exit 0; to defer, the hook prints nothing.

use crate::hook::{
    answer::{Reply, Verdict},
    claude_code,
    harness::Adapter,
    reading::{Kind, Tool, Vocabulary, mcp_double_underscore},
};

/// How the hook speaks Codex.
pub const ADAPTER: Adapter = Adapter {
    envelope: claude_code::envelope,
    vocabulary: Vocabulary { tools: &TOOLS, mcp: mcp_double_underscore },
    reply,
    project_variable: None,
};

/// Codex's tools the hook reads by name.
const TOOLS: [Tool; 2] = [
    Tool { name: "Bash", kind: Kind::Shell { command: "command" } },
    Tool { name: "apply_patch", kind: Kind::Patch { envelope: "command" } },
];

/// Codex's answer for a verdict.
fn reply(verdict: &Verdict) -> Reply {
    match verdict {
        Verdict::Defer => Reply { stdout: None, stderr: None, exit_code: 0 },
        Verdict::Deny(reason) => {
            Reply { stdout: Some(claude_code::deny(reason)), stderr: None, exit_code: 0 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Change, FileWrite};
    use crate::hook::harness::Harness;

    /// Payloads Codex 0.171.0 sent its hook, recorded from the real CLI.
    #[test]
    fn recorded_payloads_read_as_the_command_and_the_patchs_files() {
        let (call, reading) = ADAPTER.read_recorded(Harness::Codex, "exec-command");
        assert_eq!(reading.action, "echo hi > ran.txt");
        assert_eq!(call.cwd.as_deref(), Some("/tmp/tmpnabcmvxt/proj"));
        assert!(reading.writes.is_empty());

        let (_, reading) = ADAPTER.read_recorded(Harness::Codex, "apply-patch-add-file");
        assert_eq!(reading.action, "write_file hook.sh");
        assert_eq!(
            reading.writes,
            vec![FileWrite {
                path: "hook.sh".into(),
                change: Change::Whole("#!/bin/sh\necho x\n".into())
            }]
        );
    }

    #[test]
    fn a_deny_is_hook_specific_output_and_defer_says_nothing() {
        let denied = reply(&Verdict::Deny("no".into()));
        assert_eq!(
            denied.stdout.as_ref().map(|out| &out["hookSpecificOutput"]["permissionDecision"]),
            Some(&serde_json::json!("deny"))
        );
        assert_eq!(reply(&Verdict::Defer), Reply { stdout: None, stderr: None, exit_code: 0 });
    }
}
