//! Live reload through the real binary over stdio, with a session open:
//! a policy edited to deny what continued a moment ago, a broken policy
//! that leaves the running one in force, adapter files and `[servers]`
//! entries coming and going, and `status` saying what is loaded.

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{
    humans::{Answer, Setup},
    proxy::{extend_config, files_root, servers_toml},
    support::{RawStdio, ask, dongle_command, execute, step, tool_call},
};

/// What the server wrote to stderr, collected as it comes.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<String>>);

impl Log {
    fn collect(raw: &mut RawStdio) -> Self {
        let log = Self::default();
        let mut lines = BufReader::new(raw.child.stderr.take().expect("stderr piped")).lines();
        let sink = log.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.0.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        log
    }

    fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }
}

/// Asks `probe` until `done` holds of its answer (or ten seconds pass).
async fn until(
    raw: &mut RawStdio,
    what: &str,
    mut probe: impl FnMut(i64) -> Value,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    for id in 1000.. {
        let answer = ask(raw, probe(id)).await;
        if done(&answer) {
            return answer;
        }
        assert!(Instant::now() < deadline, "{what}: never happened; last answer {answer}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    unreachable!()
}

fn policy_hash_probe(id: i64) -> Value {
    tool_call(
        id,
        "mcp_aql_read",
        "introspect",
        json!({"query": "operations", "source": "builtin", "first": 1, "fields": ["name"]}),
    )
}

fn operation_names_probe(id: i64) -> Value {
    tool_call(
        id,
        "mcp_aql_read",
        "introspect",
        json!({"query": "operations", "first": 100, "fields": ["name"]}),
    )
}

fn names(listing: &Value) -> Vec<String> {
    listing["data"]["operations"]
        .as_array()
        .map(|all| all.iter().filter_map(|o| o["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

fn status(config: &Path) -> String {
    let output = std::process::Command::new(super::support::binary())
        .args(["status", "--config", config.to_str().unwrap()])
        .output()
        .expect("run status");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn an_edited_policy_applies_to_the_next_step_and_a_broken_one_is_refused_in_place() {
    let human = Setup::new(Answer::Approve, 300);
    let policy = human.dir.join("mine.toml");
    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 50\n").unwrap();
    extend_config_lines(&human, &format!("policies = [\"{}\"]\n", policy.display()));
    let mut raw = human.start().await;
    let log = Log::collect(&mut raw);
    let started = ask(&mut raw, execute(1, "coder")).await;
    let execution = started["data"]["execution_id"].as_str().unwrap().to_owned();
    assert_eq!(
        ask(&mut raw, step(2, "coder", "executing shell command: cowsay hello")).await["data"]["continue"],
        true
    );
    let before =
        ask(&mut raw, policy_hash_probe(3)).await["data"]["_protocol"]["safety_loop"]["policy"]
            .clone();

    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 50\ndeny = [\"cowsay\"]\n").unwrap();
    let after = until(&mut raw, "the edited policy in force", policy_hash_probe, |answer| {
        answer["data"]["_protocol"]["safety_loop"]["policy"] != before
    })
    .await;
    let new_hash = after["data"]["_protocol"]["safety_loop"]["policy"].as_str().unwrap().to_owned();
    let denied = ask(&mut raw, step(4, "coder", "executing shell command: cowsay hello")).await;
    assert_eq!(
        (denied["data"]["continue"].clone(), denied["data"]["stopped"].clone()),
        (json!(false), json!(true)),
        "{denied}"
    );
    let reloaded: Vec<&Value> = denied["data"]["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["type"] == "status")
        .collect();
    assert!(
        reloaded.iter().any(|n| n["message"].as_str().unwrap().contains(&new_hash[..16])),
        "the agent is told of the swap: {denied}"
    );
    let state = ask(
        &mut raw,
        tool_call(5, "mcp_aql_read", "get_execution_state", json!({"element_name": "coder"})),
    )
    .await;
    assert_eq!(
        (state["data"]["execution_id"].as_str(), state["data"]["steps"].as_u64()),
        (Some(execution.as_str()), Some(2)),
        "the session and its execution are intact: {state}"
    );

    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 50\ndeny = [\"cowsay\"\n").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.text().contains("mine.toml:3:") {
        assert!(
            Instant::now() < deadline,
            "the broken policy was never logged with its location:\n{}",
            log.text()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        log.text().contains("A changed policy was refused; the running one stays"),
        "{}",
        log.text()
    );
    let still = ask(&mut raw, policy_hash_probe(6)).await;
    assert_eq!(
        still["data"]["_protocol"]["safety_loop"]["policy"],
        new_hash.as_str(),
        "the running policy stays"
    );
    let shown = status(&human.config);
    assert!(
        shown.contains(&format!("policy {}", &new_hash[..16]))
            && shown.contains("refused change policy")
            && shown.contains("mine.toml:3:"),
        "{shown}"
    );

    let audit = dongle_command(&["audit", "--config", human.config.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    let trail = String::from_utf8_lossy(&audit.stdout);
    assert!(
        trail.contains("reload") && trail.contains("refused"),
        "the swap and the refusal are audited:\n{trail}"
    );
    let verified = dongle_command(&["audit", "verify", "--config", human.config.to_str().unwrap()])
        .output()
        .await
        .unwrap();
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stdout));
}

/// Puts `lines` at the top of the setup's config file.
fn extend_config_lines(setup: &Setup, lines: &str) {
    extend_config(setup, lines, "");
}

const ADAPTER: &str = "---\nname: NAME\ntype: adapter\nversion: \"1.0.0\"\ndescription: \"A test adapter\"\n\ntarget:\n  base_url: \"http://127.0.0.1:9\"\n  transport: http\n  protocol: rest\n  serialization: json\n\noperations:\n  read:\n    - name: get_status\n      maps_to: \"GET /status\"\n      description: \"Get API status\"\n---\n\n# Test adapter\n";

#[tokio::test]
async fn adapter_files_and_servers_come_and_go_with_the_files() {
    let human = Setup::new(Answer::Approve, 300);
    let adapters = human.dir.join("adapters");
    std::fs::create_dir_all(&adapters).unwrap();
    std::fs::write(adapters.join("first-adapter.md"), ADAPTER.replace("NAME", "first-api"))
        .unwrap();
    extend_config_lines(&human, &format!("adapters = [\"{}\"]\n", adapters.display()));
    let base_config = std::fs::read_to_string(&human.config).unwrap();
    let mut raw = human.start().await;
    let _log = Log::collect(&mut raw);
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    let listed = names(&ask(&mut raw, operation_names_probe(2)).await);
    assert!(listed.contains(&"first_api__get_status".to_owned()), "{listed:?}");

    std::fs::write(adapters.join("second-adapter.md"), ADAPTER.replace("NAME", "second-api"))
        .unwrap();
    until(&mut raw, "a new adapter file served", operation_names_probe, |answer| {
        names(answer).contains(&"second_api__get_status".to_owned())
    })
    .await;
    std::fs::remove_file(adapters.join("first-adapter.md")).unwrap();
    let after =
        until(&mut raw, "a removed adapter file withdrawn", operation_names_probe, |answer| {
            !names(answer).contains(&"first_api__get_status".to_owned())
        })
        .await;
    assert!(names(&after).contains(&"second_api__get_status".to_owned()));
    assert!(status(&human.config).contains("adapter second-api"), "{}", status(&human.config));

    let root = files_root(&human);
    std::fs::write(
        &human.config,
        format!("{base_config}{}", servers_toml(&root, "reload-test", "startup")),
    )
    .unwrap();
    until(&mut raw, "a new [servers] entry served", operation_names_probe, |answer| {
        names(answer).iter().any(|n| n.starts_with("everything__"))
            && names(answer).iter().any(|n| n.starts_with("fs__"))
    })
    .await;
    let echoed = ask(
        &mut raw,
        tool_call(3, "mcp_aql_read", "everything__echo", json!({"message": "hello"})),
    )
    .await;
    assert_eq!(echoed["success"], true, "{echoed}");
    std::fs::write(&human.config, &base_config).unwrap();
    let gone =
        until(&mut raw, "a removed [servers] entry withdrawn", operation_names_probe, |answer| {
            !names(answer).iter().any(|n| n.starts_with("everything__") || n.starts_with("fs__"))
        })
        .await;
    assert!(
        names(&gone).contains(&"second_api__get_status".to_owned()),
        "the adapters stay: {gone}"
    );
    let state = ask(
        &mut raw,
        tool_call(4, "mcp_aql_read", "get_execution_state", json!({"element_name": "coder"})),
    )
    .await;
    assert_eq!(state["data"]["status"], "running", "{state}");
}
