//! Codex CLI's PreToolUse hook: Claude Code's payload shape, its own tool
//! names, and Claude Code's `hookSpecificOutput` answer.
//!
//! Codex runs the hook for `Bash` (its shell tool, whatever the model
//! called it), `apply_patch` and MCP tools (`mcp__<server>__<tool>`). A
//! patch arrives as a command holding the `*** Begin Patch` envelope,
//! under `Bash` or `apply_patch`: both are read as the files it adds,
//! changes, moves and deletes (`hook::patch`), never as a command line.
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
