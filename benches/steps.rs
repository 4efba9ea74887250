//! The safety loop through the release binary over stdio:
//! `record_execution_step` round-trip latency (one request at a time, each
//! answer awaited) and sustained throughput (requests pipelined), every
//! step evaluated and its audit row committed before the answer is sent.
//! The data folder is a fresh temporary one on the same disk as `target/`.
//!
//! Run with `cargo bench --bench steps`; against the code before a change,
//! `bash benches/against-before.sh REV steps` (see `support/builds.rs`).

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

#[path = "support/builds.rs"]
mod builds;

use builds::Build;

const ROUND_TRIPS: usize = 2_000;
/// Round trips a build makes before the other build's turn.
const ROUND: usize = 100;
const PIPELINED: usize = 20_000;
const PIPELINED_ROUND: usize = 5_000;

fn send(stdin: &mut ChildStdin, line: &str) {
    stdin.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    stdin.write_all(b"\n").unwrap_or_else(|e| panic!("write: {e}"));
    stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
}

fn read(stdout: &mut BufReader<ChildStdout>) -> String {
    let mut line = String::new();
    let n = stdout.read_line(&mut line).unwrap_or_else(|e| panic!("read: {e}"));
    assert!(n > 0, "server closed stdout");
    line
}

fn step_request(id: usize, agent: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mcp_aql_create","arguments":{{"operation":"record_execution_step","params":{{"element_name":"{agent}","nextActionHint":"executing shell command: cargo test --workspace"}}}}}}}}"#
    )
}

fn execute_request(id: usize, agent: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"mcp_aql_execute","arguments":{{"operation":"execute_agent","params":{{"element_name":"{agent}","maxAutonomousSteps":1000000}}}}}}}}"#
    )
}

/// One build's server over stdio, on a data folder of its own.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    _data: tempfile::TempDir,
}

impl Server {
    fn start(build: &Build) -> Self {
        let data = tempfile::Builder::new()
            .prefix("steps-bench-")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap_or_else(|e| panic!("temp dir: {e}"));
        // A generous limit so the benchmark measures steps, not pauses.
        let policy = data.path().join("bench.toml");
        std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 1000000\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut child = Command::new(&build.binary)
            .args(["serve", "--data-dir"])
            .arg(data.path())
            .arg("--policy")
            .arg(&policy)
            .env("SAFETY_DONGLE_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
        let mut stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
        send(
            &mut stdin,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#,
        );
        read(&mut stdout);
        send(&mut stdin, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        for (id, agent) in [(1, "latency"), (2, "throughput")] {
            send(&mut stdin, &execute_request(id, agent));
            assert!(read(&mut stdout).contains("running"), "execution started");
        }
        Self { child, stdin, stdout, _data: data }
    }

    fn round_trip(&mut self, id: usize) -> Duration {
        let start = Instant::now();
        send(&mut self.stdin, &step_request(id, "latency"));
        let answer = read(&mut self.stdout);
        let elapsed = start.elapsed();
        assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
        elapsed
    }

    /// `count` steps written without waiting, every answer read.
    fn pipelined(&mut self, first_id: usize, count: usize) -> Duration {
        let start = Instant::now();
        let Self { stdin, stdout, .. } = self;
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut batch = String::new();
                for i in 0..count {
                    batch.push_str(&step_request(first_id + i, "throughput"));
                    batch.push('\n');
                    if i % 500 == 499 {
                        stdin.write_all(batch.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
                        batch.clear();
                    }
                }
                stdin.write_all(batch.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
                stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
            });
            for _ in 0..count {
                let answer = read(stdout);
                assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
            }
        });
        start.elapsed()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let builds = builds::builds();
    let mut servers: Vec<Server> = builds.iter().map(Server::start).collect();

    let mut times = vec![Vec::with_capacity(ROUND_TRIPS); servers.len()];
    for round in 0..ROUND_TRIPS / ROUND {
        for (server, times) in servers.iter_mut().zip(&mut times) {
            for i in 0..ROUND {
                times.push(server.round_trip(10 + round * ROUND + i));
            }
        }
    }
    times.iter_mut().for_each(|times| times.sort());
    builds::report("record_execution_step round trip over stdio, sequential", &builds, &times);

    let mut elapsed = vec![Duration::ZERO; servers.len()];
    for round in 0..PIPELINED / PIPELINED_ROUND {
        for (server, elapsed) in servers.iter_mut().zip(&mut elapsed) {
            *elapsed += server.pipelined(100_000 + round * PIPELINED_ROUND, PIPELINED_ROUND);
        }
    }
    let rates: Vec<f64> =
        elapsed.iter().map(|elapsed| PIPELINED as f64 / elapsed.as_secs_f64()).collect();
    for (build, rate) in builds.iter().zip(&rates) {
        println!(
            "sustained steps ({PIPELINED} pipelined, every audit row committed) [{}]: {rate:.0} steps/s",
            build.label
        );
    }
    if let [this, baseline] = rates[..] {
        println!("sustained steps: this build does {:.3}x the baseline's", this / baseline);
    }
}
