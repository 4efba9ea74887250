//! `safety-dongle-hook`: `safety-dongle hook HARNESS ...` in a binary that
//! starts in about the time of a hello world, because it links only what a
//! call through a warm judge needs (the arguments, the configuration, the
//! judge's address and protocol, the harness's answer), not the policy
//! engine, the state or the servers. `install` writes it into a harness's
//! settings when it stands next to `safety-dongle`.
//!
//! It decides nothing itself. With a judge of its setup listening (the one
//! its full binary, `safety-dongle` beside it, runs), it sends the call
//! there and answers the judge's verdict in the harness's format, or a
//! deny at its deadline. Anything else becomes the full binary, by
//! `exec`, with the same arguments: a command line other than `hook`, no
//! judge listening (the full binary then decides in-process and starts
//! one), judges off, a configuration it cannot read. Once it has read the
//! payload, the full binary is given it on a private unlinked file as its
//! standard input, with what is left of the deadline, `--no-judge` (the
//! judge was asked already) and, for a call the judge took and did not
//! decide, `--judge-lost` (refused and audited, never decided again).
//! Nothing here answers less strictly than the full binary: every answer
//! is the judge's, a deny, or the full binary's.

use std::{
    ffi::OsString,
    path::{Path, PathBuf},
    process::ExitCode,
    time::Instant,
};

use clap::{Parser, Subcommand};

use super::{HookArgs, HookCommand};

/// This binary's name.
pub(super) const FRONT_BINARY: &str = "safety-dongle-hook";

/// The full binary's name, next to this one.
const FULL_BINARY: &str = if cfg!(windows) { "safety-dongle.exe" } else { "safety-dongle" };

#[derive(Debug, Parser)]
#[command(name = FRONT_BINARY, disable_help_flag = true, disable_version_flag = true)]
struct FrontCli {
    #[command(subcommand)]
    command: FrontCommand,
}

#[derive(Debug, Subcommand)]
enum FrontCommand {
    Hook(HookCommand),
}

/// Runs the front with this process's arguments.
pub fn run() -> ExitCode {
    let started = Instant::now();
    let argv: Vec<OsString> = std::env::args_os().collect();
    let full = match full_binary() {
        Ok(full) => full,
        Err(why) => {
            // Exit 2 with a reason blocks in every harness that runs
            // command hooks.
            eprintln!("safety-dongle-hook: {why}, so this tool call is refused");
            return ExitCode::from(2);
        }
    };
    let as_given = || argv.iter().skip(1).cloned().collect::<Vec<_>>();
    match FrontCli::try_parse_from(&argv) {
        Ok(FrontCli { command: FrontCommand::Hook(HookCommand { harness, args }) }) => {
            through_judge(&full, harness, &args, started)
                .unwrap_or_else(|| become_full(&full, &as_given(), None))
        }
        Err(_) => become_full(&full, &as_given(), None),
    }
}

/// `safety-dongle` in this binary's own folder.
fn full_binary() -> Result<PathBuf, String> {
    let me = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|error| format!("cannot tell where this binary is: {error}"))?;
    let full = me.with_file_name(FULL_BINARY);
    if full.is_file() { Ok(full) } else { Err(format!("{} is missing", full.display())) }
}

/// The call decided through the judge, or handed to the full binary once
/// the payload is read; `None` when the full binary should run as if
/// started in the first place (the payload unread).
#[cfg(unix)]
fn through_judge(
    full: &Path,
    harness: crate::hook::harness::Harness,
    args: &HookArgs,
    started: Instant,
) -> Option<ExitCode> {
    use std::io::Read;

    use crate::{
        hook::{identity, reading::MAX_PAYLOAD_BYTES},
        judge::client::{self, Asked},
    };

    use super::hook::{Answer, Asking, judge_request, judge_setup};

    if args.no_judge || args.judge_lost.is_some() {
        return None;
    }
    let adapter = harness.adapter()?;
    let config = args.load_config().ok()?;
    let setup = judge_setup(args, &config)?;
    let address = setup.address_run_by(full).ok()?;
    let stream = client::connect(&address).ok()?;
    let answer = Answer::watched(adapter, args.timeout);
    let mut payload = Vec::new();
    let read = std::io::stdin().take(MAX_PAYLOAD_BYTES as u64 + 1).read_to_end(&mut payload);
    let handover = |judge_lost: Option<String>| {
        let left = args.timeout.saturating_sub(started.elapsed().as_secs()).max(1);
        let handed = HookArgs { no_judge: true, judge_lost, ..args.clone() };
        become_full(full, &handed.command_line(harness, left), Some((&address.folder, &payload)))
    };
    if read.is_err() || payload.len() > MAX_PAYLOAD_BYTES {
        return Some(handover(None));
    }
    let agent = args.agent.clone().unwrap_or_else(|| identity::default_agent(harness));
    let asking = Asking { harness, adapter, args, payload: &payload, agent: &agent };
    let request = judge_request(&asking, &setup, &config, started);
    Some(match client::ask_on(stream, &request, &payload) {
        Asked::Decided(verdict) => ExitCode::from(answer.give(&(adapter.reply)(&verdict))),
        Asked::NotAsked { .. } => handover(None),
        Asked::Lost(why) => handover(Some(why)),
    })
}

/// No judge on this platform: the full binary decides every call.
#[cfg(not(unix))]
fn through_judge(
    _: &Path,
    _: crate::hook::harness::Harness,
    _: &HookArgs,
    _: Instant,
) -> Option<ExitCode> {
    None
}

/// Becomes the full binary with `arguments`: its standard input this
/// one's, or `payload` (on a private unlinked file in `payload`'s folder).
/// Fails closed: a full binary that cannot be started refuses the call.
#[cfg(unix)]
fn become_full(full: &Path, arguments: &[OsString], payload: Option<(&Path, &[u8])>) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(full);
    command.args(arguments);
    if let Some((folder, payload)) = payload {
        match unlinked_copy(folder, payload) {
            Ok(file) => {
                command.stdin(file);
            }
            Err(error) => return refuse(&format!("the payload could not be handed on: {error}")),
        }
    }
    let error = command.exec();
    refuse(&format!("{} could not be started: {error}", full.display()))
}

/// Runs the full binary with `arguments` on this one's standard streams and
/// ends as it ends (no `exec` on this platform).
#[cfg(not(unix))]
fn become_full(full: &Path, arguments: &[OsString], _: Option<(&Path, &[u8])>) -> ExitCode {
    match std::process::Command::new(full).args(arguments).status() {
        Ok(status) => status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .map_or(ExitCode::from(2), ExitCode::from),
        Err(error) => refuse(&format!("{} could not be started: {error}", full.display())),
    }
}

fn refuse(why: &str) -> ExitCode {
    eprintln!("safety-dongle-hook: {why}, so this tool call is refused");
    ExitCode::from(2)
}

/// `payload` in a file only this user can open, already unlinked, read
/// from its start.
#[cfg(unix)]
fn unlinked_copy(folder: &Path, payload: &[u8]) -> std::io::Result<std::fs::File> {
    use std::{
        io::{Seek, Write},
        os::unix::fs::OpenOptionsExt,
    };
    let mut name = [0u8; 16];
    getrandom::fill(&mut name).map_err(|error| std::io::Error::other(error.to_string()))?;
    let path = folder.join(format!("handover-{}", crate::hex::encode(&name)));
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    file.write_all(payload)?;
    file.rewind()?;
    Ok(file)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_handed_on_parses_back_into_the_same_arguments() {
        let given = [
            "safety-dongle-hook",
            "hook",
            "codex",
            "--config",
            "/etc/dongle config.toml",
            "--data-dir",
            "/var/dongle",
            "--policy",
            "a.toml",
            "--policy=-b.toml",
            "--agent=-me",
            "--timeout",
            "90",
            "--no-judge",
            "--judge-lost",
            "the judge stopped",
        ];
        let parse = |argv: &[OsString]| match FrontCli::try_parse_from(argv) {
            Ok(FrontCli { command: FrontCommand::Hook(HookCommand { harness, args }) }) => {
                (harness, args)
            }
            Err(error) => panic!("{error}"),
        };
        let given: Vec<OsString> = given.iter().map(OsString::from).collect();
        let (harness, args) = parse(&given);
        let mut again: Vec<OsString> = vec![FRONT_BINARY.into()];
        again.extend(args.command_line(harness, 42));
        let (harness_again, args_again) = parse(&again);
        assert_eq!(harness_again, harness);
        let expected = HookArgs { timeout: 42, ..args };
        assert_eq!(format!("{args_again:?}"), format!("{expected:?}"));
    }
}
