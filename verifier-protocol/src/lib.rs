//! The private pipe between `safety-dongle` and `safety-dongle-verifier`,
//! typed once for both ends: the dongle writes one [`Request`] line to the
//! verifier's stdin, the verifier answers with [`Event`] lines on its
//! stdout. Lines are newline-delimited JSON objects carrying the protocol
//! [`VERSION`]; a line of another version, longer than its limit, or not
//! of the expected shape is a [`LineError`], never a guess.
//!
//! No message carries a plaintext code: the verifier reports only the
//! code's salted hash ([`Event::Hash`]) and shows the code to a human.

use std::fmt;

pub mod environment;

use serde::{Deserialize, Serialize};

/// The protocol version both ends speak.
pub const VERSION: u32 = 1;

/// The longest action a request may need to carry whole: above the
/// largest action the dongle accepts at any door (an MCP request or a hook
/// payload of at most 1 MiB, a tool call with 1 MiB of file content and
/// its hint), so every action it can ask about reaches a human. Channels
/// show a bounded part of it, saying how much is not shown.
pub const MAX_ACTION_BYTES: usize = 2 * 1024 * 1024;

/// The longest reason a request may need to carry (every rule that asked,
/// each naming what it matched).
pub const MAX_REASON_BYTES: usize = 256 * 1024;

/// The longest request line the verifier accepts: the action and the
/// reason with every byte JSON-escaped (at most six bytes each, as
/// `\u001b`), and room for the other fields.
pub const MAX_REQUEST_BYTES: u64 = (6 * (MAX_ACTION_BYTES + MAX_REASON_BYTES) + 64 * 1024) as u64;

/// The longest event line the dongle accepts.
pub const MAX_EVENT_BYTES: u64 = 4 * 1024;

/// What the dongle asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Generate and show a fresh verification code (verify tier, danger
    /// zone, an operator's unblock).
    Code,
    /// Ask a human to Approve or Deny (confirm tier, requiresApproval).
    Approval,
}

/// How far a code's agent went: paused (verify tier) or hard-blocked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Verify,
    DangerZone,
}

/// A way of reaching a human, as named in the dongle's config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    Dialog,
    Notification,
    Command,
    Terminal,
}

impl Channel {
    /// The channel's name on the wire and in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dialog => "dialog",
            Self::Notification => "notification",
            Self::Command => "command",
            Self::Terminal => "terminal",
        }
    }
}

/// A human's answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Deny,
    /// Nobody answered before the request expired.
    Timeout,
}

/// The one request of a verifier process.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// [`VERSION`] when written; checked before anything else when read
    /// ([`Request::parse`]).
    pub version: u32,
    pub kind: Kind,
    /// The challenge or approval id (a UUID v4).
    pub id: String,
    pub agent: String,
    /// Set for codes, absent for approvals.
    pub tier: Option<Tier>,
    pub reason: String,
    pub action: String,
    /// RFC 3339.
    pub expires_at: String,
    /// How long the request may stay open before the verifier gives up.
    pub timeout_secs: u64,
    /// Tried in this order until one shows the request.
    pub channels: Vec<Channel>,
    /// The `command` channel's program and arguments.
    pub command: Option<Vec<String>>,
}

impl Request {
    /// The request as one line, newline included.
    pub fn line(&self) -> String {
        line_of(self)
    }

    /// Reads a request line: its version first, then the rest, refusing
    /// fields this version does not know.
    pub fn parse(line: &[u8]) -> Result<Self, LineError> {
        check_line(line, MAX_REQUEST_BYTES)?;
        serde_json::from_slice(line).map_err(|error| LineError::Malformed(error.to_string()))
    }
}

/// What the verifier reports, in order: for a code, `hash` before the code
/// is shown, then `shown` or `unshown`; for an approval, `shown` or
/// `unshown`, then the `decision`. `error` when the request could not be
/// served at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The salted SHA-256 of the code, both hex.
    Hash { salt: String, hash: String },
    /// A human can now see the request on this channel.
    Shown { channel: Channel },
    /// No channel could show the request; one reason per channel tried.
    Unshown { errors: Vec<String> },
    /// The human's answer to an approval.
    Decision { decision: Decision },
    /// The request could not be understood or served.
    Error { message: String },
}

impl Event {
    /// The event as one line with the protocol version, newline included.
    pub fn line(&self) -> String {
        #[derive(Serialize)]
        struct Versioned<'a> {
            version: u32,
            #[serde(flatten)]
            event: &'a Event,
        }
        line_of(&Versioned { version: VERSION, event: self })
    }

    /// Reads an event line of this protocol version.
    pub fn parse(line: &[u8]) -> Result<Self, LineError> {
        check_line(line, MAX_EVENT_BYTES)?;
        serde_json::from_slice(line).map_err(|error| LineError::Malformed(error.to_string()))
    }
}

/// Why a line was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineError {
    TooLong {
        limit: u64,
    },
    /// The line carries no version, or another one.
    Version {
        found: Option<u64>,
    },
    Malformed(String),
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong { limit } => write!(f, "line longer than {limit} bytes"),
            Self::Version { found: Some(found) } => {
                write!(f, "protocol version {found} is not supported (this end speaks {VERSION})")
            }
            Self::Version { found: None } => {
                write!(f, "the line carries no protocol version (this end speaks {VERSION})")
            }
            Self::Malformed(why) => write!(f, "malformed line: {why}"),
        }
    }
}

impl std::error::Error for LineError {}

fn line_of(message: &impl Serialize) -> String {
    // A struct or enum of strings, numbers and lists always serialises.
    let mut line = serde_json::to_string(message).unwrap_or_default();
    line.push('\n');
    line
}

/// Refuses a line over `limit` or of another version, before its shape is
/// read: a future version's fields are never misread as this one's.
fn check_line(line: &[u8], limit: u64) -> Result<(), LineError> {
    if line.len() as u64 > limit {
        return Err(LineError::TooLong { limit });
    }
    #[derive(Deserialize)]
    struct Probe {
        version: Option<u64>,
    }
    let probe: Probe =
        serde_json::from_slice(line).map_err(|error| LineError::Malformed(error.to_string()))?;
    match probe.version {
        Some(version) if version == u64::from(VERSION) => Ok(()),
        found => Err(LineError::Version { found }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request {
        Request {
            version: VERSION,
            kind: Kind::Code,
            id: "3f0c".into(),
            agent: "builder".into(),
            tier: Some(Tier::DangerZone),
            reason: "rm -rf /".into(),
            action: "rm -rf /".into(),
            expires_at: "2026-11-25T10:00:00Z".into(),
            timeout_secs: 300,
            channels: vec![Channel::Dialog, Channel::Terminal],
            command: None,
        }
    }

    #[test]
    fn requests_and_events_read_back_as_written() {
        let written = request();
        assert_eq!(Request::parse(written.line().as_bytes()), Ok(written));
        let events = [
            Event::Hash { salt: "00".into(), hash: "ff".into() },
            Event::Shown { channel: Channel::Command },
            Event::Unshown { errors: vec!["dialog: no display".into()] },
            Event::Decision { decision: Decision::Timeout },
            Event::Error { message: "bad".into() },
        ];
        for event in events {
            let line = event.line();
            assert!(line.ends_with('\n') && line.contains("\"version\":1"), "{line}");
            assert_eq!(Event::parse(line.as_bytes()), Ok(event));
        }
    }

    /// The largest action and reason, made of the bytes JSON escapes
    /// longest, still fit one request line.
    #[test]
    fn the_largest_action_and_reason_fit_a_request_line() {
        let mut largest = request();
        largest.action = "\u{1b}".repeat(MAX_ACTION_BYTES);
        largest.reason = "\u{1}".repeat(MAX_REASON_BYTES);
        let line = largest.line();
        assert!(line.len() as u64 <= MAX_REQUEST_BYTES, "{} > {MAX_REQUEST_BYTES}", line.len());
        assert_eq!(Request::parse(line.as_bytes()), Ok(largest));
    }

    #[test]
    fn lines_of_another_version_length_or_shape_are_refused() {
        let line = request().line().replace("\"version\":1", "\"version\":2");
        assert_eq!(Request::parse(line.as_bytes()), Err(LineError::Version { found: Some(2) }));
        let line = request().line().replace("\"version\":1,", "");
        assert_eq!(Request::parse(line.as_bytes()), Err(LineError::Version { found: None }));
        let line = request().line().replace("\"kind\"", "\"extra\":1,\"kind\"");
        assert!(matches!(Request::parse(line.as_bytes()), Err(LineError::Malformed(_))));
        let long = format!(
            "{{\"version\":1,\"event\":\"error\",\"message\":\"{}\"}}",
            "x".repeat(MAX_EVENT_BYTES as usize)
        );
        assert_eq!(
            Event::parse(long.as_bytes()),
            Err(LineError::TooLong { limit: MAX_EVENT_BYTES })
        );
        let unknown = br#"{"version":1,"event":"decision","decision":"maybe"}"#;
        assert!(matches!(Event::parse(unknown), Err(LineError::Malformed(_))));
    }
}
