//! `safety-dongle-verifier`: shows one verification code or approval
//! request to a human, outside the agent's reach, and exits.
//!
//! The dongle runs `safety-dongle-verifier --stdio` once per request and
//! talks to it over the child's stdin/stdout only (`pipe`, with the
//! messages typed in `verifier_protocol`). For a code,
//! the verifier generates it (`code`), sends back only its salted hash,
//! then shows it on the first configured channel that works (`channels`).
//! For an approval, it shows the request and returns the human's answer.
//! A watchdog ends the process when the request times out, so nothing it
//! shows outlives its challenge and nothing hangs.

mod channels;
mod code;
mod pipe;
mod plain_text;

use std::{io::Write, process::ExitCode, time::Duration};

use channels::{Presentation, present};
use pipe::{emit, read_request};
use verifier_protocol::{Decision, Event, Kind, Request};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--version" || flag == "-V" => {
            println!(
                "safety-dongle-verifier {} (verifier protocol {})",
                env!("CARGO_PKG_VERSION"),
                verifier_protocol::VERSION
            );
            ExitCode::SUCCESS
        }
        [flag] if flag == "--stdio" => serve_one_request(),
        _ => {
            eprintln!(
                "usage: safety-dongle-verifier --version | --stdio (spawned by safety-dongle)"
            );
            ExitCode::from(2)
        }
    }
}

fn serve_one_request() -> ExitCode {
    let mut out = std::io::stdout();
    let request = match read_request(std::io::stdin()) {
        Ok(request) => request,
        Err(message) => {
            emit(&mut out, &Event::Error { message });
            return ExitCode::from(2);
        }
    };
    start_watchdog(&request);
    match request.kind {
        Kind::Code => show_code(&request, &mut out),
        Kind::Approval => ask_approval(&request, &mut out),
    }
}

/// Ends the process when the request's time is up: an approval answers
/// `timeout`, an open dialog simply disappears.
fn start_watchdog(request: &Request) {
    let timeout = Duration::from_secs(request.timeout_secs.max(1));
    let approval = request.kind == Kind::Approval;
    std::thread::spawn(move || {
        std::thread::sleep(timeout);
        if approval {
            emit(&mut std::io::stdout(), &Event::Decision { decision: Decision::Timeout });
        }
        std::process::exit(0);
    });
}

fn show_code(request: &Request, out: &mut impl Write) -> ExitCode {
    let code = match code::Code::generate() {
        Ok(code) => code,
        Err(message) => {
            emit(out, &Event::Error { message });
            return ExitCode::from(1);
        }
    };
    let salt = match code::new_salt() {
        Ok(salt) => salt,
        Err(message) => {
            emit(out, &Event::Error { message });
            return ExitCode::from(1);
        }
    };
    emit(out, &Event::Hash { salt: code::hex(&salt), hash: code::hex(&code.salted_hash(&salt)) });
    let display = code.display();
    let shown = Presentation { request, code: Some(&display) };
    try_channels(request, &shown, out);
    ExitCode::SUCCESS
}

fn ask_approval(request: &Request, out: &mut impl Write) -> ExitCode {
    let shown = Presentation { request, code: None };
    if let Some(decision) = try_channels(request, &shown, out) {
        emit(out, &Event::Decision { decision });
    }
    ExitCode::SUCCESS
}

/// Tries each configured channel in order; reports `shown` from the first
/// that works, or `unshown` with every channel's reason.
fn try_channels(
    request: &Request,
    shown: &Presentation<'_>,
    out: &mut impl Write,
) -> Option<Decision> {
    let mut errors = Vec::new();
    for &channel in &request.channels {
        let mut announced = false;
        let mut announce = || {
            emit(&mut std::io::stdout(), &Event::Shown { channel });
            announced = true;
        };
        match present(channel, shown, &mut announce) {
            Ok(decision) => return decision,
            Err(error) if announced => {
                // Shown, then failed while waiting for the human: deny.
                errors.push(format!("{}: {error}", channel.name()));
                return (request.kind == Kind::Approval).then_some(Decision::Deny);
            }
            Err(error) => errors.push(format!("{}: {error}", channel.name())),
        }
    }
    if errors.is_empty() {
        errors.push("no channel is configured".into());
    }
    emit(out, &Event::Unshown { errors });
    None
}
