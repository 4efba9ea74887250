//! Claude Code's PreToolUse hook: the payload it sends, its tools as one
//! table of the shared reading (`hook::reading`), and the answer it expects.
//!
//! The payload is `{session_id, tool_name, tool_input, cwd}`, a shape
//! Codex, Gemini CLI and Factory Droid copied ([`envelope`]). `Bash` is a
//! command, `Write`/`Edit`/`MultiEdit` writes with their content,
//! `NotebookEdit` a write judged by its path, `Read` a read, `WebFetch`
//! its URL, and `mcp__<server>__<tool>` an MCP call.
//!
//! Claude Code reads a deny as `hookSpecificOutput.permissionDecision`
//! on standard output with exit 0; to defer, the hook answers `{}`.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::hook::{
    answer::{Reply, Verdict},
    harness::Adapter,
    reading::{Kind, PayloadError, Tool, ToolCall, Vocabulary, mcp_double_underscore},
};

/// How the hook speaks Claude Code.
pub const ADAPTER: Adapter = Adapter {
    envelope,
    vocabulary: Vocabulary { tools: &TOOLS, mcp: mcp_double_underscore },
    reply,
    project_variable: Some("CLAUDE_PROJECT_DIR"),
};

/// The fields of a PreToolUse payload the hook uses.
#[derive(Debug, Clone, Deserialize)]
struct PreToolUse {
    tool_name: String,
    #[serde(default)]
    tool_input: Value,
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
}

/// The call in a Claude Code style payload.
pub fn envelope(bytes: &[u8]) -> Result<ToolCall, PayloadError> {
    let call: PreToolUse = serde_json::from_slice(bytes)?;
    Ok(ToolCall {
        tool: call.tool_name,
        input: call.tool_input,
        session: call.session_id,
        cwd: call.cwd,
    })
}

/// Claude Code's tools the hook reads by name.
pub const TOOLS: [Tool; 11] = [
    Tool { name: "Bash", kind: Kind::Shell { command: "command" } },
    Tool { name: "Write", kind: Kind::Write { path: "file_path", content: "content" } },
    Tool { name: "Edit", kind: EDIT },
    Tool {
        name: "MultiEdit",
        kind: Kind::Edits {
            path: "file_path",
            edits: "edits",
            old: "old_string",
            new: "new_string",
            all: "replace_all",
        },
    },
    Tool {
        name: "NotebookEdit",
        kind: Kind::WritesPath { path: "notebook_path", content: Some("new_source") },
    },
    Tool { name: "Read", kind: Kind::Read { path: "file_path" } },
    Tool { name: "WebFetch", kind: Kind::Fetch { url: "url" } },
    Tool { name: "WebSearch", kind: Kind::WebSearch { query: "query" } },
    Tool {
        name: "Grep",
        kind: Kind::Search { verb: "search_files", pattern: "pattern", path: "path" },
    },
    Tool {
        name: "Glob",
        kind: Kind::Search { verb: "list_files", pattern: "pattern", path: "path" },
    },
    Tool { name: "LS", kind: Kind::List { path: "path" } },
];

/// Claude Code's `Edit`, whose shape other harnesses copied.
pub const EDIT: Kind = Kind::Edit {
    path: "file_path",
    old: "old_string",
    new: "new_string",
    all: Some("replace_all"),
};

/// Claude Code's answer for a verdict.
pub fn reply(verdict: &Verdict) -> Reply {
    let stdout = match verdict {
        Verdict::Defer => json!({}),
        Verdict::Deny(reason) => deny(reason),
    };
    Reply { stdout: Some(stdout), stderr: None, exit_code: 0 }
}

/// `hookSpecificOutput` denying the call: Claude Code's, Codex's and
/// Droid's way to refuse it.
pub fn deny(reason: &str) -> Value {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        analysis::{Change, FileWrite, Replace},
        hook::reading::{Field, MAX_PAYLOAD_BYTES, Reading},
    };

    fn payload(tool: &str, input: Value) -> Vec<u8> {
        json!({"session_id": "s", "tool_name": tool, "tool_input": input}).to_string().into_bytes()
    }

    fn read(tool: &str, input: Value) -> Result<Reading, PayloadError> {
        ADAPTER.read(&payload(tool, input)).map(|(_, reading)| reading)
    }

    fn action_text(tool: &str, input: Value) -> String {
        read(tool, input).unwrap().action
    }

    /// One row per tool: the payload's tool and input, and the action text.
    #[test]
    fn each_tool_becomes_the_action_an_agent_would_report() {
        let rows = [
            ("Bash", json!({"command": "sudo rm -rf /", "description": "x"}), "sudo rm -rf /"),
            (
                "Write",
                json!({"file_path": "/repo/a.rs", "content": "..."}),
                "write_file /repo/a.rs",
            ),
            (
                "Edit",
                json!({"file_path": "/repo/a.rs", "old_string": "a", "new_string": "b"}),
                "write_file /repo/a.rs",
            ),
            ("MultiEdit", json!({"file_path": "/repo/b.rs", "edits": []}), "write_file /repo/b.rs"),
            ("Read", json!({"file_path": "/home/u/.ssh/id_rsa"}), "read_file /home/u/.ssh/id_rsa"),
            (
                "WebFetch",
                json!({"url": "https://example.com", "prompt": "p"}),
                "https://example.com",
            ),
            (
                "mcp__github__create_issue",
                json!({"title": "t", "repo": "r"}),
                r#"github__create_issue {"repo":"r","title":"t"}"#,
            ),
            ("Grep", json!({"pattern": "TODO", "path": "src"}), "search_files TODO src"),
            (
                "Grep",
                json!({"pattern": "id_rsa|.env; rm", "path": "my docs"}),
                "search_files 'id_rsa|.env; rm' 'my docs'",
            ),
            ("Grep", json!({"pattern": "fn main"}), "search_files 'fn main'"),
            ("TodoWrite", json!({"todos": []}), r#"TodoWrite {"todos":[]}"#),
        ];
        for (tool, input, expected) in rows {
            assert_eq!(action_text(tool, input), expected, "{tool}");
        }
    }

    #[test]
    fn writes_and_edits_give_the_change_they_make() {
        let write = read("Write", json!({"file_path": "Makefile", "content": "all:\n\tmake"}))
            .unwrap()
            .writes;
        assert_eq!(
            write,
            vec![FileWrite {
                path: "Makefile".into(),
                change: Change::Whole("all:\n\tmake".into())
            }]
        );
        let edits =
            read("MultiEdit", json!({"file_path": "a.sh", "edits": [{"old_string": "a", "new_string": "b", "replace_all": true}]}))
                .unwrap()
                .writes;
        assert_eq!(
            edits.first().map(|write| &write.change),
            Some(&Change::Edits(vec![Replace { old: "a".into(), new: "b".into(), all: true }]))
        );
        assert_eq!(read("Read", json!({"file_path": "a.sh"})).unwrap().writes, vec![]);
        assert!(matches!(
            read("Write", json!({"file_path": " ", "content": "x"})),
            Err(PayloadError::WriteWithoutPath { .. })
        ));
    }

    #[test]
    fn continue_defers_to_claude_codes_own_rules_and_a_deny_is_its_own_format() {
        assert_eq!(
            reply(&Verdict::Defer),
            Reply { stdout: Some(json!({})), stderr: None, exit_code: 0 }
        );
        let denied = reply(&Verdict::Deny("no".into()));
        assert_eq!(denied.exit_code, 0);
        let denied = denied.stdout.unwrap();
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(denied["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert!(matches!(ADAPTER.read(b"not json"), Err(PayloadError::NotPreToolUse(_))));
        assert!(matches!(
            ADAPTER.read(&vec![b' '; MAX_PAYLOAD_BYTES + 1]),
            Err(PayloadError::TooLarge)
        ));
    }

    /// Every field a known tool is read by, in every wrong type, is
    /// refused with the field named; the right types read.
    #[test]
    fn a_known_tool_whose_fields_have_other_types_is_refused() {
        let wrong = [
            json!(null),
            json!(7),
            json!(true),
            json!(["rm", "-rf", "~"]),
            json!({"command": "rm -rf ~"}),
        ];
        for Tool { name: tool, kind } in TOOLS {
            let fields = kind.fields();
            let mut good = serde_json::Map::new();
            for (name, field) in &fields {
                good.insert(
                    (*name).to_owned(),
                    match field {
                        Field::Text | Field::OptionalText => json!("x"),
                        Field::OptionalFlag => json!(false),
                        Field::Edits => json!([{"old_string": "a", "new_string": "b"}]),
                    },
                );
            }
            assert!(read(tool, Value::Object(good.clone())).is_ok(), "{tool}");
            for (name, field) in &fields {
                for value in &wrong {
                    if matches!((field, value), (Field::OptionalFlag, Value::Bool(_))) {
                        continue;
                    }
                    let mut input = good.clone();
                    input.insert((*name).to_owned(), value.clone());
                    let error = read(tool, Value::Object(input))
                        .expect_err(&format!("{tool}.{name} = {value}"));
                    assert!(error.to_string().contains(name), "{error}");
                }
            }
            assert!(
                matches!(read(tool, json!("rm -rf ~")), Err(PayloadError::UnexpectedInput { .. })),
                "{tool}"
            );
        }
        let nested = read(
            "MultiEdit",
            json!({"file_path": "a", "edits": [{"old_string": "a", "new_string": 1}]}),
        )
        .unwrap_err();
        assert!(nested.to_string().contains("edits[0].new_string"), "{nested}");
        // MCP tools are judged on their whole input.
        assert!(read("mcp__shell__run", json!({"command": ["rm", "-rf", "~"]})).is_ok());
    }

    /// A tool nobody listed that carries a command is refused, not judged
    /// as an inert call; one without a command is judged on its input.
    #[test]
    fn an_unknown_tool_with_a_command_is_refused() {
        for key in ["command", "cmd", "script"] {
            let error = read("RunInTerminal", json!({key: "rm -rf ~"})).unwrap_err();
            assert!(
                matches!(&error, PayloadError::UnknownCommandTool { tool, key: k } if tool == "RunInTerminal" && k == key),
                "{error}"
            );
        }
        assert!(read("Task", json!({"prompt": "look around"})).is_ok());
    }
}
