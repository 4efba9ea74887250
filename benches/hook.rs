//! The Claude Code hook's latency: process spawn to answer for one
//! PreToolUse payload, release build, warm page cache, on a state folder
//! that already exists (as after the first call). Every call compiles the
//! default policy, opens the state database, evaluates, and writes its
//! audit row.
//!
//! Run with `cargo bench --bench hook`.

use std::{
    io::Write,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

const RUNS: usize = 300;

fn call(data: &std::path::Path, payload: &str) -> Duration {
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
        .args(["hook", "claude-code", "--data-dir"])
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(payload.as_bytes())
            .unwrap_or_else(|e| panic!("write: {e}"));
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("wait: {e}"));
    let elapsed = start.elapsed();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "{}",
        "the ordinary call was let through"
    );
    elapsed
}

fn main() {
    let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-bench");
    let payload = r#"{"session_id":"bench","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace -- --nocapture"}}"#;
    for _ in 0..20 {
        call(&data, payload);
    }
    let mut times: Vec<Duration> = (0..RUNS).map(|_| call(&data, payload)).collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "hook claude-code, spawn to answer ({RUNS} runs): median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        ms(times[RUNS / 2]),
        ms(times[RUNS * 9 / 10]),
        ms(times[RUNS * 99 / 100])
    );
}
