//! The judge (`safety-dongle judge`) through real processes: hooks asking
//! a running judge decide exactly as hooks deciding in-process (over the
//! whole command and write corpora: `corpus` and `writes` run every row
//! both ways through [`answered_alike`]); a judge that cannot be understood is
//! not asked (the hook decides in-process, the same way); a judge killed
//! while a human is being asked leaves the call denied and the refusal
//! audited; blocks hold across both ways of deciding; concurrent hooks
//! lose no decision and no audit row; hooks start a judge on demand, two
//! at once leave one, and an idle judge exits.
//!
//! Whether a hook decided in-process is read from its debug log
//! (`deciding in-process: WHY`), the one place it says so.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{
    hook::{bash, decision, unreachable_humans},
    humans::verifier_program,
    support::{binary, command_of, dongle_command, front_binary, scratch_dir},
};

const IN_PROCESS: &str = "deciding in-process";

/// A command for the binary with judges allowed and the hook's choice of
/// judge or in-process logged. The environment the verifier is started
/// with names the judge (`judge::address`): it is the same for every
/// command here, as a harness's is for its hooks.
fn judged_command(args: &[&str], env: &[(&str, &str)]) -> tokio::process::Command {
    judged_command_of(&binary(), args, env)
}

/// Like [`judged_command`] for `program` (the binary or its front).
fn judged_command_of(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut command = command_of(program, args);
    command
        .env_remove(safety_dongle::judge::NO_JUDGE_ENV)
        .env("XDG_DATA_HOME", Path::new(env!("CARGO_TARGET_TMPDIR")).join("judge-xdg"))
        .env("SAFETY_DONGLE_LOG", "warn,safety_dongle::cli::hook=debug")
        .envs(env.iter().copied());
    command
}

/// What one hook call answered, whether it decided in-process, and
/// whether the full binary ran (its hook logs every way it decides; the
/// front logs nothing).
struct Answered {
    answer: Value,
    in_process: bool,
    full_binary_ran: bool,
    stderr: String,
}

/// Which binary a harness's settings run: the full binary, or its front
/// (`safety-dongle-hook`, which `install` writes where it stands beside the
/// full binary). Both take `hook HARNESS ...`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Through {
    Full,
    Front,
}

impl Through {
    /// Every other row of a corpus through each, so that both are held to
    /// the in-process answer over the whole of it without paying for a
    /// third call per row.
    pub(super) fn alternating(index: usize) -> Self {
        if index.is_multiple_of(2) { Self::Full } else { Self::Front }
    }

    fn program(self) -> PathBuf {
        match self {
            Self::Full => binary(),
            Self::Front => front_binary(),
        }
    }
}

/// Runs `hook claude-code` with `args` on `payload`.
async fn hook(args: &[&str], env: &[(&str, &str)], payload: &Value) -> Answered {
    hook_through(Through::Full, args, env, payload).await
}

/// Runs `hook claude-code` with `args` on `payload` through `through`. A
/// front that hands the call to the full binary shows in its log as a
/// hook deciding in-process.
async fn hook_through(
    through: Through,
    args: &[&str],
    env: &[(&str, &str)],
    payload: &Value,
) -> Answered {
    let mut all = vec!["hook", "claude-code"];
    all.extend_from_slice(args);
    let output = given(judged_command_of(&through.program(), &all, env), payload).await;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "the hook exits 0: {stderr}");
    let answer = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    Answered {
        answer,
        in_process: stderr.contains(IN_PROCESS),
        full_binary_ran: stderr.contains("safety_dongle::cli::hook"),
        stderr,
    }
}

/// What `command` printed and how it ended, given `payload` on stdin.
async fn given(mut command: tokio::process::Command, payload: &Value) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A program may answer and exit before it reads its input (a front
    // without its full binary refuses at once): what it printed and how
    // it ended are what is asserted, so a closed pipe is no failure.
    if let Err(error) = stdin.write_all(payload.to_string().as_bytes()).await {
        assert_eq!(error.kind(), std::io::ErrorKind::BrokenPipe, "{error}");
    }
    drop(stdin);
    child.wait_with_output().await.unwrap()
}

/// The judges' folder of a state folder.
fn judge_folder(state: &Path) -> PathBuf {
    state.join("judge")
}

/// The sockets in `state`'s judge folder.
fn sockets(state: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(judge_folder(state)) else { return vec![] };
    entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "sock"))
        .collect()
}

/// Waits (bounded by a minute, never asserting how long) until `done`.
async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..3000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("still waiting, after a minute, until {what}");
}

/// A judge a test started, killed when dropped.
pub(super) struct Judge {
    child: tokio::process::Child,
}

impl Judge {
    /// Starts `judge --config CONFIG` with `env` and waits until it listens.
    pub(super) async fn start(config: &str, env: &[(&str, &str)], state: &Path) -> Self {
        let child = judged_command(&["judge", "--config", config], env)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until("the judge listens", || !sockets(state).is_empty()).await;
        Self { child }
    }

    fn kill(&mut self) {
        let pid = self.child.id().unwrap();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::SIGKILL)
            .unwrap();
    }
}

/// `text` with every UUID (challenge and approval ids) replaced by `<id>`.
fn without_ids(text: &str) -> String {
    let is_uuid = |word: &str| {
        word.len() == 36
            && word.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() }
            })
    };
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.get(..36).filter(|word| is_uuid(word)) {
            Some(_) => {
                out.push_str("<id>");
                rest = &rest[36..];
            }
            None => {
                let c = rest.chars().next().unwrap();
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    out
}

/// The answer in a form two agents' answers compare in: ids and the
/// agent's name replaced.
fn comparable(answer: &Value, agent: &str) -> String {
    without_ids(&answer.to_string().replace(agent, "<agent>"))
}

/// The hook's answer to `payload` as `agent`, deciding in-process, after
/// checking that a warm judge answers it the same (as an agent of its own,
/// so neither's blocks reach the other).
pub(super) async fn answered_alike(
    config: &str,
    env: &[(&str, &str)],
    agent: &str,
    payload: &Value,
    through: Through,
) -> Value {
    let judged_agent = format!("judged-{agent}");
    let judged =
        hook_through(through, &["--config", config, "--agent", &judged_agent], env, payload).await;
    assert!(!judged.in_process, "the judge decides {payload} ({through:?}): {}", judged.stderr);
    assert_eq!(
        judged.full_binary_ran,
        through == Through::Full,
        "only the front answers on its own ({through:?}): {}",
        judged.stderr
    );
    let own = hook(&["--config", config, "--agent", agent, "--no-judge"], env, payload).await;
    assert_eq!(
        comparable(&judged.answer, &judged_agent),
        comparable(&own.answer, agent),
        "the judge and the hook in-process answer {payload} alike"
    );
    own.answer
}

/// A listener at a dead judge's socket that answers every connection with
/// `reply` (raw bytes), after reading the request.
async fn impostor(socket: &Path, reply: Vec<u8>) -> tokio::task::JoinHandle<()> {
    let _ = std::fs::remove_file(socket);
    let listener = tokio::net::UnixListener::bind(socket).unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let reply = reply.clone();
            tokio::spawn(async move {
                // The request's two frames, read whole.
                for _ in 0..2 {
                    let Ok(size) = stream.read_u32().await else { return };
                    let mut frame = vec![0; size as usize];
                    if stream.read_exact(&mut frame).await.is_err() {
                        return;
                    }
                }
                let _ = stream.write_all(&reply).await;
            });
        }
    })
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut framed = (body.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(body);
    framed
}

#[tokio::test]
async fn a_judge_that_answers_garbage_another_version_or_nothing_is_not_asked() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let state = dir.join("state");
    let mut judge = Judge::start(&config, &[], &state).await;
    let socket = sockets(&state).remove(0);
    judge.kill();
    let _ = judge.child.wait().await;
    let push = bash("s", "git push --force origin main");
    let expected = comparable(
        &hook(&["--config", &config, "--agent", "own", "--no-judge"], &[], &push).await.answer,
        "own",
    );
    let accepted_then_allow = [
        frame(br#"{"reply":"accepted","version":1}"#),
        frame(br#"{"reply":"decided","version":1,"verdict":"allow"}"#),
    ]
    .concat();
    let cases: [(&str, Vec<u8>); 5] = [
        ("garbage", b"HTTP/1.1 200 OK\r\n\r\n{}".to_vec()),
        ("another version", frame(br#"{"reply":"decided","version":2,"verdict":"defer"}"#)),
        (
            "a verdict before taking the call",
            frame(br#"{"reply":"decided","version":1,"verdict":"defer"}"#),
        ),
        ("an oversized frame", u32::MAX.to_be_bytes().to_vec()),
        ("nothing", Vec::new()),
    ];
    for through in [Through::Full, Through::Front] {
        for (index, (what, reply)) in cases.iter().enumerate() {
            let fake = impostor(&socket, reply.clone()).await;
            let agent = format!("asker-{through:?}-{index}");
            let answered =
                hook_through(through, &["--config", &config, "--agent", &agent], &[], &push).await;
            fake.abort();
            assert!(answered.in_process, "{what} ({through:?}): in-process: {}", answered.stderr);
            assert_eq!(
                comparable(&answered.answer, &agent),
                expected,
                "{what} ({through:?}): the same answer"
            );
        }
        // A judge that takes the call and then answers something that is
        // no verdict has taken it: the call is refused, not decided again.
        let fake = impostor(&socket, accepted_then_allow.clone()).await;
        let agent = format!("taken-{through:?}");
        let answered =
            hook_through(through, &["--config", &config, "--agent", &agent], &[], &bash("s", "ls"))
                .await;
        fake.abort();
        assert_eq!(decision(&answered.answer), "deny", "{through:?}: {}", answered.answer);
    }
}

#[tokio::test]
async fn a_judge_killed_while_a_human_is_asked_leaves_the_call_denied_and_audited() {
    for through in [Through::Full, Through::Front] {
        a_judge_killed_while_asking(through).await;
    }
}

async fn a_judge_killed_while_asking(through: Through) {
    let dir = scratch_dir();
    let state = dir.join("state");
    let asked = dir.join("asked");
    let human = dir.join("human.sh");
    // The human never answers; the script says it was asked.
    std::fs::write(&human, format!("#!/bin/sh\ncat > \"{}\"\nsleep 60\n", asked.display()))
        .unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\n[verifier]\nprogram = \"{}\"\nchannels = [\"command\"]\ncommand = [\"/bin/sh\", \"{}\"]\napproval_timeout_secs = 120\n",
            state.display(),
            verifier_program().display(),
            human.display()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let mut judge = Judge::start(config, &[], &state).await;
    let asking = tokio::spawn({
        let config = config.to_owned();
        async move {
            hook_through(
                through,
                &["--config", &config, "--agent", "pusher"],
                &[],
                &bash("k", "git push origin main"),
            )
            .await
        }
    });
    wait_until("the human is asked", || asked.exists()).await;
    judge.kill();
    let answered = asking.await.unwrap();
    assert_eq!(decision(&answered.answer), "deny", "{through:?}: {}", answered.answer);
    assert!(!answered.in_process, "{through:?}: the judge had taken it: {}", answered.stderr);
    let reason = answered.answer["hookSpecificOutput"]["permissionDecisionReason"].to_string();
    assert!(reason.contains("judge stopped"), "{through:?}: {reason}");
    let audit =
        dongle_command(&["audit", "--config", config, "--agent", "pusher"]).output().await.unwrap();
    let rows = String::from_utf8_lossy(&audit.stdout);
    let refusals: Vec<&str> = rows
        .lines()
        .filter(|row| row.contains("git push origin main") && row.contains("refused"))
        .collect();
    assert_eq!(refusals.len(), 1, "the refusal is audited once:\n{rows}");
}

#[tokio::test]
async fn a_hard_block_holds_whichever_way_it_was_raised_and_is_decided() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let _judge = Judge::start(&config, &[], &dir.join("state")).await;
    for (blocker, checker) in [(&[][..], &["--no-judge"][..]), (&["--no-judge"][..], &[][..])] {
        let agent = format!("blocked-{}", blocker.len());
        let with = |extra: &[&'static str]| {
            let mut args = vec!["--config", config.as_str(), "--agent", agent.as_str()];
            args.extend_from_slice(extra);
            args.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        let args = with(blocker);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let raised = hook(&args, &[], &bash("b", "sudo rm -rf /")).await;
        assert_eq!(decision(&raised.answer), "deny");
        if blocker.is_empty() {
            assert!(!raised.in_process, "the judge decides: {}", raised.stderr);
        }
        let args = with(checker);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let held = hook(&args, &[], &bash("b2", "cargo build")).await;
        if checker.is_empty() {
            assert!(!held.in_process, "the judge decides: {}", held.stderr);
        }
        assert_eq!(decision(&held.answer), "deny", "{}", held.answer);
        assert!(held.answer.to_string().contains("hard-blocked"), "{}", held.answer);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_agents_lose_no_decision_and_no_audit_row() {
    const AGENTS: usize = 8;
    const CALLS: usize = 25;
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let _judge = Judge::start(&config, &[], &dir.join("state")).await;
    let mut agents = tokio::task::JoinSet::new();
    for agent in 0..AGENTS {
        let config = config.clone();
        agents.spawn(async move {
            let name = format!("busy-{agent}");
            let mut fell_back = 0;
            for call in 0..CALLS {
                // Every fifth call needs a human, whom nobody can reach: it is
                // refused (without a block), so both verdicts travel.
                let (command, expected) = if call % 5 == 4 {
                    ("git push origin main", "deny")
                } else {
                    ("cargo test", "defer")
                };
                let payload = json!({"session_id": format!("{name}-{call}"), "cwd": "/repo", "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": format!("{command} # {call}")}});
                let answered = hook(&["--config", &config, "--agent", &name], &[], &payload).await;
                assert_eq!(decision(&answered.answer), expected, "{name} call {call}: {}", answered.answer);
                fell_back += usize::from(answered.in_process);
            }
            fell_back
        });
    }
    let mut fell_back = 0;
    while let Some(result) = agents.join_next().await {
        fell_back += result.unwrap();
    }
    assert_eq!(fell_back, 0, "the judge decided every call");
    let audit = dongle_command(&["audit", "--config", &config, "--limit", "100000"])
        .output()
        .await
        .unwrap();
    let rows = String::from_utf8_lossy(&audit.stdout);
    for agent in 0..AGENTS {
        for call in 0..CALLS {
            let marker = format!("# {call}\"");
            let name = format!(" busy-{agent} ");
            let count =
                rows.lines().filter(|row| row.contains(&name) && row.contains(&marker)).count();
            assert_eq!(count, 1, "one audit row for busy-{agent} call {call}:\n{rows}");
        }
    }
    let chain = dongle_command(&["audit", "--config", &config, "verify"]).output().await.unwrap();
    assert!(chain.status.success(), "{}", String::from_utf8_lossy(&chain.stdout));
}

/// The processes running `safety-dongle judge` for `state` (Linux: read
/// from /proc).
#[cfg(target_os = "linux")]
fn judges_of(state: &Path) -> Vec<u32> {
    let state = state.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<String> = cmdline
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let is_judge =
                args.iter().any(|a| a == "judge") && args.iter().any(|a| a.starts_with(&state));
            let alive = std::fs::read_to_string(entry.path().join("stat"))
                .is_ok_and(|stat| !stat.contains(") Z "));
            (is_judge && alive).then_some(pid)
        })
        .collect()
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cold_hooks_start_one_judge_that_decides_the_next_calls_and_exits_when_idle() {
    let dir = scratch_dir();
    let state = dir.join("state");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\n[verifier]\nprogram = \"/nonexistent/verifier\"\n[judge]\nidle_secs = 2\n",
            state.display()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap().to_owned();
    // Two cold hooks at once, one of them a front (which becomes the full
    // binary): each decides in-process and starts a judge.
    let cold: Vec<_> = (0..2)
        .map(|i| {
            let config = config.clone();
            tokio::spawn(async move {
                let agent = format!("cold-{i}");
                let args = ["--config", config.as_str(), "--agent", agent.as_str()];
                hook_through(Through::alternating(i), &args, &[], &bash("c", "ls")).await
            })
        })
        .collect();
    for answered in cold {
        let answered = answered.await.unwrap();
        assert!(answered.in_process, "no judge ran yet: {}", answered.stderr);
        assert_eq!(decision(&answered.answer), "defer");
    }
    wait_until("a judge listens", || !sockets(&state).is_empty()).await;
    // The loser of the start exits on its own; one judge stays.
    wait_until("one judge is left", || judges_of(&state).len() == 1).await;
    for through in [Through::Full, Through::Front] {
        let agent = format!("warm-{through:?}");
        let args = ["--config", config.as_str(), "--agent", agent.as_str()];
        let warm = hook_through(through, &args, &[], &bash("w", "ls")).await;
        assert!(!warm.in_process, "the judge decides ({through:?}): {}", warm.stderr);
        assert_eq!(warm.full_binary_ran, through == Through::Full, "{}", warm.stderr);
    }
    assert_eq!(judges_of(&state).len(), 1);
    wait_until("the idle judge exits", || judges_of(&state).is_empty()).await;
    assert!(sockets(&state).is_empty(), "it removed its socket");
}

#[tokio::test]
async fn a_changed_policy_is_never_decided_by_the_old_one() {
    let dir = scratch_dir();
    let config = unreachable_humans(&dir);
    let policy = dir.join("policy.toml");
    std::fs::write(&policy, "[defaults]\nautoApprove = [\"make*\"]\n").unwrap();
    let policy = policy.to_str().unwrap().to_owned();
    let state = dir.join("state");
    let child = judged_command(&["judge", "--config", &config, "--policy", &policy], &[])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _judge = Judge { child };
    wait_until("the judge listens", || !sockets(&state).is_empty()).await;
    let args = ["--config", config.as_str(), "--policy", policy.as_str(), "--agent", "maker"];
    let before = hook(&args, &[], &bash("p", "make all")).await;
    assert!(!before.in_process, "{}", before.stderr);
    assert_eq!(decision(&before.answer), "defer");
    std::fs::write(&policy, "[defaults]\ndeny = [\"make*\"]\n").unwrap();
    let after = hook(&args, &[], &bash("p", "make all")).await;
    assert_eq!(decision(&after.answer), "deny", "the new policy decides: {}", after.answer);
    // Once the judge has reloaded, it decides by the new policy itself.
    let mut judged = None;
    for call in 0..3000 {
        let answered = hook(
            &["--config", &config, "--policy", &policy, "--agent", &format!("maker-{call}")],
            &[],
            &bash("p", "make all"),
        )
        .await;
        assert_eq!(decision(&answered.answer), "deny", "{}", answered.answer);
        if !answered.in_process {
            judged = Some(answered);
            break;
        }
    }
    assert!(judged.is_some(), "the judge took up the new policy");
}

#[tokio::test]
async fn the_front_is_the_full_binary_for_anything_but_a_judged_call_and_refuses_without_it() {
    let version = command_of(&front_binary(), &["--version"]).output().await.unwrap();
    let full = dongle_command(&["--version"]).output().await.unwrap();
    assert!(version.status.success());
    assert_eq!(version.stdout, full.stdout, "--version is the full binary's");
    let refused = command_of(&front_binary(), &["hook", "vim"]).output().await.unwrap();
    assert_eq!(refused.status.code(), Some(2), "a usage error, from the full binary");

    // A front without its full binary beside it refuses every call.
    let alone = scratch_dir().join("safety-dongle-hook");
    std::fs::hard_link(front_binary(), &alone).unwrap();
    let output = given(command_of(&alone, &["hook", "claude-code"]), &bash("a", "ls")).await;
    assert_eq!(output.status.code(), Some(2), "exit 2 blocks in every harness");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("safety-dongle is missing") && said.contains("refused"), "{said}");
}
