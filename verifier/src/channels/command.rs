//! The user's own program (DESIGN.md 7.3): it gets one JSON object on its
//! stdin, never anything in its arguments or environment, and only the
//! minimal environment (`verifier_protocol::environment`). For a code, exit
//! status 0 means it was shown; for an approval, the first line of its
//! stdout is the answer (`approve`; anything else is deny). How users reach
//! phones and chat apps, and how tests play the human. The agent, reason
//! and action travel as a person is shown them everywhere (`plain_text`):
//! printable ASCII, bounded, so a chat app renders no control sequence.

use std::{
    io::{BufRead, BufReader, Read, Write},
    process::{Command, Stdio},
    sync::mpsc,
    time::Duration,
};

use serde_json::json;

use verifier_protocol::{Decision, Kind};

use super::Presentation;

/// The longest answer line read from the program.
const MAX_ANSWER_BYTES: u64 = 1024;

pub fn present(
    shown: &Presentation<'_>,
    announce: &mut dyn FnMut(),
) -> Result<Option<Decision>, String> {
    let request = shown.request;
    let (program, arguments) = request
        .command
        .as_deref()
        .and_then(<[String]>::split_first)
        .ok_or("no command configured")?;
    let message = match (request.kind, shown.code) {
        (Kind::Code, Some(code)) => json!({
            "type": "verification_code", "challenge_id": shown.id(), "agent": shown.agent(),
            "tier": request.tier, "reason": shown.reason(), "action": shown.action(),
            "code": code, "expires_at": shown.expires_at(),
        }),
        _ => json!({
            "type": "approval_request", "approval_id": shown.id(), "agent": shown.agent(),
            "reason": shown.reason(), "action": shown.action(), "expires_at": shown.expires_at(),
        }),
    };
    // Only an approval's answer is read; a code request's program may print
    // what it likes without filling a pipe nobody drains.
    let stdout = if request.kind == Kind::Approval { Stdio::piped() } else { Stdio::null() };
    let mut child = Command::new(program)
        .args(arguments)
        .env_clear()
        .envs(verifier_protocol::environment::for_reaching_humans(std::env::vars_os()))
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(format!("{message}\n").as_bytes());
    }
    let stdout = child.stdout.take();
    if request.kind == Kind::Code {
        let status = child.wait().map_err(|e| format!("waiting for the command failed: {e}"))?;
        return if status.success() {
            announce();
            Ok(None)
        } else {
            Err(format!("the command exited with {status}"))
        };
    }
    announce();
    let (answer_tx, answer_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        if let Some(stdout) = stdout {
            let _ = BufReader::new(stdout.take(MAX_ANSWER_BYTES)).read_line(&mut line);
        }
        let _ = answer_tx.send(line);
    });
    // The watchdog bounds the whole process; this only keeps the answer
    // from outliving the request.
    let answer = answer_rx
        .recv_timeout(Duration::from_secs(request.timeout_secs.max(1)))
        .unwrap_or_default();
    let _ = child.kill();
    let _ = child.wait();
    Ok(Some(if answer.trim() == "approve" { Decision::Approve } else { Decision::Deny }))
}
