//! One gate for every action, through the real binaries: a paused agent's
//! proxied call never reaches the real `server-everything` (a recorder in
//! front of it keeps every byte it is sent) and its hooked calls are
//! denied; hooked calls spend steps and stop at the limit; a confirmation
//! token is bound to its session and dies with it; and a session that
//! ends cancels its execution, so the agent can start anew.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{
    hook::{decision, run_hook_with_env},
    humans::{Answer, Setup},
    support::{Client, HttpServer, call, downstream_packages, scratch_dir, stdio_client},
};

fn code(envelope: &Value) -> &str {
    envelope["error"]["code"].as_str().unwrap_or("<success>")
}

async fn operation(client: &Client, tool: &str, name: &str, params: Value) -> Value {
    call(client, tool, json!({ "operation": name, "params": params })).await.0
}

fn bash(command: &str) -> Value {
    json!({"session_id": "gate-test", "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}})
}

async fn hook(config: &Path, agent: &str, command: &str) -> Value {
    run_hook_with_env(
        &["hook", "claude-code", "--config", config.to_str().unwrap(), "--agent", agent],
        &[],
        &bash(command),
    )
    .await
}

/// `server-everything` behind a recorder: every line the dongle sends it
/// is appended to `log` before the server reads it.
fn recorded_everything(setup: &Setup, log: &Path) -> String {
    let bin = downstream_packages().join(".bin");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let script = setup.dir.join("recorded-everything.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntee -a \"{}\" | exec \"{}\"\n",
            log.display(),
            bin.join("mcp-server-everything").display()
        ),
    )
    .unwrap();
    format!(
        "[servers.everything]\ncommand = \"/bin/sh\"\nargs = [\"{}\"]\nenv = {{ PATH = \"{path}\" }}\ntimeout_secs = 20\n",
        script.display()
    )
}

/// The `tools/call` requests the recorder saw.
fn calls_received(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|message| message["method"] == "tools/call")
        .collect()
}

#[tokio::test]
async fn a_paused_agent_is_refused_everywhere_and_the_downstream_receives_nothing() {
    // The human takes two minutes to answer: the agent stays paused.
    let setup = Setup::new(Answer::ApproveAfter(120), 300);
    let log = setup.dir.join("everything-received.jsonl");
    let base = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(&setup.config, format!("{base}{}", recorded_everything(&setup, &log))).unwrap();
    let client = stdio_client(&["serve", "--config", setup.config.to_str().unwrap()]).await;

    let started =
        operation(&client, "mcp_aql_execute", "execute_agent", json!({"element_name": "X"})).await;
    assert_eq!(started["success"], true, "{started}");
    // Control: before the pause, the same call reaches the server.
    let echoed =
        operation(&client, "mcp_aql_read", "everything__echo", json!({"message": "before"})).await;
    assert_eq!(echoed["success"], true, "{echoed}");
    assert_eq!(calls_received(&log).len(), 1, "the recorder sees what the server is sent");
    assert_eq!(
        decision(&hook(&setup.config, "X", "curl -s https://example.com/data.json").await),
        "defer",
        "control: the hook lets it through"
    );

    let step = operation(
        &client,
        "mcp_aql_create",
        "record_execution_step",
        json!({"element_name": "X", "next_action_hint": "git push origin main"}),
    )
    .await;
    assert_eq!(step["data"]["continue"], false, "{step}");
    for _ in 0..3 {
        let refused = operation(
            &client,
            "mcp_aql_read",
            "everything__echo",
            json!({"message": "while paused"}),
        )
        .await;
        assert_eq!(code(&refused), "PERMISSION_DENIED", "{refused}");
        assert!(refused.to_string().contains("paused"), "{refused}");
        let hooked = hook(&setup.config, "X", "curl -s https://example.com/data.json").await;
        assert_eq!(decision(&hooked), "deny", "{hooked}");
        assert!(
            hooked["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("paused"),
            "{hooked}"
        );
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        calls_received(&log).len(),
        1,
        "nothing reached the server while the agent was paused"
    );
    // Another agent is not held by X's pause.
    assert_eq!(
        decision(&hook(&setup.config, "Y", "curl -s https://example.com/data.json").await),
        "defer"
    );
}

/// A config with unreachable humans and a step limit of `limit`.
fn limited(dir: &Path, limit: u32) -> PathBuf {
    let policy = dir.join("limit.toml");
    std::fs::write(&policy, format!("[defaults]\nmaxAutonomousSteps = {limit}\n")).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!("data_dir = \"{}\"\npolicies = [\"{}\"]\n[verifier]\nprogram = \"/nonexistent/verifier\"\n", dir.join("state").display(), policy.display()),
    )
    .unwrap();
    config
}

#[tokio::test]
async fn hooked_calls_are_steps_and_stop_at_the_limit() {
    let dir = scratch_dir();
    let config = limited(&dir, 3);
    for attempt in 1..=3 {
        assert_eq!(
            decision(&hook(&config, "counted", "cargo build").await),
            "defer",
            "step {attempt} of 3"
        );
    }
    let over = hook(&config, "counted", "cargo build").await;
    assert_eq!(decision(&over), "deny", "{over}");
    assert!(
        over["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("Step limit exceeded"),
        "{over}"
    );
    // Each agent has its own budget.
    assert_eq!(decision(&hook(&config, "fresh", "cargo build").await), "defer");
    // Every hooked call is audited as a gate decision of its agent.
    let rows = super::support::dongle_command(&[
        "audit",
        "--config",
        config.to_str().unwrap(),
        "--agent",
        "counted",
    ])
    .output()
    .await
    .unwrap();
    let audit = String::from_utf8_lossy(&rows.stdout);
    assert_eq!(audit.lines().filter(|line| line.contains("gate")).count(), 4, "{audit}");
}

/// A dongle over HTTP in front of the filesystem server, humans approving.
async fn http_with_files(setup: &Setup) -> (HttpServer, PathBuf) {
    let root = setup.dir.join("files");
    std::fs::create_dir_all(&root).unwrap();
    let root = root.canonicalize().unwrap();
    let bin = downstream_packages().join(".bin");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let base = std::fs::read_to_string(&setup.config).unwrap();
    let servers = format!(
        "[servers.fs]\ncommand = \"{}\"\nargs = [\"{}\"]\nenv = {{ PATH = \"{path}\" }}\n",
        bin.join("mcp-server-filesystem").display(),
        root.display()
    );
    std::fs::write(&setup.config, format!("{base}{servers}")).unwrap();
    (HttpServer::start(&["--config", setup.config.to_str().unwrap()]).await, root)
}

#[tokio::test]
async fn a_token_is_bound_to_its_session_and_dies_with_it() {
    let setup = Setup::new(Answer::Approve, 300);
    let (server, root) = http_with_files(&setup).await;
    let (first, second) = (server.client().await, server.client().await);
    let write = |name: &str| json!({"path": root.join(name), "content": "x"});
    let token_for = |asked: &Value| {
        asked["error"]["details"]["confirmation_token"]
            .as_str()
            .unwrap_or_else(|| panic!("{asked}"))
            .to_owned()
    };

    let asked_a = operation(&first, "mcp_aql_delete", "fs__write_file", write("a.txt")).await;
    assert_eq!(code(&asked_a), "CONFIRMATION_REQUIRED", "{asked_a}");
    let asked_b = operation(&first, "mcp_aql_delete", "fs__write_file", write("b.txt")).await;
    let (token_a, token_b) = (token_for(&asked_a), token_for(&asked_b));

    // Another session cannot redeem it, even while its own is open.
    let mut stolen = write("b.txt");
    stolen["_confirmation"] = json!(token_b);
    let refused = operation(&second, "mcp_aql_delete", "fs__write_file", stolen.clone()).await;
    assert_eq!(code(&refused), "TOKEN_INVALID", "{refused}");
    assert!(refused.to_string().contains("another session"), "{refused}");
    assert_eq!(
        refused["error"]["details"]["token"], stolen["_confirmation"],
        "the spec's detail names the token presented"
    );

    // Control: its own session redeems its own token once the human approved.
    let mut own = write("a.txt");
    own["_confirmation"] = json!(token_a);
    let written = operation(&first, "mcp_aql_delete", "fs__write_file", own).await;
    assert_eq!(written["success"], true, "{written}");
    assert!(root.join("a.txt").exists());

    // The session ends: its tokens die with it.
    first.cancel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let after = operation(&second, "mcp_aql_delete", "fs__write_file", stolen.clone()).await;
        assert_eq!(code(&after), "TOKEN_INVALID", "{after}");
        if after.to_string().contains("no such confirmation token") {
            break;
        }
        assert!(Instant::now() < deadline, "the token outlived its session: {after}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!root.join("b.txt").exists(), "nothing was written with another session's token");
}

async fn state_of(client: &Client, agent: &str) -> Value {
    operation(client, "mcp_aql_read", "get_execution_state", json!({"element_name": agent})).await
}

#[tokio::test]
async fn a_session_that_ends_cancels_its_execution_and_the_agent_starts_anew() {
    // Over HTTP: the session is deleted while the server keeps running.
    let setup = Setup::new(Answer::Deny, 300);
    let server = HttpServer::start(&["--config", setup.config.to_str().unwrap()]).await;
    let (first, second) = (server.client().await, server.client().await);
    let started =
        operation(&first, "mcp_aql_execute", "execute_agent", json!({"element_name": "worker"}))
            .await;
    assert_eq!(started["success"], true, "{started}");
    let conflict =
        operation(&second, "mcp_aql_execute", "execute_agent", json!({"element_name": "worker"}))
            .await;
    assert_eq!(
        code(&conflict),
        "CONFLICT_ALREADY_EXISTS",
        "control: one running execution per agent"
    );
    first.cancel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while state_of(&second, "worker").await["data"]["status"] != "cancelled" {
        assert!(
            Instant::now() < deadline,
            "the execution outlived its session: {}",
            state_of(&second, "worker").await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let again =
        operation(&second, "mcp_aql_execute", "execute_agent", json!({"element_name": "worker"}))
            .await;
    assert_eq!(again["success"], true, "a later session of the same agent starts anew: {again}");

    // Over stdio: the client closes stdin and the process exits.
    let dir = scratch_dir();
    let config = dir.join("config.toml");
    std::fs::write(&config, format!("data_dir = \"{}\"\n", dir.join("state").display())).unwrap();
    let client = stdio_client(&["serve", "--config", config.to_str().unwrap()]).await;
    let started = operation(
        &client,
        "mcp_aql_execute",
        "execute_agent",
        json!({"element_name": "stdio-worker"}),
    )
    .await;
    assert_eq!(started["success"], true, "{started}");
    client.cancel().await.unwrap();
    // The process ends the session as it exits, in its own time.
    let next = stdio_client(&["serve", "--config", config.to_str().unwrap()]).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while state_of(&next, "stdio-worker").await["data"]["status"] != "cancelled" {
        assert!(
            Instant::now() < deadline,
            "the execution outlived its session: {}",
            state_of(&next, "stdio-worker").await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let again = operation(
        &next,
        "mcp_aql_execute",
        "execute_agent",
        json!({"element_name": "stdio-worker"}),
    )
    .await;
    assert_eq!(again["success"], true, "{again}");
}
