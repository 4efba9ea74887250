//! The verifier's side of the private pipe to the dongle: one request line
//! in, event lines out, newline-delimited JSON, versioned and size-limited.
//!
//! The plaintext code never crosses this pipe: only its salted hash does.

use std::io::{BufRead, Read, Write};

use serde::{Deserialize, Serialize};

/// The protocol version both sides must speak.
pub const VERSION: u32 = 1;

/// The longest request line accepted.
pub const MAX_REQUEST_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Show a fresh verification code (verify tier, danger zone).
    Code,
    /// Ask Approve/Deny (confirm tier, requiresApproval).
    Approval,
}

/// How far a code's agent went: paused (verify tier) or hard-blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Verify,
    DangerZone,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Dialog,
    Notification,
    Command,
    Terminal,
}

impl Channel {
    pub fn name(self) -> &'static str {
        match self {
            Self::Dialog => "dialog",
            Self::Notification => "notification",
            Self::Command => "command",
            Self::Terminal => "terminal",
        }
    }
}

/// What the dongle asks for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Checked before the rest is parsed (`read_request`).
    #[allow(dead_code)]
    pub version: u32,
    pub kind: Kind,
    /// The challenge or approval id (a UUID v4).
    pub id: String,
    pub agent: String,
    /// For codes.
    pub tier: Option<Tier>,
    pub reason: String,
    pub action: String,
    /// RFC 3339.
    pub expires_at: String,
    /// How long the request may stay open before the verifier gives up.
    pub timeout_secs: u64,
    pub channels: Vec<Channel>,
    pub command: Option<Vec<String>>,
}

/// What the verifier reports.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The salted SHA-256 of the code, sent before the code is shown.
    Hash { salt: String, hash: String },
    /// A human can now see the request on this channel.
    Shown { channel: Channel },
    /// No channel could show the request; one reason per channel tried.
    Unshown { errors: Vec<String> },
    /// The human's answer to an approval: `approve`, `deny` or `timeout`.
    Decision { decision: String },
    /// The request could not be understood.
    Error { message: String },
}

/// Reads the request line, refusing one longer than the limit.
pub fn read_request(input: impl Read) -> Result<Request, String> {
    let mut line = Vec::new();
    let mut limited = std::io::BufReader::new(input.take(MAX_REQUEST_BYTES + 1));
    limited.read_until(b'\n', &mut line).map_err(|e| format!("reading the request failed: {e}"))?;
    if line.len() as u64 > MAX_REQUEST_BYTES {
        return Err(format!("request longer than {MAX_REQUEST_BYTES} bytes"));
    }
    let value: serde_json::Value = serde_json::from_slice(&line).map_err(|e| format!("malformed request: {e}"))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(VERSION)) {
        return Err(format!("protocol version {version:?} is not supported (this verifier speaks {VERSION})"));
    }
    serde_json::from_value(value).map_err(|e| format!("malformed request: {e}"))
}

/// Writes one event line and flushes, so the dongle sees it at once.
pub fn emit(out: &mut impl Write, event: &Event) {
    #[derive(Serialize)]
    struct Line<'a> {
        version: u32,
        #[serde(flatten)]
        event: &'a Event,
    }
    if let Ok(mut text) = serde_json::to_string(&Line { version: VERSION, event }) {
        text.push('\n');
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
}
