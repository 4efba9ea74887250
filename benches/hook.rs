//! The Claude Code hook's latency: process spawn to answer for one
//! PreToolUse payload, release build, warm page cache, on a state folder
//! that already exists (as after the first call). Every call compiles the
//! default policy, opens the state database, evaluates, and writes its
//! audit row. Measured for a `Bash` command and for a 64 KiB `Write` of a
//! shell script, whose whole content is judged for what it will run
//! (every line a command: the worst case of a file that runs later).
//!
//! Run with `cargo bench --bench hook`; against the code before a change,
//! `bash benches/against-before.sh REV hook` (see `support/builds.rs`).

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::Write,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

#[path = "support/builds.rs"]
mod builds;

use builds::Build;

const RUNS: usize = 300;

/// One hook call. Each call is a different agent: an agent's step budget
/// spans its calls, and the bench measures calls, not the limit.
fn call(build: &Build, data: &std::path::Path, payload: &str) -> Duration {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let agent = format!("bench-{}", CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    let start = Instant::now();
    let mut child = Command::new(&build.binary)
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

/// Each build's calls, one of each build's in turn; each build keeps its
/// own state folder.
fn measure(builds: &[Build], label: &str, payload: &str) {
    let folder = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let data: Vec<_> = (0..builds.len()).map(|i| folder.join(format!("hook-bench-{i}"))).collect();
    for (build, data) in builds.iter().zip(&data) {
        for _ in 0..20 {
            call(build, data, payload);
        }
    }
    let mut times = vec![Vec::with_capacity(RUNS); builds.len()];
    for _ in 0..RUNS {
        for ((build, data), times) in builds.iter().zip(&data).zip(&mut times) {
            times.push(call(build, data, payload));
        }
    }
    times.iter_mut().for_each(|times| times.sort());
    builds::report(&format!("hook claude-code, {label}, spawn to answer"), builds, &times);
}

fn main() {
    let builds = builds::builds();
    let bash = r#"{"session_id":"bench","cwd":"/repo","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace -- --nocapture"}}"#;
    measure(&builds, "Bash command", bash);
    measure(&builds, "64 KiB Write of a shell script", &script_write());
}
