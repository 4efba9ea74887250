//! Claude Code's PreToolUse hook: the payload it sends, the action text the
//! policy sees for each tool, and the answer it expects.
//!
//! The action text is what a careful agent would have reported: the
//! command for `Bash`, `write_file <path>` for `Write`/`Edit`/`MultiEdit`,
//! `read_file <path>` for `Read`, the URL for `WebFetch`, and
//! `<server>__<tool> <canonical arguments>` for MCP tools, with any
//! verification code redacted (the agent's own `verify_challenge` call to
//! the dongle passes through here too, and action texts are stored).
//!
//! A `Write`, `Edit` or `MultiEdit` also gives the write it makes
//! ([`file_write`]), so a file that runs later is judged by its content
//! (`analysis::planted`); the action text stays the path, which is what
//! is audited and shown to a human.
//!
//! The answer never loosens Claude Code's own permissions: when the policy
//! lets an action through, or a human approved it through the verifier,
//! the hook states no decision and Claude Code's rules (and prompts) apply
//! as before; otherwise it answers `deny` with the reason.

use std::fmt::Display;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    analysis::{Change, FileWrite, Replace},
    gate::GateDecision,
    protocol::canonical::canonical,
    redact::redact_arguments,
};

pub use super::harness::Attempt;

/// The longest payload read.
pub const MAX_PAYLOAD_BYTES: usize = 1024 * 1024;
// A hooked call must reach a human whole when one is asked about it.
const _: () = assert!(MAX_PAYLOAD_BYTES <= verifier_protocol::MAX_ACTION_BYTES);

/// The fields of a PreToolUse payload the hook uses.
#[derive(Debug, Clone, Deserialize)]
pub struct PreToolUse {
    pub tool_name: String,
    #[serde(default)]
    pub tool_input: Value,
    #[serde(default)]
    pub session_id: String,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// Why a hook payload was not read.
#[derive(Debug, thiserror::Error)]
pub enum PayloadError {
    #[error("the hook payload is larger than {MAX_PAYLOAD_BYTES} bytes")]
    TooLarge,
    #[error("the hook payload is not a PreToolUse event: {0}")]
    NotPreToolUse(#[from] serde_json::Error),
    /// A tool the hook reads by its fields sent a field of another type:
    /// judged as empty it would pass unseen, so it is refused.
    #[error(
        "the {tool} call's input has {field} {found}, not {expected}, so what it does cannot be judged"
    )]
    UnexpectedInput { tool: String, field: String, found: &'static str, expected: &'static str },
}

/// Reads a payload; a tool the hook knows must carry its fields in the
/// types it reads them as.
pub fn parse(bytes: &[u8]) -> Result<PreToolUse, PayloadError> {
    if bytes.len() > MAX_PAYLOAD_BYTES {
        return Err(PayloadError::TooLarge);
    }
    let call: PreToolUse = serde_json::from_slice(bytes)?;
    check_known_input(&call)?;
    Ok(call)
}

/// What a field of a known tool's input must hold.
#[derive(Debug, Clone, Copy)]
enum Field {
    Text,
    OptionalText,
    OptionalFlag,
    /// `MultiEdit`'s list of `{old_string, new_string, replace_all?}`.
    Edits,
}

/// The fields each tool the hook reads by name must carry: the ones
/// [`action_text`] and [`file_write`] read.
const KNOWN_TOOLS: [(&str, &[(&str, Field)]); 11] = [
    ("Bash", &[("command", Field::Text)]),
    ("Write", &[("file_path", Field::Text), ("content", Field::Text)]),
    (
        "Edit",
        &[
            ("file_path", Field::Text),
            ("old_string", Field::Text),
            ("new_string", Field::Text),
            ("replace_all", Field::OptionalFlag),
        ],
    ),
    ("MultiEdit", &[("file_path", Field::Text), ("edits", Field::Edits)]),
    ("NotebookEdit", &[("notebook_path", Field::Text), ("new_source", Field::OptionalText)]),
    ("Read", &[("file_path", Field::Text)]),
    ("WebFetch", &[("url", Field::Text)]),
    ("WebSearch", &[("query", Field::Text)]),
    ("Grep", &[("pattern", Field::Text), ("path", Field::OptionalText)]),
    ("Glob", &[("pattern", Field::Text), ("path", Field::OptionalText)]),
    ("LS", &[("path", Field::Text)]),
];

const EDIT_FIELDS: [(&str, Field); 3] = [
    ("old_string", Field::Text),
    ("new_string", Field::Text),
    ("replace_all", Field::OptionalFlag),
];

fn check_known_input(call: &PreToolUse) -> Result<(), PayloadError> {
    let Some((tool, fields)) = KNOWN_TOOLS.iter().find(|(tool, _)| *tool == call.tool_name) else {
        return Ok(());
    };
    check_fields(tool, "", &call.tool_input, fields)
}

fn check_fields(
    tool: &str,
    prefix: &str,
    input: &Value,
    fields: &[(&str, Field)],
) -> Result<(), PayloadError> {
    let unexpected = |field: String, value: Option<&Value>, expected: &'static str| {
        PayloadError::UnexpectedInput {
            tool: tool.to_owned(),
            field,
            found: type_name(value),
            expected,
        }
    };
    let Some(object) = input.as_object() else {
        let field = if prefix.is_empty() { "tool_input".to_owned() } else { prefix.to_owned() };
        return Err(unexpected(field, Some(input), "an object"));
    };
    for (name, field) in fields {
        let value = object.get(*name);
        let at = || if prefix.is_empty() { (*name).to_owned() } else { format!("{prefix}.{name}") };
        match (field, value) {
            (Field::Text, Some(Value::String(_)))
            | (Field::OptionalText, None | Some(Value::String(_)))
            | (Field::OptionalFlag, None | Some(Value::Bool(_))) => {}
            (Field::Text | Field::OptionalText, _) => {
                return Err(unexpected(at(), value, "a string"));
            }
            (Field::OptionalFlag, _) => return Err(unexpected(at(), value, "true or false")),
            (Field::Edits, Some(Value::Array(edits))) => {
                for (i, edit) in edits.iter().enumerate() {
                    check_fields(tool, &format!("{}[{i}]", at()), edit, &EDIT_FIELDS)?;
                }
            }
            (Field::Edits, _) => return Err(unexpected(at(), value, "a list of edits")),
        }
    }
    Ok(())
}

fn type_name(value: Option<&Value>) -> &'static str {
    match value {
        None => "missing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "a list",
        Some(Value::Object(_)) => "an object",
    }
}

fn text<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The action the policy evaluates for a tool call.
pub fn action_text(call: &PreToolUse) -> String {
    let input = &call.tool_input;
    match call.tool_name.as_str() {
        "Bash" => text(input, "command").to_owned(),
        "Write" | "Edit" | "MultiEdit" => format!("write_file {}", text(input, "file_path")),
        "NotebookEdit" => format!("write_file {}", text(input, "notebook_path")),
        "Read" => format!("read_file {}", text(input, "file_path")),
        "WebFetch" => text(input, "url").to_owned(),
        "WebSearch" => format!("web_search {}", text(input, "query")),
        "Grep" => format!("search_files {} {}", text(input, "pattern"), text(input, "path"))
            .trim_end()
            .to_owned(),
        "Glob" => format!("list_files {} {}", text(input, "pattern"), text(input, "path"))
            .trim_end()
            .to_owned(),
        "LS" => format!("list_files {}", text(input, "path")),
        name => {
            let arguments = canonical(&redact_arguments(input));
            match name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__")) {
                Some((server, tool)) => format!("{server}__{tool} {arguments}"),
                None => format!("{name} {arguments}"),
            }
        }
    }
}

/// The write a `Write`, `Edit` or `MultiEdit` makes.
pub fn file_write(call: &PreToolUse) -> Option<FileWrite> {
    let input = &call.tool_input;
    let path = text(input, "file_path").to_owned();
    let edit = |edit: &Value| Replace {
        old: text(edit, "old_string").to_owned(),
        new: text(edit, "new_string").to_owned(),
        all: edit.get("replace_all").and_then(Value::as_bool).unwrap_or(false),
    };
    let change = match call.tool_name.as_str() {
        "Write" => Change::Whole(text(input, "content").to_owned()),
        "Edit" => Change::Edits(vec![edit(input)]),
        "MultiEdit" => Change::Edits(
            input
                .get("edits")
                .and_then(Value::as_array)
                .map(|edits| edits.iter().map(edit).collect())
                .unwrap_or_default(),
        ),
        _ => return None,
    };
    (!path.is_empty()).then_some(FileWrite { path, change })
}

/// Claude Code's hook output for a decision. A human's Approve states no
/// decision either: `allow` would also skip Claude Code's own permission
/// prompt (the one showing a write's content), so its rules and prompts
/// apply as for any call the policy lets through.
pub fn output(decision: &GateDecision) -> Value {
    match decision {
        GateDecision::Continue { .. } | GateDecision::HumanApproved(_) => json!({}),
        GateDecision::Deny { reason, .. } => deny(&format!("safety-dongle: {reason}")),
    }
}

/// The hook's answer in Claude Code's format, failing closed whatever
/// happens while `decide` runs (`harness::answer_failing_closed`).
pub fn answer_failing_closed<E: Display>(
    decide: impl FnOnce(&mut Option<Attempt>) -> Result<Value, E>,
) -> Value {
    super::harness::answer_failing_closed(deny, decide)
}

/// A refusal, also for the hook's own failures (fail closed).
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

    fn call(tool: &str, input: Value) -> PreToolUse {
        PreToolUse { tool_name: tool.into(), tool_input: input, session_id: "s".into(), cwd: None }
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
            ("TodoWrite", json!({"todos": []}), r#"TodoWrite {"todos":[]}"#),
        ];
        for (tool, input, expected) in rows {
            assert_eq!(action_text(&call(tool, input)), expected, "{tool}");
        }
    }

    #[test]
    fn writes_and_edits_give_the_change_they_make() {
        let write =
            file_write(&call("Write", json!({"file_path": "Makefile", "content": "all:\n\tmake"})))
                .unwrap();
        assert_eq!(
            write,
            FileWrite { path: "Makefile".into(), change: Change::Whole("all:\n\tmake".into()) }
        );
        let edits =
            file_write(&call("MultiEdit", json!({"file_path": "a.sh", "edits": [{"old_string": "a", "new_string": "b", "replace_all": true}]})))
                .unwrap();
        assert_eq!(
            edits.change,
            Change::Edits(vec![Replace { old: "a".into(), new: "b".into(), all: true }])
        );
        assert_eq!(file_write(&call("Read", json!({"file_path": "a.sh"}))), None);
        assert_eq!(file_write(&call("Write", json!({"content": "x"}))), None);
    }

    #[test]
    fn continue_and_a_humans_approve_defer_to_claude_codes_own_rules() {
        assert_eq!(output(&GateDecision::Continue { factors: vec![] }), json!({}));
        assert_eq!(
            output(&GateDecision::HumanApproved(crate::gate::HumanApproval::for_tests())),
            json!({})
        );
        let denied = output(&GateDecision::Deny { reason: "no".into(), factors: vec![] });
        assert_eq!(denied["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(denied["hookSpecificOutput"]["hookEventName"], "PreToolUse");
        assert!(matches!(parse(b"not json"), Err(PayloadError::NotPreToolUse(_))));
        assert!(matches!(parse(&vec![b' '; MAX_PAYLOAD_BYTES + 1]), Err(PayloadError::TooLarge)));
    }

    fn payload(tool: &str, input: Value) -> Vec<u8> {
        json!({"session_id": "s", "tool_name": tool, "tool_input": input}).to_string().into_bytes()
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
        for (tool, fields) in KNOWN_TOOLS {
            let mut good = serde_json::Map::new();
            for (name, field) in fields {
                good.insert(
                    (*name).to_owned(),
                    match field {
                        Field::Text | Field::OptionalText => json!("x"),
                        Field::OptionalFlag => json!(false),
                        Field::Edits => json!([{"old_string": "a", "new_string": "b"}]),
                    },
                );
            }
            assert!(parse(&payload(tool, Value::Object(good.clone()))).is_ok(), "{tool}");
            for (name, field) in fields {
                for value in &wrong {
                    if matches!((field, value), (Field::OptionalFlag, Value::Bool(_))) {
                        continue;
                    }
                    let mut input = good.clone();
                    input.insert((*name).to_owned(), value.clone());
                    let error = parse(&payload(tool, Value::Object(input)))
                        .expect_err(&format!("{tool}.{name} = {value}"));
                    assert!(error.to_string().contains(name), "{error}");
                }
            }
            assert!(
                matches!(
                    parse(&payload(tool, json!("rm -rf ~"))),
                    Err(PayloadError::UnexpectedInput { .. })
                ),
                "{tool}"
            );
        }
        let nested = parse(&payload(
            "MultiEdit",
            json!({"file_path": "a", "edits": [{"old_string": "a", "new_string": 1}]}),
        ))
        .unwrap_err();
        assert!(nested.to_string().contains("edits[0].new_string"), "{nested}");
        // Tools the hook does not read by field are judged on their whole input.
        assert!(parse(&payload("mcp__shell__run", json!({"command": ["rm", "-rf", "~"]}))).is_ok());
    }
}
