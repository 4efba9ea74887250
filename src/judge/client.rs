//! The hook's end of the judge's socket: ask the judge for this setup to
//! decide one call, and say what its answer (or its silence) means.
//!
//! The socket must belong to a process of this user (checked with the
//! peer's credentials), and every reply must be of this protocol version
//! and well-formed. No judge, a judge of someone else, one that refuses,
//! is stale, or drops or garbles the connection before it takes the call:
//! [`Asked::NotAsked`], and the hook decides in-process. A judge that took
//! the call and then fails to answer in time: [`Asked::Lost`], and the
//! hook refuses the call and audits the refusal.

use std::{io, os::unix::net::UnixStream, time::Duration};

use crate::hook::answer::Verdict;

use super::{
    address::JudgeAddress,
    wire::{MAX_REPLY_BYTES, Reply, Request, VERSION, blocking},
};

/// How long a judge may take to read a request and take it: far more than
/// it needs, so that only a judge that is stuck makes the hook decide
/// in-process.
const TAKE_WITHIN: Duration = Duration::from_secs(5);

/// How long after the judge's wait for a human ends the verdict may still
/// take to arrive.
const VERDICT_SLACK: Duration = Duration::from_secs(2);

/// What asking the judge came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    /// The judge decided.
    Decided(Verdict),
    /// The judge took the call and did not answer it: it may have asked a
    /// human or audited a decision, so the call is refused, not decided
    /// again.
    Lost(String),
    /// No judge decided and none started to: decide in-process. `start`:
    /// nothing listens, so a judge may be started for the next call.
    NotAsked { start: bool, why: String },
}

/// Asks the judge at `address` to decide `request` on `payload`.
pub fn ask(address: &JudgeAddress, request: &Request, payload: &[u8]) -> Asked {
    match connect(address) {
        Ok(stream) => ask_on(stream, request, payload),
        Err(not_asked) => not_asked,
    }
}

/// A connection to the judge at `address`, which runs as this user; else
/// what that means ([`Asked::NotAsked`]).
pub fn connect(address: &JudgeAddress) -> Result<UnixStream, Asked> {
    let not_asked = |start: bool, why: String| Asked::NotAsked { start, why };
    let stream = UnixStream::connect(&address.socket).map_err(|error| {
        let nothing_listens =
            matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused);
        not_asked(nothing_listens, format!("no judge: {error}"))
    })?;
    match peer_uid(&stream) {
        Ok(uid) if uid == nix::unistd::geteuid().as_raw() => Ok(stream),
        Ok(uid) => Err(not_asked(false, format!("the judge runs as uid {uid}"))),
        Err(error) => Err(not_asked(false, format!("the judge's credentials: {error}"))),
    }
}

/// Asks the judge on `stream` (from [`connect`]) to decide `request` on
/// `payload`.
pub fn ask_on(mut stream: UnixStream, request: &Request, payload: &[u8]) -> Asked {
    let not_asked = |why: String| Asked::NotAsked { start: false, why };
    let timed = stream
        .set_write_timeout(Some(TAKE_WITHIN))
        .and_then(|()| stream.set_read_timeout(Some(TAKE_WITHIN)));
    if let Err(error) = timed {
        return not_asked(format!("the connection's time-outs: {error}"));
    }
    let sent = blocking::send_call(&mut stream, request, payload);
    if let Err(error) = sent {
        return not_asked(format!("the request could not be sent: {error}"));
    }
    match blocking::receive(&mut stream, MAX_REPLY_BYTES) {
        Ok(Reply::Accepted { version: VERSION }) => {}
        Ok(Reply::Stale { version: VERSION }) => {
            return not_asked("the judge's files are older than this call's".into());
        }
        Ok(other) => return not_asked(format!("the judge did not take it: {other:?}")),
        Err(error) => return not_asked(format!("the judge did not take it in time: {error}")),
    }
    let within = Duration::from_millis(request.wait_ms).saturating_add(VERDICT_SLACK);
    if let Err(error) = stream.set_read_timeout(Some(within)) {
        return Asked::Lost(format!("the connection's time-out: {error}"));
    }
    match blocking::receive(&mut stream, MAX_REPLY_BYTES) {
        Ok(Reply::Decided { version: VERSION, verdict }) => Asked::Decided(verdict),
        Ok(other) => Asked::Lost(format!("the judge answered {other:?}")),
        Err(error) => Asked::Lost(format!("the judge stopped or did not decide in time: {error}")),
    }
}

/// The user id of the process at the other end of `stream`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn peer_uid(stream: &UnixStream) -> nix::Result<u32> {
    use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
    Ok(getsockopt(stream, PeerCredentials)?.uid())
}

/// The user id of the process at the other end of `stream`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn peer_uid(stream: &UnixStream) -> nix::Result<u32> {
    Ok(nix::unistd::getpeereid(stream)?.0.as_raw())
}
