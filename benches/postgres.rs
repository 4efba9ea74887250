//! The safety loop with its state in PostgreSQL on loopback (a throw-away
//! cluster from Debian's packages, as the tests start it), through the
//! release binary over stdio: the `record_execution_step` round trip of
//! one dongle, then the durable steps per second of four dongle processes
//! sharing the database, each stepping its own agent one request at a
//! time. Every step is evaluated, counted and audited in one committed
//! transaction before its answer.
//!
//! Run with `cargo bench --bench postgres`; the figures go to docs/BENCHMARKS.md.

// The cluster helper is the tests' own, which may panic on what it did not
// expect, as the rest of this bench does.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::string_slice,
    clippy::unreachable
)]

// The tests' cluster helper; the bench needs its plain cluster, not TLS.
#[path = "support/peer.rs"]
mod peer;
#[path = "../tests/it/postgres_cluster.rs"]
#[allow(dead_code)]
mod postgres_cluster;

use std::{
    path::Path,
    process::Command,
    time::{Duration, Instant},
};

use peer::Peer;
use postgres_cluster::Cluster;

const ROUND_TRIPS: usize = 2_000;
const WARMUP: usize = 100;
const PROCESSES: usize = 4;
const STEPS_EACH: usize = 1_000;

fn step(agent: &str) -> String {
    format!(
        r#""method":"tools/call","params":{{"name":"mcp_aql_create","arguments":{{"operation":"record_execution_step","params":{{"element_name":"{agent}","nextActionHint":"executing shell command: cargo test --workspace"}}}}}}"#
    )
}

/// A dongle on the shared database, its own data folder under `dir`, with
/// an execution for `agent` running.
fn dongle(dir: &Path, url: &str, agent: &str) -> Peer {
    let folder = dir.join(agent);
    std::fs::create_dir_all(&folder).unwrap_or_else(|e| panic!("{e}"));
    let policy = folder.join("bench.toml");
    // A generous limit so the benchmark measures steps, not pauses.
    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 1000000\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let config = folder.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "state = \"{url}\"\ndata_dir = \"{}\"\npolicies = [\"{}\"]\n",
            folder.display(),
            policy.display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut peer = Peer::spawn(
        Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
            .args(["serve", "--config"])
            .arg(&config)
            .env("SAFETY_DONGLE_LOG", "warn"),
    );
    let started = peer.request(1, &format!(r#""method":"tools/call","params":{{"name":"mcp_aql_execute","arguments":{{"operation":"execute_agent","params":{{"element_name":"{agent}","maxAutonomousSteps":1000000}}}}}}"#));
    assert!(started.contains("running"), "execution started: {started}");
    peer
}

fn main() {
    let cluster = Cluster::start();
    let url = cluster.database();
    let dir = tempfile::Builder::new()
        .prefix("postgres-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("temp dir: {e}"));

    let mut one = dongle(dir.path(), &url, "latency");
    let request = step("latency");
    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..WARMUP + ROUND_TRIPS {
        let start = Instant::now();
        let answer = one.request(10 + i, &request);
        let elapsed = start.elapsed();
        assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
        if i >= WARMUP {
            times.push(elapsed);
        }
    }
    drop(one);
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let at = |p: f64| ms(times[((times.len() - 1) as f64 * p).round() as usize]);
    println!(
        "step round trip, state in PostgreSQL on loopback ({ROUND_TRIPS} steps): median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms (target <= 2 ms)",
        at(0.5),
        at(0.9),
        at(0.99)
    );

    let mut dongles: Vec<(String, Peer)> = (0..PROCESSES)
        .map(|n| format!("worker{n}"))
        .map(|agent| (agent.clone(), dongle(dir.path(), &url, &agent)))
        .collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for (agent, peer) in &mut dongles {
            let request = step(agent);
            scope.spawn(move || {
                for i in 0..STEPS_EACH {
                    let answer = peer.request(10 + i, &request);
                    assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
                }
            });
        }
    });
    let elapsed = start.elapsed();
    let total = PROCESSES * STEPS_EACH;
    println!(
        "durable steps across {PROCESSES} dongle processes on one database: {total} in {:.2} s = {:.0} steps/s (target >= 1,000/s)",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
}
