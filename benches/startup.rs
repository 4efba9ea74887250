//! Start-up benchmark of the release binary: process spawn -> `initialize`
//! -> `tools/list` answered, the `tools/list` payload in each endpoint mode,
//! and the resident memory of an idle, initialised server.
//!
//! Start-up includes compiling the embedded default policy and opening
//! (creating, on the first run) the state database.
//!
//! Run with `cargo bench --bench startup`; figures go to the README.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdout, Command, Stdio},
    time::{Duration, Instant},
};

const RUNS: usize = 200;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;

fn spawn(mode: &str) -> (Child, BufReader<ChildStdout>) {
    // State goes to a scratch folder under target/, never the user's.
    let data = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("startup-bench");
    let mut child = Command::new(env!("CARGO_BIN_EXE_safety-dongle"))
        .args(["serve", "--endpoints", mode, "--data-dir"])
        .arg(&data)
        .env_remove("MCP_AQL_ENDPOINT_MODE")
        .env("SAFETY_DONGLE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
    (child, stdout)
}

/// Sends the handshake and `tools/list`; returns the `tools/list` answer.
fn handshake(child: &mut Child, stdout: &mut BufReader<ChildStdout>) -> String {
    let stdin = child.stdin.as_mut().unwrap_or_else(|| panic!("stdin"));
    writeln!(stdin, "{INITIALIZE}\n{INITIALIZED}\n{TOOLS_LIST}").unwrap_or_else(|e| panic!("write: {e}"));
    stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    let mut line = String::new();
    loop {
        line.clear();
        let n = stdout.read_line(&mut line).unwrap_or_else(|e| panic!("read: {e}"));
        assert!(n > 0, "server closed stdout");
        if line.contains(r#""id":2"#) {
            return line.trim_end().to_owned();
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    // `cargo bench` passes harness flags such as --bench; none apply here.
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        let (mut child, mut stdout) = spawn("semantic");
        handshake(&mut child, &mut stdout);
        times.push(start.elapsed());
        let _ = child.kill();
        let _ = child.wait();
    }
    times.sort();
    println!(
        "spawn -> initialize -> tools/list ({RUNS} runs): median {:.2} ms, p90 {:.2} ms, min {:.2} ms",
        percentile(&times, 0.5).as_secs_f64() * 1e3,
        percentile(&times, 0.9).as_secs_f64() * 1e3,
        times[0].as_secs_f64() * 1e3,
    );

    for mode in ["semantic", "single", "all"] {
        let (mut child, mut stdout) = spawn(mode);
        let answer = handshake(&mut child, &mut stdout);
        println!("tools/list payload, {mode} mode: {} bytes", answer.len());
        if mode == "semantic" {
            std::thread::sleep(Duration::from_millis(500));
            match rss_kib(child.id()) {
                Some(kib) => println!("idle RSS after initialize: {:.1} MB ({kib} KiB)", kib as f64 / 1024.0),
                None => println!("idle RSS: /proc not available"),
            }
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
