//! What a hook answers, before a harness's adapter writes it in that
//! harness's own format: defer to the harness, or deny with a reason.
//!
//! There is no `allow` and no `ask`. The answer never loosens a harness's
//! own permissions: when the policy lets an action through, or a human
//! approved it through the verifier, the hook states no decision and the
//! harness's rules (and prompts) apply as before; `allow` would also skip
//! the harness's own permission prompt (the one showing a write's
//! content). `ask` runs the tool in some harnesses and hangs others, so
//! where a human must decide, the dongle asks through its verifier and
//! the answer is defer or deny.
//!
//! Every failure of the hook's own is a deny: [`answer_failing_closed`]
//! turns an error or a panic into one (most harnesses run the tool when a
//! hook exits without an answer).

use std::{fmt::Display, panic::AssertUnwindSafe, sync::Arc};

use crate::{
    gate::GateDecision, redact::redact_text, safety::core::LoopCore, store::audit::AuditEvent,
};

/// The hook's decision on one tool call, in no harness's format (and as
/// the judge sends it back to a hook, `judge::wire`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// State no decision: the harness's own rules apply.
    Defer,
    /// Refuse, with the reason the harness shows its model and user.
    Deny(String),
}

impl Verdict {
    /// The verdict for the gate's decision.
    pub fn of(decision: &GateDecision) -> Self {
        match decision {
            GateDecision::Continue { .. } | GateDecision::HumanApproved(_) => Self::Defer,
            GateDecision::Deny { reason, .. } => Self::Deny(format!("safety-dongle: {reason}")),
        }
    }
}

/// What a hook process writes and how it exits, in a harness's format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// One JSON line on standard output, if the harness reads one.
    pub stdout: Option<serde_json::Value>,
    /// Text on standard error (a harness that blocks on exit 2 shows it).
    pub stderr: Option<String>,
    /// The exit code.
    pub exit_code: u8,
}

/// What one hook call decides about, once its payload is read and the
/// loop assembled: the refusal audited if deciding then panics.
pub struct Attempt {
    pub core: Arc<LoopCore>,
    pub agent: String,
    /// The gate's session for this call (`<harness>:<session_id>`).
    pub session: String,
    /// The action text, as the gate audits it.
    pub action: String,
}

impl Attempt {
    /// Audits that this call was refused because deciding it failed (a
    /// panic, or a judge that stopped while deciding it).
    pub fn audit_refusal(&self) {
        self.core.audit_own_failure(
            &self.agent,
            Some(&self.session),
            AuditEvent::Gate,
            &redact_text(&self.action),
        );
    }
}

/// The hook's verdict, failing closed whatever happens while `decide`
/// runs: its verdict; a deny saying why when it could not decide; a deny
/// when it panicked, with the refusal audited for the [`Attempt`] it had
/// named by then.
pub fn answer_failing_closed<E: Display>(
    decide: impl FnOnce(&mut Option<Attempt>) -> Result<Verdict, E>,
) -> Verdict {
    let mut attempt = None;
    match std::panic::catch_unwind(AssertUnwindSafe(|| decide(&mut attempt))) {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(reason)) => Verdict::Deny(format!(
            "safety-dongle could not evaluate this tool call, so it is refused: {reason}"
        )),
        Err(_) => {
            if let Some(attempt) = &attempt {
                attempt.audit_refusal();
            }
            Verdict::Deny(
                "safety-dongle failed while evaluating this tool call, so it is refused".into(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_and_a_humans_approve_defer_and_a_deny_says_why() {
        assert_eq!(Verdict::of(&GateDecision::Continue { factors: vec![] }), Verdict::Defer);
        assert_eq!(
            Verdict::of(&GateDecision::HumanApproved(crate::gate::HumanApproval::for_tests())),
            Verdict::Defer
        );
        assert_eq!(
            Verdict::of(&GateDecision::Deny { reason: "no".into(), factors: vec![] }),
            Verdict::Deny("safety-dongle: no".into())
        );
        let failed = answer_failing_closed(|_| -> Result<Verdict, String> { Err("bad".into()) });
        assert!(matches!(failed, Verdict::Deny(reason) if reason.ends_with("refused: bad")));
    }
}
