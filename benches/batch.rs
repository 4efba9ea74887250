//! A batch of 50 `record_execution_step` items in one `tools/call`
//! through the release binary over stdio: the round trip from sending the
//! request to reading its answer, each item passing the gate on its own
//! (evaluated, audited and committed) before the batch is answered.
//!
//! Run with `cargo bench --bench batch`; the figure goes to docs/BENCHMARKS.md.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

#[path = "support/envelope.rs"]
mod envelope;
#[path = "support/peer.rs"]
mod peer;

use std::{
    process::Command,
    time::{Duration, Instant},
};

use peer::Peer;

const ITEMS: usize = 50;
const BATCHES: usize = 400;
const WARMUP: usize = 20;

fn batch_request(agent: &str) -> String {
    let item = format!(
        r#"{{"operation":"record_execution_step","params":{{"element_name":"{agent}","nextActionHint":"executing shell command: cargo test --workspace"}}}}"#
    );
    let items = vec![item; ITEMS].join(",");
    format!(
        r#""method":"tools/call","params":{{"name":"mcp_aql_create","arguments":{{"operations":[{items}]}}}}"#
    )
}

fn main() {
    let data = tempfile::Builder::new()
        .prefix("batch-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("temp dir: {e}"));
    // A generous limit so the benchmark measures steps, not pauses.
    let policy = data.path().join("bench.toml");
    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 1000000\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut dongle = Peer::spawn(
        Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
            .args(["serve", "--data-dir"])
            .arg(data.path())
            .arg("--policy")
            .arg(&policy)
            .env("SAFETY_DONGLE_LOG", "warn"),
    );
    let started = dongle.request(1, r#""method":"tools/call","params":{"name":"mcp_aql_execute","arguments":{"operation":"execute_agent","params":{"element_name":"batcher","maxAutonomousSteps":1000000}}}"#);
    assert!(started.contains("running"), "execution started: {started}");

    let request = batch_request("batcher");
    let mut times = Vec::with_capacity(BATCHES);
    for i in 0..WARMUP + BATCHES {
        let start = Instant::now();
        let answer = dongle.request(10 + i, &request);
        let elapsed = start.elapsed();
        let body = envelope::of(&answer);
        assert!(
            body["summary"] == serde_json::json!({"total": ITEMS, "succeeded": ITEMS, "failed": 0})
                && body.get("halted_at").is_none(),
            "every item continued: {body}"
        );
        if i >= WARMUP {
            times.push(elapsed);
        }
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |p: f64| ms(times[((times.len() - 1) as f64 * p).round() as usize]);
    println!(
        "batch of {ITEMS} steps, round trip ({BATCHES} batches): median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms (target <= 10 ms)",
        at(0.5),
        at(0.9),
        at(0.99)
    );
    println!("per step inside a batch: median {:.3} ms", at(0.5) / ITEMS as f64);
}
