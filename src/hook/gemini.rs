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
