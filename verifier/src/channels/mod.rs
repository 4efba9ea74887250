//! The ways a request reaches a human, tried in the configured order until
//! one works. A channel either presents the request (and, for approvals,
//! returns the human's answer) or says why it could not.

mod command;
mod dialog;
mod notification;
mod terminal;

use crate::protocol::{Channel, Kind, Request};

/// The human's answer to an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Deny,
}

impl Decision {
    pub fn name(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Deny => "deny",
        }
    }
}

/// What is being shown: the request, and the code when there is one.
pub struct Presentation<'a> {
    pub request: &'a Request,
    /// The code in display form, for code requests.
    pub code: Option<&'a str>,
}

impl Presentation<'_> {
    pub fn title(&self) -> &'static str {
        match self.request.kind {
            Kind::Code => "safety-dongle: verification code",
            Kind::Approval => "safety-dongle: approve this action?",
        }
    }

    /// The text a human reads, for every channel that shows text.
    pub fn body(&self) -> String {
        let r = self.request;
        match self.code {
            Some(code) => format!(
                "Agent '{}' was {}: {}\n\nAction: {}\n\nOnly if you want to allow it, give your agent this code:\n\n    {code}\n\nChallenge {} - valid until {}.\nIf you did not expect this, do nothing.",
                r.agent,
                if r.tier.as_deref() == Some("verify") { "paused" } else { "stopped" },
                r.reason,
                r.action,
                r.id,
                r.expires_at
            ),
            None => format!(
                "Agent '{}' wants to:\n\n    {}\n\nWhy it needs you: {}\n\nApprove only if you expected this. Request {} - open until {}.",
                r.agent, r.action, r.reason, r.id, r.expires_at
            ),
        }
    }
}

/// Presents on one channel. `announce` is called once the request is in
/// front of a human (before waiting on them). Returns the decision for
/// approvals, `None` for codes.
pub fn present(channel: Channel, shown: &Presentation<'_>, announce: &mut dyn FnMut()) -> Result<Option<Decision>, String> {
    match channel {
        Channel::Dialog => dialog::present(shown, announce),
        Channel::Notification => notification::present(shown, announce),
        Channel::Command => command::present(shown, announce),
        Channel::Terminal => terminal::present(shown, announce),
    }
}
