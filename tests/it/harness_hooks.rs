//! `safety-dongle hook copilot|droid|cursor|opencode` through the real
//! binary: the payloads recorded from each real harness (Cursor's written
//! from its reference) are replayed and each answer's decision and format
//! checked, a payload the hook cannot read and the hook's own deadline are
//! refusals in the harness's format, and a block raised through one
//! harness does not block another's calls.

use std::{path::Path, process::Stdio};

use serde_json::Value;

use super::{
    hook::{run_hook, unreachable_humans},
    support::{dongle_command, scratch_dir},
};

const HARNESSES: [&str; 4] = ["copilot", "droid", "cursor", "opencode"];

fn fixture(harness: &str, case: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/hook-payloads/{harness}/{case}.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// `continue` or `deny`, checking the answer is the harness's own format,
/// a refusal carries its reason, and nothing else (`ask`, `allow`) appears.
fn decision(harness: &str, answer: &Value) -> &'static str {
    let reason = |value: &Value| value.as_str().is_some_and(|r| r.starts_with("safety-dongle"));
    let continued = match harness {
        "opencode" => answer == &serde_json::json!({"decision": "continue"}),
        _ => answer == &serde_json::json!({}),
    };
    if continued {
        return "continue";
    }
    let denied = match harness {
        "copilot" => {
            answer["permissionDecision"] == "deny" && reason(&answer["permissionDecisionReason"])
        }
        "droid" => {
            let specific = &answer["hookSpecificOutput"];
            specific["hookEventName"] == "PreToolUse"
                && specific["permissionDecision"] == "deny"
                && reason(&specific["permissionDecisionReason"])
        }
        "cursor" => {
            answer["permission"] == "deny"
                && reason(&answer["agent_message"])
                && reason(&answer["user_message"])
        }
        "opencode" => answer["decision"] == "deny" && reason(&answer["reason"]),
        other => panic!("no harness {other}"),
    };
    assert!(denied, "{harness}: neither a continue nor a refusal in its format: {answer}");
    "deny"
}

#[tokio::test]
async fn recorded_payloads_of_each_harness_get_the_expected_decisions() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let rows = [
        ("copilot", "camel-shell", "continue"),
        ("copilot", "camel-write", "deny"),
        ("copilot", "camel-edit", "continue"),
        ("copilot", "camel-read", "continue"),
        ("copilot", "camel-mcp", "continue"),
        ("copilot", "camel-patch", "deny"),
        ("copilot", "pascal-shell", "continue"),
        ("copilot", "pascal-write", "deny"),
        ("copilot", "pascal-edit", "continue"),
        ("copilot", "pascal-read", "continue"),
        ("copilot", "pascal-mcp", "continue"),
        ("copilot", "pascal-patch", "deny"),
        ("droid", "shell", "continue"),
        ("droid", "write", "deny"),
        ("droid", "edit", "continue"),
        ("droid", "read", "continue"),
        ("droid", "mcp", "continue"),
        ("droid", "patch", "deny"),
        ("cursor", "shell", "deny"),
        ("cursor", "write", "deny"),
        ("cursor", "edit", "continue"),
        ("cursor", "read", "deny"),
        ("cursor", "mcp", "continue"),
        ("opencode", "shell", "continue"),
        ("opencode", "write", "deny"),
        ("opencode", "edit", "continue"),
        ("opencode", "read", "continue"),
        ("opencode", "mcp", "continue"),
        ("opencode", "patch", "deny"),
    ];
    let mut failures = Vec::new();
    for (index, (harness, case, expected)) in rows.into_iter().enumerate() {
        let agent = format!("replay-{index}");
        let answer = run_hook(
            &["hook", harness, "--config", &config, "--agent", &agent],
            &fixture(harness, case),
        )
        .await;
        if decision(harness, &answer) != expected {
            failures.push(format!("{harness} {case}: expected {expected}, got {answer}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn a_payload_the_hook_cannot_read_is_refused_in_the_harness_format() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let unreadable = [
        serde_json::json!("not a call"),
        serde_json::json!({"sessionId": "s", "toolName": "create", "toolArgs": {"file_text": "x"}}),
        serde_json::json!({"tool_name": "Execute", "tool_input": {"command": ["rm", "-rf", "~"]}}),
        serde_json::json!({"hook_event_name": "preToolUse", "tool_name": "Terminal", "tool_input": {"command": "rm -rf ~"}}),
        serde_json::json!({"tool": "apply_patch", "args": {"patchText": "*** Begin Patch\nrm -rf ~\n*** End Patch"}}),
    ];
    for harness in HARNESSES {
        for payload in &unreadable {
            let answer = run_hook(&["hook", harness, "--config", &config], payload).await;
            assert_eq!(decision(harness, &answer), "deny", "{harness}: {payload}");
        }
    }
}

/// A harness that kills a slow hook runs the tool (Copilot, Droid, and
/// Cursor without failClosed), so the hook refuses at its own deadline.
#[tokio::test]
async fn each_harness_gets_a_refusal_at_the_hooks_deadline() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    for harness in HARNESSES {
        let mut child = dongle_command(&["hook", harness, "--config", &config, "--timeout", "1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The payload never ends: stdin stays open.
        let _stdin = child.stdin.take();
        let output =
            tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
                .await
                .expect("the hook ends at its deadline")
                .unwrap();
        let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(decision(harness, &answer), "deny", "{harness}: {answer}");
        assert!(answer.to_string().contains("deadline of 1 s"), "{harness}: {answer}");
    }
}

/// Each harness's calls go to an agent of its own name, so a block raised
/// through one harness leaves the others' calls to the policy.
#[tokio::test]
async fn a_block_raised_through_one_harness_does_not_block_another() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let hook = |harness: &'static str| ["hook", harness, "--config", config.as_str()];
    let planted = run_hook(&hook("copilot"), &fixture("copilot", "camel-write")).await;
    assert_eq!(decision("copilot", &planted), "deny");
    let benign = fixture("copilot", "camel-edit");
    let blocked = run_hook(&hook("copilot"), &benign).await;
    assert_eq!(decision("copilot", &blocked), "deny", "the block holds for Copilot's next call");
    assert!(blocked.to_string().contains("'copilot:"), "named by its harness: {blocked}");
    for (harness, case) in [("droid", "edit"), ("opencode", "edit"), ("cursor", "edit")] {
        let answer = run_hook(&hook(harness), &fixture(harness, case)).await;
        assert_eq!(decision(harness, &answer), "continue", "{harness}: {answer}");
    }
}
