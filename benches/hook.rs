//! The Claude Code hook's latency: process spawn to answer for one
//! PreToolUse payload, release build, warm page cache, on a state folder
//! that already exists (as after the first call). Measured for a `Bash`
//! command and for a 64 KiB `Write` of a shell script, whose whole content
//! is judged for what it will run (every line a command: the worst case of
//! a file that runs later), three ways:
//!
//! - in-process (`SAFETY_DONGLE_NO_JUDGE=1`): every call compiles the
//!   default policy, opens the state, evaluates and audits (the hook before
//!   the judge, and what a hook does when no judge answers);
//! - judge warm: a running judge decides, the hook only connects (through
//!   the front, `safety-dongle-hook`, and through the full binary, in turn);
//! - cold: no judge runs yet, so the front becomes the full binary, which
//!   decides in-process and starts one after answering (measured against
//!   in-process calls in alternation, each on a state folder of its own
//!   with no judge).
//!
//! Then 1,000 calls from 8 concurrent agents through the front and one
//! warm judge (p99, every answer and every audit row checked), and the
//! judge's start-up (spawn to listening) and its resident memory once idle.
//!
//! Run with `cargo bench --bench hook`; against the code before a change,
//! `bash benches/against-before.sh REV hook` (see `support/builds.rs`: the
//! in-process figures are compared; the judge's are this build's).

// A bench is a harness: it stops on what it did not expect, like a test.
#![allow(clippy::panic, clippy::indexing_slicing, clippy::string_slice, clippy::unreachable)]

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    sync::atomic::{AtomicUsize, Ordering},
    time::{Duration, Instant},
};

#[path = "support/build_script.rs"]
mod build_script;
#[path = "support/builds.rs"]
mod builds;

use builds::{Build, ms, percentile};

const RUNS: usize = 300;
const COLD_RUNS: usize = 60;
const AGENTS: usize = 8;
const CALLS_PER_AGENT: usize = 125;

/// Whether a hook may ask a judge, and which binary the harness runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Judging {
    InProcess,
    /// `safety-dongle hook`, judges allowed.
    Allowed,
    /// The front, `safety-dongle-hook hook` (what `install` writes).
    Front,
}

/// One hook call on `data`. Each call is a different agent: an agent's
/// step budget spans its calls, and the bench measures calls, not the
/// limit.
fn call(build: &Build, data: &Path, payload: &str, judging: Judging) -> Duration {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    let agent = format!("bench-{}", CALLS.fetch_add(1, Ordering::Relaxed));
    call_as(build, data, payload, judging, &agent, "{}")
}

/// One hook call as `agent`, which must answer `expected`.
fn call_as(
    build: &Build,
    data: &Path,
    payload: &str,
    judging: Judging,
    agent: &str,
    expected: &str,
) -> Duration {
    let start = Instant::now();
    let mut child = hook_command(build, judging)
        .args(["--agent", agent, "--data-dir"])
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
    let answer = String::from_utf8_lossy(&output.stdout);
    assert!(answer.trim().starts_with(expected), "{agent} answered {answer}, not {expected}");
    elapsed
}

/// `hook claude-code` run as `judging` says, its options to follow.
fn hook_command(build: &Build, judging: Judging) -> Command {
    let mut command = match judging {
        Judging::Front => Command::new(build.binary.with_file_name("safety-dongle-hook")),
        Judging::InProcess | Judging::Allowed => Command::new(&build.binary),
    };
    command.args(["hook", "claude-code"]);
    if judging == Judging::InProcess {
        command.env("SAFETY_DONGLE_NO_JUDGE", "1");
    } else {
        command.env_remove("SAFETY_DONGLE_NO_JUDGE");
    }
    command
}

fn bash(command: &str, session: &str) -> String {
    serde_json::json!({
        "session_id": session, "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": command}
    })
    .to_string()
}

/// A 64 KiB `Write` payload of an ordinary build script.
fn script_write() -> String {
    serde_json::json!({
        "session_id": "bench", "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": "/repo/scripts/build-all.sh", "content": build_script::sixty_four_kib()}
    })
    .to_string()
}

fn bench_folder(name: &str) -> PathBuf {
    let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&folder);
    folder
}

/// Each build's in-process calls, one of each build's in turn; each build
/// keeps its own state folder.
fn in_process(builds: &[Build], label: &str, payload: &str) {
    let data: Vec<_> =
        (0..builds.len()).map(|i| bench_folder(&format!("hook-bench-{i}"))).collect();
    for (build, data) in builds.iter().zip(&data) {
        for _ in 0..20 {
            call(build, data, payload, Judging::InProcess);
        }
    }
    let mut times = vec![Vec::with_capacity(RUNS); builds.len()];
    for _ in 0..RUNS {
        for ((build, data), times) in builds.iter().zip(&data).zip(&mut times) {
            times.push(call(build, data, payload, Judging::InProcess));
        }
    }
    times.iter_mut().for_each(|times| times.sort());
    builds::report(
        &format!("hook claude-code, {label}, in-process, spawn to answer"),
        builds,
        &times,
    );
}

/// A judge this bench started, killed when dropped.
struct Judge(Child);

impl Judge {
    /// Starts a judge on `data`; returns it once it listens, and how long
    /// that took.
    fn start(build: &Build, data: &Path) -> (Self, Duration) {
        // A killed judge's socket is left behind: listening means a new one.
        let folder = data.join("judge");
        let _ = std::fs::remove_dir_all(&folder);
        let start = Instant::now();
        let child = Command::new(&build.binary)
            .args(["judge", "--data-dir"])
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn the judge: {e}"));
        // Killed and waited for when dropped, whatever happens next.
        let judge = Self(child);
        loop {
            let listening = std::fs::read_dir(&folder).is_ok_and(|entries| {
                entries.flatten().any(|e| e.path().extension().is_some_and(|x| x == "sock"))
            });
            if listening {
                return (judge, start.elapsed());
            }
            assert!(start.elapsed() < Duration::from_secs(60), "the judge did not start");
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Its resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.0.id()))
            .unwrap_or_else(|e| panic!("the judge's status: {e}"));
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no VmRSS in {status}"))
    }
}

impl Drop for Judge {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn report_one(what: &str, times: &mut [Duration]) {
    times.sort();
    println!(
        "{what} ({} runs): median {:.3} ms, p90 {:.3} ms, p99 {:.3} ms",
        times.len(),
        ms(percentile(times, 50)),
        ms(percentile(times, 90)),
        ms(percentile(times, 99)),
    );
}

/// Calls through a warm judge, from the front and from the full binary in
/// turn.
fn judge_warm(build: &Build, label: &str, payload: &str) {
    let data = bench_folder("hook-bench-judge");
    let (_judge, _) = Judge::start(build, &data);
    for _ in 0..20 {
        call(build, &data, payload, Judging::Front);
        call(build, &data, payload, Judging::Allowed);
    }
    let (mut front, mut full): (Vec<_>, Vec<_>) = (0..RUNS)
        .map(|_| {
            (
                call(build, &data, payload, Judging::Front),
                call(build, &data, payload, Judging::Allowed),
            )
        })
        .unzip();
    report_one(
        &format!("hook claude-code, {label}, judge warm, through the front, spawn to answer"),
        &mut front,
    );
    report_one(
        &format!("hook claude-code, {label}, judge warm, through the full binary, spawn to answer"),
        &mut full,
    );
}

/// Cold calls (no judge yet: decided in-process, a judge started after
/// answering) against in-process calls, in alternation, each on a state
/// folder of its own that a first in-process call created. The judges
/// the cold calls start exit after a second without calls.
fn cold(build: &Build) {
    let payload = bash("cargo test --workspace -- --nocapture", "bench");
    let root = bench_folder("hook-bench-cold");
    std::fs::create_dir_all(&root).unwrap_or_else(|e| panic!("{e}"));
    let config = root.join("config.toml");
    std::fs::write(&config, "[judge]\nidle_secs = 1\n").unwrap_or_else(|e| panic!("{e}"));
    let (mut cold, mut own) = (Vec::new(), Vec::new());
    for run in 0..COLD_RUNS {
        for judging in [Judging::Front, Judging::InProcess] {
            let data = root.join(format!("{run}-{}", judging == Judging::Front));
            let with_config = |agent: &str, judging: Judging| {
                let mut command = hook_command(build, judging);
                command
                    .arg("--config")
                    .arg(&config)
                    .args(["--agent", agent, "--data-dir"])
                    .arg(&data)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::null());
                command
            };
            let run_one = |mut command: Command| {
                let start = Instant::now();
                let mut child = command.spawn().unwrap_or_else(|e| panic!("spawn: {e}"));
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(payload.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
                }
                let output = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "{}");
                start.elapsed()
            };
            run_one(with_config("first", Judging::InProcess));
            let time = run_one(with_config("measured", judging));
            match judging {
                Judging::Front | Judging::Allowed => cold.push(time),
                Judging::InProcess => own.push(time),
            }
            // Let the judge just started finish its own start-up.
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    report_one("hook claude-code, Bash command, cold (no judge yet), spawn to answer", &mut cold);
    report_one("hook claude-code, Bash command, in-process, same folders", &mut own);
    println!(
        "cold: median {:.3}x the in-process median (p99 {:.3}x)",
        ms(percentile(&cold, 50)) / ms(percentile(&own, 50)),
        ms(percentile(&cold, 99)) / ms(percentile(&own, 99)),
    );
}

/// 1,000 calls from 8 concurrent hook callers (each call its own agent
/// name) through one warm judge: every answer checked, every audit row
/// counted.
fn concurrent(build: &Build) {
    let data = bench_folder("hook-bench-concurrent");
    let (_judge, _) = Judge::start(build, &data);
    for _ in 0..20 {
        call(build, &data, &bash("cargo test", "warm-up"), Judging::Front);
    }
    let mut times: Vec<Duration> = std::thread::scope(|scope| {
        let agents: Vec<_> = (0..AGENTS)
            .map(|agent| {
                let data = &data;
                scope.spawn(move || {
                    (0..CALLS_PER_AGENT)
                        .map(|call| {
                            let payload =
                                bash(&format!("cargo test # {call}"), &format!("{agent}-{call}"));
                            // An agent a call, as in `call`: the step budget is
                            // not what is measured.
                            let name = format!("concurrent-{agent}-{call}");
                            call_as(build, data, &payload, Judging::Front, &name, "{}")
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        agents.into_iter().flat_map(|agent| agent.join().unwrap_or_else(|_| panic!())).collect()
    });
    let audit = Command::new(&build.binary)
        .args(["audit", "--limit", "100000", "--data-dir"])
        .arg(&data)
        .output()
        .unwrap_or_else(|e| panic!("audit: {e}"));
    let rows = String::from_utf8_lossy(&audit.stdout);
    let audited = rows.lines().filter(|row| row.contains(" concurrent-")).count();
    assert_eq!(times.len(), AGENTS * CALLS_PER_AGENT, "every call answered");
    assert_eq!(audited, AGENTS * CALLS_PER_AGENT, "every decision audited");
    report_one(
        &format!("hook claude-code, {AGENTS} concurrent agents, judge warm, spawn to answer"),
        &mut times,
    );
    println!("{audited} of {} calls answered and audited", AGENTS * CALLS_PER_AGENT);
}

/// The judge's start-up (spawn to listening, on a state folder that
/// exists) and its resident memory, idle after 100 calls.
fn judge_itself(build: &Build) {
    let data = bench_folder("hook-bench-startup");
    call(build, &data, &bash("ls", "init"), Judging::InProcess);
    let mut startups = Vec::new();
    for _ in 0..20 {
        let (judge, took) = Judge::start(build, &data);
        startups.push(took);
        drop(judge);
    }
    report_one("judge start-up, spawn to listening", &mut startups);
    let (judge, _) = Judge::start(build, &data);
    println!("judge resident memory, started: {} KiB", judge.rss_kib());
    for _ in 0..100 {
        call(build, &data, &bash("cargo build", "rss"), Judging::Allowed);
    }
    call(build, &data, &script_write(), Judging::Allowed);
    std::thread::sleep(Duration::from_secs(2));
    println!("judge resident memory, idle after 101 calls: {} KiB", judge.rss_kib());
}

fn main() {
    let builds = builds::builds();
    let bash_call = bash("cargo test --workspace -- --nocapture", "bench");
    let write = script_write();
    in_process(&builds, "Bash command", &bash_call);
    in_process(&builds, "64 KiB Write of a shell script", &write);
    let this = &builds[0];
    judge_warm(this, "Bash command", &bash_call);
    judge_warm(this, "64 KiB Write of a shell script", &write);
    cold(this);
    concurrent(this);
    judge_itself(this);
}
