//! The one message format between a hook and its judge: typed here and
//! nowhere else, versioned, every frame size-limited.
//!
//! A frame is a 4-byte big-endian length and that many bytes. The hook
//! sends two: a JSON [`Request`] and the harness's payload as it read it
//! (raw bytes: the judge reads them with the same adapter). The judge
//! answers with JSON [`Reply`] frames: first whether it takes the call
//! ([`Reply::Accepted`]) or not ([`Reply::Stale`], [`Reply::Refused`]),
//! and once it has taken it, the [`Verdict`]. The two steps tell a hook
//! what a dropped connection means: before `Accepted` the judge decided
//! nothing and the hook decides in-process; after it, the judge may have
//! asked a human or written an audit row, so the call is refused and the
//! refusal audited (deciding again could ask a human twice).

use std::io::{Read, Write};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::hook::{answer::Verdict, harness::Harness, reading::MAX_PAYLOAD_BYTES};

/// The protocol's version: a hook and a judge of different versions never
/// decide together (the socket's name already differs between builds).
pub const VERSION: u32 = 1;

/// The largest request header (an agent name, a harness, a stamp).
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;

/// The largest reply: a deny's reason may quote the whole action.
pub const MAX_REPLY_BYTES: usize = MAX_PAYLOAD_BYTES + 64 * 1024;

/// What a hook asks: decide the call in the payload frame that follows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    pub version: u32,
    #[serde(with = "harness_name")]
    pub harness: Harness,
    /// The agent the call is attributed to, as the hook worked it out
    /// (its `--agent`, or the default from its own environment).
    pub agent: String,
    /// How long the judge may wait for a human on this call: the hook's
    /// deadline, less the margin it keeps to answer.
    pub wait_ms: u64,
    /// The configuration and policy files as the hook sees them
    /// ([`super::address::freshness`]); a judge whose differ does not decide.
    pub stamp: String,
}

/// What a judge answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reply", rename_all = "lowercase", deny_unknown_fields)]
pub enum Reply {
    /// The judge decides this call; the verdict follows.
    Accepted { version: u32 },
    /// The files changed since the judge read them: decide in-process (the
    /// judge reloads meanwhile).
    Stale { version: u32 },
    /// The judge will not decide this call (another version, a malformed
    /// request, it is stopping); `why` is for the log.
    Refused { version: u32, why: String },
    /// The decision.
    Decided { version: u32, verdict: Verdict },
}

impl Reply {
    pub fn version(&self) -> u32 {
        match self {
            Self::Accepted { version }
            | Self::Stale { version }
            | Self::Refused { version, .. }
            | Self::Decided { version, .. } => *version,
        }
    }
}

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    #[error("the connection failed: {0}")]
    Io(#[from] std::io::Error),
    #[error("a frame of {size} bytes is over the limit of {limit}")]
    TooLarge { size: usize, limit: usize },
    #[error("a frame is not the expected message: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// Appends a frame holding `bytes` (its length prefix, then `bytes`) to
/// `out`, so that a message goes out in one write.
fn frame_into(out: &mut Vec<u8>, bytes: &[u8]) -> Result<(), WireError> {
    let size = u32::try_from(bytes.len())
        .map_err(|_| WireError::TooLarge { size: bytes.len(), limit: u32::MAX as usize })?;
    out.reserve(4 + bytes.len());
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// The size a length prefix announces, if within `limit`.
fn announced(prefix: [u8; 4], limit: usize) -> Result<usize, WireError> {
    let size = u32::from_be_bytes(prefix) as usize;
    if size > limit {
        return Err(WireError::TooLarge { size, limit });
    }
    Ok(size)
}

/// Writes one frame holding `bytes`.
pub async fn write_frame(
    out: &mut (impl AsyncWrite + Unpin),
    bytes: &[u8],
) -> Result<(), WireError> {
    let mut frame = Vec::new();
    frame_into(&mut frame, bytes)?;
    out.write_all(&frame).await?;
    Ok(())
}

/// Reads one frame of at most `limit` bytes.
pub async fn read_frame(
    input: &mut (impl AsyncRead + Unpin),
    limit: usize,
) -> Result<Vec<u8>, WireError> {
    let mut size = [0; 4];
    input.read_exact(&mut size).await?;
    let mut bytes = vec![0; announced(size, limit)?];
    input.read_exact(&mut bytes).await?;
    Ok(bytes)
}

/// Writes `message` as one JSON frame, then flushes.
pub async fn send(
    out: &mut (impl AsyncWrite + Unpin),
    message: &impl Serialize,
) -> Result<(), WireError> {
    write_frame(out, &serde_json::to_vec(message)?).await?;
    out.flush().await?;
    Ok(())
}

/// Reads one JSON frame of at most `limit` bytes as a `T`.
pub async fn receive<T: DeserializeOwned>(
    input: &mut (impl AsyncRead + Unpin),
    limit: usize,
) -> Result<T, WireError> {
    Ok(serde_json::from_slice(&read_frame(input, limit).await?)?)
}

/// The hook's end, which needs no async runtime: the same frames over
/// blocking I/O (time-outs are the socket's).
pub mod blocking {
    use super::{DeserializeOwned, Read, Request, WireError, Write, announced, frame_into};

    /// Writes `request` as a JSON frame and `payload` as the frame after
    /// it, in one write: the judge wakes once to read both.
    pub fn send_call(
        out: &mut impl Write,
        request: &Request,
        payload: &[u8],
    ) -> Result<(), WireError> {
        let mut frames = Vec::new();
        frame_into(&mut frames, &serde_json::to_vec(request)?)?;
        frame_into(&mut frames, payload)?;
        out.write_all(&frames)?;
        out.flush()?;
        Ok(())
    }

    /// Reads one JSON frame of at most `limit` bytes as a `T`.
    pub fn receive<T: DeserializeOwned>(
        input: &mut impl Read,
        limit: usize,
    ) -> Result<T, WireError> {
        let mut size = [0; 4];
        input.read_exact(&mut size)?;
        let mut bytes = vec![0; announced(size, limit)?];
        input.read_exact(&mut bytes)?;
        Ok(serde_json::from_slice(&bytes)?)
    }
}

/// A harness travels as its name.
mod harness_name {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::hook::harness::Harness;

    pub fn serialize<S: Serializer>(harness: &Harness, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(harness.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<Harness, D::Error> {
        let name = String::deserialize(input)?;
        Harness::parse(&name).ok_or_else(|| D::Error::custom(format!("no harness '{name}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_request_and_each_reply_travel_whole_and_oversized_or_foreign_frames_are_refused() {
        let request = Request {
            version: VERSION,
            harness: Harness::Codex,
            agent: "codex:me@host".into(),
            wait_ms: 5_000,
            stamp: "ab".into(),
        };
        let (mut hook, mut judge) = tokio::io::duplex(1024);
        send(&mut hook, &request).await.unwrap();
        assert_eq!(receive::<Request>(&mut judge, MAX_REQUEST_BYTES).await.unwrap(), request);
        for reply in [
            Reply::Accepted { version: VERSION },
            Reply::Stale { version: VERSION },
            Reply::Refused { version: VERSION, why: "stopping".into() },
            Reply::Decided { version: VERSION, verdict: Verdict::Deny("safety-dongle: no".into()) },
            Reply::Decided { version: VERSION, verdict: Verdict::Defer },
        ] {
            send(&mut judge, &reply).await.unwrap();
            assert_eq!(receive::<Reply>(&mut hook, MAX_REPLY_BYTES).await.unwrap(), reply);
        }
        write_frame(&mut hook, &[b'x'; 64]).await.unwrap();
        assert!(matches!(
            read_frame(&mut judge, 63).await,
            Err(WireError::TooLarge { size: 64, limit: 63 })
        ));
        let (mut hook, mut judge) = tokio::io::duplex(1024);
        for foreign in [
            r#"{"version":1,"harness":"vim","agent":"a","wait_ms":1,"stamp":""}"#,
            r#"{"version":1,"harness":"codex","agent":"a","wait_ms":1,"stamp":"","allow":true}"#,
        ] {
            write_frame(&mut hook, foreign.as_bytes()).await.unwrap();
            assert!(matches!(
                receive::<Request>(&mut judge, MAX_REQUEST_BYTES).await,
                Err(WireError::Malformed(_))
            ));
        }
        write_frame(&mut judge, br#"{"reply":"decided","version":1,"verdict":"allow"}"#)
            .await
            .unwrap();
        assert!(receive::<Reply>(&mut hook, MAX_REPLY_BYTES).await.is_err(), "there is no allow");
    }

    #[tokio::test]
    async fn the_blocking_end_speaks_the_same_frames() {
        let request = Request {
            version: VERSION,
            harness: Harness::ClaudeCode,
            agent: "a".into(),
            wait_ms: 1,
            stamp: "s".into(),
        };
        let mut sent = Vec::new();
        blocking::send_call(&mut sent, &request, b"payload").unwrap();
        let mut judge = sent.as_slice();
        assert_eq!(receive::<Request>(&mut judge, MAX_REQUEST_BYTES).await.unwrap(), request);
        assert_eq!(read_frame(&mut judge, 7).await.unwrap(), b"payload");

        let reply = Reply::Decided { version: VERSION, verdict: Verdict::Deny("no".into()) };
        let (mut judge, mut hook) = tokio::io::duplex(1024);
        send(&mut judge, &reply).await.unwrap();
        write_frame(&mut judge, &[b'x'; 64]).await.unwrap();
        drop(judge);
        let mut received = Vec::new();
        hook.read_to_end(&mut received).await.unwrap();
        let mut hook = received.as_slice();
        assert_eq!(blocking::receive::<Reply>(&mut hook, MAX_REPLY_BYTES).unwrap(), reply);
        assert!(matches!(
            blocking::receive::<Reply>(&mut hook, 63),
            Err(WireError::TooLarge { size: 64, limit: 63 })
        ));
    }
}
