//! The canary: run the human flows, then search every byte the agent or a
//! log could see, and every process's argv and environment while requests
//! are showing. The code must be in none of them: not in MCP output,
//! stderr, the state files, `/proc/*/cmdline` or `/proc/*/environ`. Only
//! the human's channel (here, what the scripted human saved) has it. The
//! same holds with every log level switched on, and when the agent's own
//! `verify_challenge` call passes through Claude Code's hook, which
//! evaluates and audits every tool call.

use std::{path::Path, process::Stdio, time::Duration};

use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::{
    humans::{Answer, Setup, confirm, notified_id, state_files, verify},
    support::{ask, dongle_command, execute, step},
};

/// Every form a code could leak in: as shown, canonical, lower case.
fn forms(code: &str) -> Vec<String> {
    let canonical = code.replace('-', "");
    vec![code.to_owned(), canonical.clone(), canonical.to_lowercase(), code.to_lowercase()]
}

fn assert_absent(haystack: &[u8], codes: &[String], place: &str) {
    for code in codes {
        for form in forms(code) {
            let found = haystack.windows(form.len()).any(|w| w == form.as_bytes());
            assert!(!found, "a verification code leaked into {place}");
        }
    }
}

/// Scans argv and environment of every process we may read.
fn assert_absent_from_processes(codes: &[String]) -> usize {
    let mut scanned = 0;
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        for file in ["cmdline", "environ"] {
            if let Ok(bytes) = std::fs::read(entry.path().join(file)) {
                assert_absent(
                    &bytes,
                    codes,
                    &format!("/proc/{}/{file}", entry.file_name().to_string_lossy()),
                );
                scanned += 1;
            }
        }
    }
    scanned
}

#[tokio::test]
async fn no_code_appears_anywhere_the_agent_or_a_log_could_see() {
    // The human keeps each approval open for a while, so requests are
    // showing while /proc is scanned.
    let human = Setup::new(Answer::ApproveAfter(2), 300);
    let mut raw = human.start().await;
    let mut mcp_output = Vec::new();
    let mut record =
        |value: &serde_json::Value| mcp_output.extend_from_slice(value.to_string().as_bytes());

    // The hard block comes last: it taints this session for every agent.
    ask(&mut raw, execute(3, "canary-2")).await;
    let pause = ask(&mut raw, step(4, "canary-2", "twine upload dist/*")).await;
    record(&pause);
    let verify_tier = notified_id(&pause["data"], "autonomy_pause", "verificationId");
    ask(&mut raw, execute(5, "canary-3")).await;
    let approval_pause = ask(&mut raw, step(6, "canary-3", "git push origin main")).await;
    record(&approval_pause);
    let approval = notified_id(&approval_pause["data"], "autonomy_pause", "approvalId");
    record(&ask(&mut raw, execute(1, "canary")).await);
    let stop = ask(&mut raw, step(2, "canary", "sudo rm -rf /")).await;
    record(&stop);
    let danger = notified_id(&stop["data"], "danger_zone", "verificationId");

    let codes = vec![human.code_for(&danger), human.code_for(&verify_tier)];
    human.shown(&approval);
    // While the approval request is still open (the verifier and the human
    // script are running), no process carries a code.
    let scanned = assert_absent_from_processes(&codes);
    assert!(scanned > 10, "scanned only {scanned} /proc entries");

    record(&ask(&mut raw, verify(7, &danger, "00000-00000-00000-00000-00000-0")).await);
    record(&ask(&mut raw, verify(8, &verify_tier, &codes[1])).await);
    record(&ask(&mut raw, confirm(9, &approval)).await);
    record(&ask(&mut raw, tool_introspect()).await);
    assert_absent_from_processes(&codes);

    raw.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(10), raw.child.wait()).await;
    let mut stderr = Vec::new();
    if let Some(mut err) = raw.child.stderr.take() {
        use tokio::io::AsyncReadExt;
        let _ = err.read_to_end(&mut stderr).await;
    }
    assert_absent(&mcp_output, &codes, "MCP output");
    assert_absent(&stderr, &codes, "the dongle's stderr");
    let files = state_files(&human.dir);
    assert!(files.iter().any(|f| f.ends_with("state.db")), "the state files were found: {files:?}");
    for file in files {
        assert_absent(
            &std::fs::read(&file).unwrap_or_default(),
            &codes,
            &file.display().to_string(),
        );
    }
    assert_absent(&std::fs::read(human.config.as_path()).unwrap(), &codes, "the config");
    assert_code_is_only_with_the_human(&human.seen, &codes);
}

/// Runs Claude Code's hook on `payload` with every log level on; returns
/// everything it printed.
async fn hook_output(config: &Path, payload: &serde_json::Value) -> Vec<u8> {
    let mut child = dongle_command(&["hook", "claude-code", "--config", config.to_str().unwrap()])
        .env("SAFETY_DONGLE_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).await.unwrap();
    let output = child.wait_with_output().await.unwrap();
    assert!(output.status.success(), "the hook answered");
    [output.stdout, output.stderr].concat()
}

#[tokio::test]
async fn no_code_reaches_a_log_or_the_state_through_debug_logging_or_the_hook() {
    let human = Setup::new(Answer::Deny, 300);
    let mut raw = human.start_with_env(&[("SAFETY_DONGLE_LOG", "trace")]).await;
    ask(&mut raw, execute(1, "canary-log")).await;
    let pause = ask(&mut raw, step(2, "canary-log", "twine upload dist/*")).await;
    let challenge = notified_id(&pause["data"], "autonomy_pause", "verificationId");
    ask(&mut raw, execute(3, "canary-log-2")).await;
    let pause = ask(&mut raw, step(4, "canary-log-2", "twine upload dist/*")).await;
    let second = notified_id(&pause["data"], "autonomy_pause", "verificationId");
    let codes = vec![human.code_for(&challenge), human.code_for(&second)];

    // The agent submits the codes through its MCP client; with the hook
    // installed for every tool (matcher "*"), Claude Code first asks the
    // hook about each call, in whichever form the agent wrote it.
    let mut printed = Vec::new();
    let bare = codes[0].replace('-', "").to_lowercase();
    let calls = [
        (
            "mcp__safety-dongle__mcp_aql_create",
            json!({"operation": "verify_challenge", "params": {"challenge_id": challenge, "code": codes[0]}}),
        ),
        (
            "mcp__sd__mcp_aql",
            json!({"operation": "verify_challenge", "params": {"challenge_id": challenge, "code": bare}}),
        ),
        (
            "mcp__sd__mcp_aql_create",
            json!({"operation": "verify_challenge", "challenge_id": second, "code": codes[1].replace('-', " ")}),
        ),
    ];
    for (tool, input) in calls {
        let payload = json!({"session_id": "s1", "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
        printed.extend(hook_output(&human.config, &payload).await);
    }
    let mut mcp_output = Vec::new();
    mcp_output.extend(
        ask(&mut raw, verify(5, &second, "00000-00000-00000-00000-00000-0"))
            .await
            .to_string()
            .into_bytes(),
    );
    let verified = ask(&mut raw, verify(6, &challenge, &codes[0])).await;
    assert_eq!(verified["data"]["verified"], true, "the code itself was right: {verified}");
    mcp_output.extend(verified.to_string().into_bytes());

    raw.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(10), raw.child.wait()).await;
    let mut stderr = Vec::new();
    if let Some(mut err) = raw.child.stderr.take() {
        use tokio::io::AsyncReadExt;
        let _ = err.read_to_end(&mut stderr).await;
    }
    assert!(String::from_utf8_lossy(&stderr).contains("DEBUG"), "debug logging was on");
    let audit =
        dongle_command(&["audit", "--config", human.config.to_str().unwrap(), "--limit", "100"])
            .output()
            .await
            .unwrap();
    let audit_text = String::from_utf8_lossy(&audit.stdout).into_owned();
    assert_absent(&stderr, &codes, "the dongle's debug log");
    assert_absent(&printed, &codes, "the hook's output and debug log");
    assert_absent(&mcp_output, &codes, "MCP output");
    assert_absent(audit_text.as_bytes(), &codes, "`safety-dongle audit`");
    for file in state_files(&human.dir) {
        assert_absent(
            &std::fs::read(&file).unwrap_or_default(),
            &codes,
            &file.display().to_string(),
        );
    }
    // The controls: the hook's rows are there, with the code redacted, and
    // the human really saw the codes searched for.
    assert!(audit_text.contains("[redacted code]"), "the hook audited the calls: {audit_text}");
    assert_code_is_only_with_the_human(&human.seen, &codes);
}

fn tool_introspect() -> serde_json::Value {
    super::support::tool_call(
        10,
        "mcp_aql_read",
        "get_execution_state",
        serde_json::json!({"element_name": "canary"}),
    )
}

/// The control: the codes are really where the human saw them, so the
/// searches above were looking for the right bytes.
fn assert_code_is_only_with_the_human(seen: &Path, codes: &[String]) {
    let everything: Vec<u8> = std::fs::read_dir(seen)
        .unwrap()
        .flatten()
        .flat_map(|e| std::fs::read(e.path()).unwrap_or_default())
        .collect();
    for code in codes {
        assert!(
            everything.windows(code.len()).any(|w| w == code.as_bytes()),
            "the human's channel should hold the code"
        );
    }
}
