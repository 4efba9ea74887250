//! The ways a request reaches a human, tried in the configured order until
//! one works. A channel either presents the request (and, for approvals,
//! returns the human's answer) or says why it could not.

mod command;
mod dialog;
mod notification;
mod terminal;

use verifier_protocol::{Channel, Decision, Kind, Request, Tier};

use crate::plain_text::{Lines, neutralise};

/// The most characters of each field a person is shown; longer text is cut
/// with a note saying how much is missing.
const MAX_AGENT_CHARS: usize = 100;
/// An approval's reason names every rule that asked and its action what a
/// written file will run (`gate::approval_view`), so both have room for a
/// dozen lines.
const MAX_REASON_CHARS: usize = 1_500;
const MAX_ACTION_CHARS: usize = 2_000;
/// Ids and times come from the dongle, but are bounded all the same.
const MAX_FIELD_CHARS: usize = 64;

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

    /// The agent's name as a person is shown it (see `plain_text`).
    pub fn agent(&self) -> String {
        neutralise(&self.request.agent, MAX_AGENT_CHARS, Lines::Marked)
    }

    /// The reason, as a person is shown it.
    pub fn reason(&self) -> String {
        neutralise(&self.request.reason, MAX_REASON_CHARS, Lines::Marked)
    }

    /// The action, on one line, as a person is shown it.
    pub fn action(&self) -> String {
        neutralise(&self.request.action, MAX_ACTION_CHARS, Lines::Marked)
    }

    /// The request's id, as a person is shown it.
    pub fn id(&self) -> String {
        neutralise(&self.request.id, MAX_FIELD_CHARS, Lines::Marked)
    }

    /// When the request ends, as a person is shown it.
    pub fn expires_at(&self) -> String {
        neutralise(&self.request.expires_at, MAX_FIELD_CHARS, Lines::Marked)
    }

    /// The text a human reads, for every channel that shows text: printable
    /// ASCII only, each field bounded, a multi-line action indented so no
    /// line of it can pass for the message around it.
    pub fn body(&self) -> String {
        let r = self.request;
        let action = neutralise(&r.action, MAX_ACTION_CHARS, Lines::Indented("    "));
        let (agent, reason, id, expires_at) =
            (self.agent(), self.reason(), self.id(), self.expires_at());
        match self.code {
            Some(code) => format!(
                "Agent '{agent}' was {}: {reason}\n\nAction: {action}\n\nOnly if you want to allow it, give your agent this code:\n\n    {code}\n\nChallenge {id} - valid until {expires_at}.\nIf you did not expect this, do nothing.",
                if r.tier == Some(Tier::Verify) { "paused" } else { "stopped" },
            ),
            None => format!(
                "Agent '{agent}' wants to:\n\n    {action}\n\nWhy it needs you: {reason}\n\nApprove only if you expected this. Request {id} - open until {expires_at}."
            ),
        }
    }
}

/// Presents on one channel. `announce` is called once the request is in
/// front of a human (before waiting on them). Returns the decision for
/// approvals, `None` for codes.
pub fn present(
    channel: Channel,
    shown: &Presentation<'_>,
    announce: &mut dyn FnMut(),
) -> Result<Option<Decision>, String> {
    match channel {
        Channel::Dialog => dialog::present(shown, announce),
        Channel::Notification => notification::present(shown, announce),
        Channel::Command => command::present(shown, announce),
        Channel::Terminal => terminal::present(shown, announce),
    }
}
