//! The safety loop through the release binary over stdio:
//! `record_execution_step` round-trip latency (one request at a time, each
//! answer awaited) and sustained throughput (requests pipelined), every
//! step evaluated and its audit row committed before the answer is sent.
//! The data folder is a fresh temporary one on the same disk as `target/`.
//!
//! Run with `cargo bench --bench steps`.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::{BufRead, BufReader, Write},
    process::{ChildStdin, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

const ROUND_TRIPS: usize = 2_000;
const PIPELINED: usize = 20_000;

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

fn main() {
    let data = tempfile::Builder::new()
        .prefix("steps-bench-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("temp dir: {e}"));
    // A generous limit so the benchmark measures steps, not pauses.
    let policy = data.path().join("bench.toml");
    std::fs::write(&policy, "[defaults]\nmaxAutonomousSteps = 1000000\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
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
    send(&mut stdin, &execute_request(1, "latency"));
    assert!(read(&mut stdout).contains("running"), "execution started");

    let mut times = Vec::with_capacity(ROUND_TRIPS);
    for i in 0..ROUND_TRIPS {
        let start = Instant::now();
        send(&mut stdin, &step_request(10 + i, "latency"));
        let answer = read(&mut stdout);
        times.push(start.elapsed());
        assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "record_execution_step round trip over stdio ({ROUND_TRIPS} sequential): median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms",
        ms(times[ROUND_TRIPS / 2]),
        ms(times[ROUND_TRIPS * 9 / 10]),
        ms(times[ROUND_TRIPS * 99 / 100]),
    );

    send(&mut stdin, &execute_request(5, "throughput"));
    assert!(read(&mut stdout).contains("running"), "execution started");
    let start = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut batch = String::new();
        for i in 0..PIPELINED {
            batch.push_str(&step_request(100_000 + i, "throughput"));
            batch.push('\n');
            if i % 500 == 499 {
                stdin.write_all(batch.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
                batch.clear();
            }
        }
        stdin.write_all(batch.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
        stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
        stdin
    });
    for _ in 0..PIPELINED {
        let answer = read(&mut stdout);
        assert!(answer.contains(r#"\"continue\":true"#), "step continued: {answer}");
    }
    let elapsed = start.elapsed();
    drop(writer.join());
    println!(
        "sustained steps ({PIPELINED} pipelined, every audit row committed): {:.0} steps/s",
        PIPELINED as f64 / elapsed.as_secs_f64()
    );
    let _ = child.kill();
    let _ = child.wait();
}
