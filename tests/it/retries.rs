//! The runtime contract for calls to downstream MCP servers (seed 004,
//! issue 35 item 6), end to end: the real binary in front of
//! `tests/downstream/counter-server.mjs`, which records every call it
//! receives and crashes on one when told to. A call safe to repeat that
//! the crash lost is retried and answered by the restarted process; any
//! other call reaches the server at most once. Each call's start, end,
//! duration and outcome are logged at the contract's levels, and not one
//! argument value reaches the log, even at `trace`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{
    humans::{Answer, Setup},
    proxy::extend_config,
    support::{RawStdio, downstream_packages, envelope_of, tool_call},
};

/// An argument value that must never be logged.
const SECRET: &str = "sk-live-0d9f5c1e-never-in-a-log";

/// The counter server's `[servers]` table: `retryable` declares `declared`
/// safe to repeat and overrules `falsely_read_only`'s claim.
fn counter_toml(dir: &Path) -> String {
    let packages = downstream_packages();
    format!(
        "[servers.counter]\ncommand = \"{node}\"\nargs = [\"{script}\"]\nenv = {{ COUNTER_DIR = \"{dir}\" }}\nretry_base_ms = 100\nretryable = {{ declared = true, falsely_read_only = false }}\n",
        node = packages.join(".bin/node").display(),
        script = packages.parent().unwrap().join("counter-server.mjs").display(),
        dir = dir.display(),
    )
}

/// The pids that received each call of `tool`, in order.
fn received(dir: &Path, tool: &str) -> Vec<u64> {
    let log = std::fs::read_to_string(dir.join("calls.log")).unwrap_or_default();
    log.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|call| call["tool"] == tool)
        .map(|call| call["pid"].as_u64().unwrap())
        .collect()
}

struct Counter {
    _setup: Setup,
    dir: PathBuf,
    raw: RawStdio,
    next_id: i64,
}

impl Counter {
    /// Calls `counter__<tool>`; returns the envelope and `isError`.
    async fn call(&mut self, endpoint: &str, tool: &str, arguments: Value) -> (Value, bool) {
        self.next_id += 1;
        self.raw
            .send_json(&tool_call(self.next_id, endpoint, &format!("counter__{tool}"), arguments))
            .await;
        let answer = self.raw.read_json().await;
        (envelope_of(&answer), answer["result"]["isError"] == true)
    }

    /// The next call of `tool` makes the server exit before answering.
    fn crash_on_next(&self, tool: &str) {
        std::fs::write(self.dir.join(format!("crash-next-{tool}")), "").unwrap();
    }
}

async fn counter() -> (Counter, super::support::CollectedStderr) {
    let setup = Setup::new(Answer::Deny, 300);
    let dir = setup.dir.join("counter");
    std::fs::create_dir_all(&dir).unwrap();
    extend_config(&setup, "", &counter_toml(&dir));
    let mut raw = setup.start_with_env(&[("SAFETY_DONGLE_LOG", "trace")]).await;
    let stderr = raw.collect_stderr();
    (Counter { _setup: setup, dir, raw, next_id: 0 }, stderr)
}

#[tokio::test]
async fn only_calls_safe_to_repeat_are_retried_and_the_retry_reaches_the_restarted_server() {
    let (mut counter, stderr) = counter().await;
    let (first, _) = counter.call("mcp_aql_read", "lookup", json!({"key": SECRET})).await;
    let first_pid = first["data"]["pid"].as_u64().unwrap_or_else(|| panic!("{first}"));

    // A read the crash lost: retried, and answered by the new process.
    counter.crash_on_next("lookup");
    let (read, is_error) = counter.call("mcp_aql_read", "lookup", json!({"key": SECRET})).await;
    assert!(!is_error && read["success"] == true, "{read}");
    let answered_by = read["data"]["pid"].as_u64().unwrap();
    assert_ne!(answered_by, first_pid, "the restarted process answered");
    assert_eq!(
        received(&counter.dir, "lookup"),
        [first_pid, first_pid, answered_by],
        "sent again only after the crash"
    );

    // A call that is not safe to repeat fails at once and is sent once.
    counter.crash_on_next("append");
    let (lost, is_error) =
        counter.call("mcp_aql_execute", "append", json!({"key": "k", "value": SECRET})).await;
    assert_eq!(
        (lost["error"]["code"].as_str(), is_error),
        (Some("TRANSPORT_NETWORK_ERROR"), true),
        "{lost}"
    );
    assert_eq!(received(&counter.dir, "append").len(), 1, "never sent twice");
    // The restarted server answers the next one (a read waits for it).
    assert_eq!(
        counter.call("mcp_aql_read", "lookup", json!({"key": "k"})).await.0["success"],
        true
    );
    let (next, _) =
        counter.call("mcp_aql_execute", "append", json!({"key": "k", "value": "v"})).await;
    assert_eq!(next["success"], true, "{next}");
    assert_eq!(received(&counter.dir, "append").len(), 2, "each call sent once");

    // Idempotent by its annotation, or declared retryable: retried.
    for tool in ["put", "declared"] {
        counter.crash_on_next(tool);
        let (answer, _) =
            counter.call("mcp_aql_execute", tool, json!({"key": "k", "value": SECRET})).await;
        assert_eq!(answer["success"], true, "{tool}: {answer}");
        assert_eq!(received(&counter.dir, tool).len(), 2, "{tool}: the lost call and its retry");
    }
    // A read-only claim the config overrules: not retried.
    counter.crash_on_next("falsely_read_only");
    let (overruled, _) =
        counter.call("mcp_aql_read", "falsely_read_only", json!({"key": SECRET})).await;
    assert_eq!(overruled["error"]["code"], "TRANSPORT_NETWORK_ERROR", "{overruled}");
    assert_eq!(received(&counter.dir, "falsely_read_only").len(), 1);

    // A tool's own error is an answer, not a lost call: never retried.
    let (failed, _) = counter.call("mcp_aql_read", "lookup", json!({"key": "fail"})).await;
    assert_eq!(failed["error"]["code"], "TOOL_EXECUTION_FAILED", "{failed}");
    let lookups = received(&counter.dir, "lookup").len();
    assert_eq!(
        counter.call("mcp_aql_read", "lookup", json!({"key": "k"})).await.0["success"],
        true
    );
    assert_eq!(received(&counter.dir, "lookup").len(), lookups + 1);

    // The log: each call's start and end at debug, a failure at error, a
    // retry at warn, with duration and outcome; no argument value at all.
    let log = stderr.everything(&mut counter.raw).await;
    assert!(!log.contains(SECRET), "an argument value reached the log:\n{log}");
    let lines = |level: &str, message: &str, operation: &str| -> Vec<String> {
        log.lines()
            .filter(|l| {
                l.contains(&format!(" {level} "))
                    && l.contains(message)
                    && l.contains(&format!("operation=\"{operation}\""))
            })
            .map(str::to_owned)
            .collect()
    };
    assert!(!lines("DEBUG", "upstream call started", "counter__lookup").is_empty(), "{log}");
    let ended = lines("DEBUG", "upstream call ended", "counter__lookup");
    assert!(
        ended.iter().all(|l| l.contains("outcome=\"ok\"")
            && l.contains("duration_ms=")
            && l.contains("source=\"counter\"")),
        "{ended:?}"
    );
    assert!(ended.len() >= 4, "{log}");
    let failed = lines("ERROR", "upstream call failed", "counter__append");
    assert!(
        failed.len() == 1
            && failed[0].contains("code=\"TRANSPORT_NETWORK_ERROR\"")
            && failed[0].contains("duration_ms=")
            && failed[0].contains("outcome=\"failed\""),
        "{log}"
    );
    assert!(
        lines("ERROR", "upstream call failed", "counter__lookup")
            .iter()
            .any(|l| l.contains("outcome=\"tool_error\"")),
        "{log}"
    );
    assert!(!lines("WARN", "retrying an upstream call", "counter__lookup").is_empty(), "{log}");
    assert!(lines("WARN", "retrying an upstream call", "counter__append").is_empty(), "{log}");
}
