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

use std::time::Duration;

use tokio::net::UnixStream;

use crate::hook::answer::Verdict;

use super::{
    address::JudgeAddress,
    wire::{self, MAX_REPLY_BYTES, Reply, Request, VERSION},
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
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            return Asked::NotAsked { start: false, why: format!("no async runtime: {error}") };
        }
    };
    runtime.block_on(ask_async(address, request, payload))
}

async fn ask_async(address: &JudgeAddress, request: &Request, payload: &[u8]) -> Asked {
    let not_asked = |start: bool, why: String| Asked::NotAsked { start, why };
    let mut stream = match UnixStream::connect(&address.socket).await {
        Ok(stream) => stream,
        Err(error) => {
            let nothing_listens = matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            );
            return not_asked(nothing_listens, format!("no judge: {error}"));
        }
    };
    match stream.peer_cred() {
        Ok(peer) if peer.uid() == nix::unistd::geteuid().as_raw() => {}
        Ok(peer) => return not_asked(false, format!("the judge runs as uid {}", peer.uid())),
        Err(error) => return not_asked(false, format!("the judge's credentials: {error}")),
    }
    let sent = async {
        wire::send(&mut stream, request).await?;
        wire::write_frame(&mut stream, payload).await
    };
    if let Err(error) = sent.await {
        return not_asked(false, format!("the request could not be sent: {error}"));
    }
    let taken = tokio::time::timeout(TAKE_WITHIN, wire::receive(&mut stream, MAX_REPLY_BYTES));
    match taken.await {
        Ok(Ok(Reply::Accepted { version: VERSION })) => {}
        Ok(Ok(Reply::Stale { version: VERSION })) => {
            return not_asked(false, "the judge's files are older than this call's".into());
        }
        Ok(Ok(other)) => return not_asked(false, format!("the judge did not take it: {other:?}")),
        Ok(Err(error)) => return not_asked(false, format!("the judge did not take it: {error}")),
        Err(_) => return not_asked(false, "the judge did not take it in time".into()),
    }
    let within = Duration::from_millis(request.wait_ms) + VERDICT_SLACK;
    match tokio::time::timeout(within, wire::receive(&mut stream, MAX_REPLY_BYTES)).await {
        Ok(Ok(Reply::Decided { version: VERSION, verdict })) => Asked::Decided(verdict),
        Ok(Ok(other)) => Asked::Lost(format!("the judge answered {other:?}")),
        Ok(Err(error)) => Asked::Lost(format!("the judge stopped: {error}")),
        Err(_) => Asked::Lost("the judge did not decide in time".into()),
    }
}
