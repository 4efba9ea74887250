//! The Claude Code hook's latency: process spawn to answer for one
//! PreToolUse payload, release build, warm page cache, on a state folder
//! that already exists (as after the first call). Every call compiles the
//! default policy, opens the state database, evaluates, and writes its
//! audit row. Measured for a `Bash` command and for a 64 KiB `Write` of a
//! shell script, whose whole content is judged for what it will run
//! (every line a command: the worst case of a file that runs later).
//!
//! Run with `cargo bench --bench hook`.

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::Write,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

const RUNS: usize = 300;

/// One hook call. Each call is a different agent: an agent's step budget
/// spans its calls, and the bench measures calls, not the limit.
fn call(data: &std::path::Path, payload: &str) -> Duration {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let agent = format!("bench-{}", CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
        .args(["hook", "claude-code", "--agent", &agent, "--data-dir"])
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(payload.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    }
    let output = child.wait_with_output().unwrap_or_else(|e| panic!("wait: {e}"));
    let elapsed = start.elapsed();
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "{}",
        "the ordinary call was let through"
    );
    elapsed
}

/// A 64 KiB `Write` payload of an ordinary build script.
fn script_write() -> String {
    let mut script = String::from("#!/bin/sh\nset -eu\n");
    let mut index = 0;
    while script.len() < 64 * 1024 {
        script.push_str(&format!(
            "cargo build --release -p crate_{index} --target-dir target/{index}\n"
        ));
        index += 1;
    }
    script.truncate(64 * 1024);
    let cut = script.rfind('\n').map_or(script.len(), |at| at + 1);
    script.truncate(cut);
    serde_json::json!({
        "session_id": "bench", "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": "/repo/scripts/build-all.sh", "content": script}
    })
    .to_string()
}

fn measure(data: &std::path::Path, label: &str, payload: &str) {
    for _ in 0..20 {
        call(data, payload);
    }
    let mut times: Vec<Duration> = (0..RUNS).map(|_| call(data, payload)).collect();
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "hook claude-code, {label}, spawn to answer ({RUNS} runs): median {:.2} ms, p90 {:.2} ms, p99 {:.2} ms",
        ms(times[RUNS / 2]),
        ms(times[RUNS * 9 / 10]),
        ms(times[RUNS * 99 / 100])
    );
}

fn main() {
    let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("hook-bench");
    let bash = r#"{"session_id":"bench","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace -- --nocapture"}}"#;
    measure(&data, "Bash command", bash);
    measure(&data, "64 KiB Write of a shell script", &script_write());
}
