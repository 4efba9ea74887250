//! The verifier binary over its pipe, as the dongle drives it: the
//! command-line contract, a code request (hash first, then where it was
//! shown, the code reaching only the human's channel), an approval, and
//! malformed or foreign-version requests refused.

// Tests may panic on what they did not expect; the lint guards the verifier itself.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    clippy::unreachable
)]

use std::{
    io::Write,
    process::{Command, Output, Stdio},
};

use serde_json::{Value, json};

fn verifier(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_safety-dongle-verifier"));
    command.args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    command
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap_or_else(|e| panic!("spawn verifier: {e}"));
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("wait: {e}"))
}

fn events(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn request(kind: &str, channels: Value, command: Value) -> String {
    let mut line = json!({
        "version": 1, "kind": kind, "id": "0b6f1a2e-1111-4222-8333-444455556666", "agent": "coder",
        "tier": "danger_zone", "reason": "denied by policy", "action": "rm -rf /",
        "expires_at": "2026-11-22T12:00:00Z", "timeout_secs": 10, "channels": channels, "command": command,
    })
    .to_string();
    line.push('\n');
    line
}

fn human_script(dir: &std::path::Path, answer: &str) -> String {
    let script = dir.join("human.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ncat > \"{}/seen.json\"\necho {answer}\n", dir.display()),
    )
    .unwrap();
    script.display().to_string()
}

#[test]
fn the_command_line_contract() {
    let version = verifier(&["--version"], "", &[]);
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("safety-dongle-verifier {} (verifier protocol 1)", env!("CARGO_PKG_VERSION"))
    );
    for args in [&[][..], &["--show"], &["--version", "extra"]] {
        let output = verifier(args, "", &[]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(output.stdout.is_empty(), "nothing on stdout for {args:?}");
    }
}

#[test]
fn a_code_request_sends_the_hash_first_and_the_code_only_to_the_human() {
    let dir = tempfile::tempdir().unwrap();
    let script = human_script(dir.path(), "ok");
    let output = verifier(
        &["--stdio"],
        &request("code", json!(["dialog", "notification", "command"]), json!(["/bin/sh", script])),
        &[],
    );
    assert!(output.status.success());
    let events = events(&output);
    assert_eq!(events[0]["event"], "hash", "{events:?}");
    assert_eq!(events[0]["salt"].as_str().map(str::len), Some(32));
    assert_eq!(events[0]["hash"].as_str().map(str::len), Some(64));
    assert_eq!(
        events[1],
        json!({"version": 1, "event": "shown", "channel": "command"}),
        "dialog and notification fail without a display or bus"
    );
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(
        (seen["type"].as_str(), seen["challenge_id"].as_str()),
        (Some("verification_code"), Some("0b6f1a2e-1111-4222-8333-444455556666"))
    );
    let code = seen["code"].as_str().unwrap();
    assert_eq!(code.len(), 31);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stdout.contains(code) && !stdout.contains(&code.replace('-', "")),
        "the code never crosses the pipe"
    );
    assert!(!String::from_utf8_lossy(&output.stderr).contains(&code.replace('-', "")));
}

#[test]
fn an_approval_returns_the_humans_answer() {
    for (answer, decision) in [("approve", "approve"), ("nope", "deny")] {
        let dir = tempfile::tempdir().unwrap();
        let script = human_script(dir.path(), answer);
        let output = verifier(
            &["--stdio"],
            &request("approval", json!(["notification", "command"]), json!(["/bin/sh", script])),
            &[],
        );
        let events = events(&output);
        assert_eq!(events[0]["event"], "shown");
        assert_eq!(events[1], json!({"version": 1, "event": "decision", "decision": decision}));
    }
}

#[test]
fn when_no_channel_works_every_reason_is_reported() {
    let output = verifier(
        &["--stdio"],
        &request("code", json!(["dialog", "notification", "command"]), Value::Null),
        &[],
    );
    let events = events(&output);
    assert_eq!(events[1]["event"], "unshown");
    let errors = events[1]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].as_str().unwrap().starts_with("dialog: no display"));
}

/// A display that is named but refuses connections fails the dialog at
/// once and before it is announced (rfd's GTK thread used to give up
/// silently while the verifier waited forever for it): the next channel
/// shows the request.
#[test]
fn a_display_that_cannot_be_opened_passes_the_request_to_the_next_channel() {
    let dir = tempfile::tempdir().unwrap();
    let script = human_script(dir.path(), "approve");
    let unused_display = ":4093";
    let started = std::time::Instant::now();
    let output = verifier(
        &["--stdio"],
        &request("approval", json!(["dialog", "command"]), json!(["/bin/sh", script])),
        &[("DISPLAY", unused_display)],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the dialog channel waited {:?}",
        started.elapsed()
    );
    let answered = events(&output);
    assert_eq!(
        answered[0],
        json!({"version": 1, "event": "shown", "channel": "command"}),
        "the dialog never claimed to be shown: {answered:?}"
    );
    assert_eq!(answered[1]["decision"], "approve");

    let only_dialog = verifier(
        &["--stdio"],
        &request("code", json!(["dialog"]), Value::Null),
        &[("DISPLAY", unused_display)],
    );
    let unshown = events(&only_dialog);
    assert_eq!(unshown[1]["event"], "unshown", "{unshown:?}");
    assert_eq!(
        unshown[1]["errors"],
        json!([format!("dialog: no display: GTK could not open DISPLAY={unused_display}")])
    );
}

#[test]
fn malformed_and_foreign_requests_are_refused() {
    for bad in
        ["not json\n", "{\"version\":2,\"kind\":\"code\"}\n", "{\"version\":1,\"kind\":\"code\"}\n"]
    {
        let output = verifier(&["--stdio"], bad, &[]);
        assert_eq!(output.status.code(), Some(2), "{bad}");
        assert_eq!(events(&output)[0]["event"], "error", "{bad}");
    }
    let huge = format!("{}\n", "x".repeat(70 * 1024));
    let output = verifier(&["--stdio"], &huge, &[]);
    assert_eq!(events(&output)[0]["event"], "error");
}

#[test]
fn the_command_channel_gets_what_a_person_is_shown() {
    let dir = tempfile::tempdir().unwrap();
    let script = human_script(dir.path(), "deny");
    let mut line: Value =
        serde_json::from_str(&request("approval", json!(["command"]), json!(["/bin/sh", script])))
            .unwrap();
    line["agent"] = json!("coder\u{1b}]0;approved\u{7}");
    line["action"] = json!(format!("ls \u{202e}fdp.exe\n\u{0440}m -rf ~ {}", "x".repeat(2_000)));
    let output = verifier(&["--stdio"], &format!("{line}\n"), &[]);
    assert_eq!(events(&output)[0]["event"], "shown");
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("seen.json")).unwrap())
            .unwrap();
    assert_eq!(seen["agent"], "coder«ESC»]0;approved«BEL»");
    let action = seen["action"].as_str().unwrap();
    assert!(action.starts_with("ls «U+202E»fdp.exe«LF»«U+0440»m -rf ~ xxx"), "{action}");
    assert!(
        action.ends_with(" more characters not shown»"),
        "a long action is cut and says so: {action}"
    );
    assert!(
        action.chars().filter(|c| !c.is_ascii()).all(|c| c == '«' || c == '»'),
        "only markers are outside ASCII: {action}"
    );
}
