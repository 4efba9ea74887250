//! A human's answers, collected: `verify_challenge` (one attempt at a
//! challenge's code) and `confirm_operation` (the human's Approve on a
//! request a step raised; a call waits no longer than its request may
//! take, then says the request is still pending and to ask again).
//!
//! A right code lifts the block (danger zone) or the pause (verify tier),
//! from any session. A wrong one from the agent's own session spends the
//! challenge and counts against the agent; from any other session it
//! spends nothing and counts against that session (`attempts`). An
//! approval is collected once; collecting a step-limit pause's grants a
//! fresh step budget. Every answer is written durably, off the async
//! worker threads, before the agent hears of it.

use std::sync::Arc;

use serde::Serialize;

use crate::{
    protocol::registry::CallContext,
    store::{
        StoreError,
        audit::{AuditDecision, AuditEntry, AuditEvent, AuditStage},
        now_ms,
        records::{self, ChallengeRow},
        rfc3339,
    },
};

use crate::verify::{
    approvals::{Collector, Settled},
    attempts::{self, Subject},
    challenge::{Attempt, FailedBecause, Loaded},
    error::VerifyError,
    humans::approved,
};

use super::core::LoopCore;

/// `verify_challenge`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct VerificationResult {
    pub verified: bool,
    pub challenge_id: String,
    pub element_name: String,
    pub kind: &'static str,
}

/// `confirm_operation`'s answer.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalResult {
    pub approved: bool,
    pub approval_id: String,
    pub element_name: String,
    /// The Approve an earlier call of this session collected, told again
    /// (that call's client may have given up before hearing it): it allows
    /// the one action it approved, not another.
    pub redelivered: bool,
}

pub struct HumanAnswers {
    core: Arc<LoopCore>,
}

impl HumanAnswers {
    pub fn new(core: Arc<LoopCore>) -> Self {
        Self { core }
    }

    /// Whether `call` comes from one of the challenge's agent's own
    /// sessions: the one whose call raised the challenge, one in which this
    /// process runs the agent's execution, or one its block tainted.
    fn is_agents_own_session(&self, call: &CallContext, challenge: &ChallengeRow) -> bool {
        challenge.session_id.as_deref() == Some(call.session_id.as_str())
            || self.core.sessions.acts_as(&call.session_id, &challenge.agent)
    }

    /// `verify_challenge`: one attempt at the code of a challenge.
    pub async fn verify_challenge(
        &self,
        call: &CallContext,
        challenge_id: &str,
        typed: &str,
    ) -> Result<VerificationResult, VerifyError> {
        let now = now_ms();
        let loaded = self.core.store.read(|tx| records::challenge(tx, challenge_id))?;
        let own = loaded
            .as_ref()
            .is_some_and(|(challenge, _)| self.is_agents_own_session(call, challenge));
        let (core, session, id, typed) =
            (self.core.clone(), call.session_id.clone(), challenge_id.to_owned(), typed.to_owned());
        crate::store::blocking(move || {
            core.store.write_durable(|tx| attempt(&core, tx, &session, own, &id, &typed, now))
        })
        .await?
    }

    /// `confirm_operation`: waits (bounded) for the human's answer to an
    /// approval request a step raised. Only the human's Approve, delivered
    /// by the verifier, makes this succeed; it is used once. The same
    /// session's next call hears it once more, without a second use: the
    /// client may have given up on this call before the answer reached it,
    /// which the server cannot always know (its notice can come later).
    pub async fn confirm(
        &self,
        call: &CallContext,
        approval_id: &str,
    ) -> Result<ApprovalResult, VerifyError> {
        let humans = &self.core.humans;
        if humans.is_gate_approval(approval_id) {
            return Err(VerifyError::BelongsToGatedCall(approval_id.to_owned()));
        }
        let agent = humans.agent_of(approval_id).unwrap_or_default();
        let collector = Collector::Confirm { session: &call.session_id };
        let settled = humans.wait(approval_id, call, collector).await;
        if let Settled::ApprovedBefore = settled {
            return Ok(ApprovalResult {
                approved: true,
                approval_id: approval_id.to_owned(),
                element_name: agent,
                redelivered: true,
            });
        }
        let (approved, collection) = approved(approval_id, settled, &self.core.store, collector)?;
        let (core, session, who) = (self.core.clone(), call.session_id.clone(), agent.clone());
        let approval_id = approved.approval_id().to_owned();
        let id = approval_id.clone();
        core.clone()
            .store
            .write_durable_async(move |tx| {
                core.spend_approval(tx, &approved, &who, &session, AuditEvent::Confirm, Some(&id))
            })
            .await?;
        collection.finish(Some(&call.session_id));
        Ok(ApprovalResult { approved: true, approval_id, element_name: agent, redelivered: false })
    }
}

/// One attempt, in one durable transaction: the lockout first, then the
/// challenge's state, then the code.
fn attempt(
    core: &LoopCore,
    tx: &crate::store::Tx<'_>,
    session: &str,
    own: bool,
    challenge_id: &str,
    typed: &str,
    now: i64,
) -> Result<Result<VerificationResult, VerifyError>, StoreError> {
    let id = challenge_id.to_owned();
    let challenge = Loaded::load(tx, challenge_id, now)?;
    let row = match &challenge {
        Loaded::Unknown => return Ok(Err(VerifyError::Invalid { id, why: "no such challenge" })),
        Loaded::Approval(_) => {
            return Ok(Err(VerifyError::Invalid {
                id,
                why: "this is an approval request: a human answers it in the dialog, and the agent calls confirm_operation",
            }));
        }
        Loaded::Pending(pending) => pending.row().clone(),
        Loaded::Spent(row) | Loaded::Expired(row) => row.clone(),
    };
    let agent = row.agent.as_str();
    let subject = if own { Subject::Agent(agent) } else { Subject::Session(session) };
    if let Some(until) = attempts::locked_until(tx, &subject, now)? {
        core.audit(
            tx,
            AuditEntry {
                session_id: Some(session),
                stage: Some(AuditStage::RateLimit),
                ..AuditEntry::of(agent, AuditEvent::Verify, AuditDecision::LockedOut)
            },
        )?;
        let retry_after_secs = (until - now + 999) / 1000;
        return Ok(Err(if own {
            VerifyError::AgentLockedOut { agent: agent.to_owned(), retry_after_secs, until }
        } else {
            VerifyError::SessionLockedOut { retry_after_secs, until }
        }));
    }
    let failed = |reason: AuditStage,
                  error: VerifyError|
     -> Result<Result<VerificationResult, VerifyError>, StoreError> {
        let stage = if own { reason } else { AuditStage::OtherSession };
        core.audit(
            tx,
            AuditEntry {
                session_id: Some(session),
                stage: Some(stage),
                ..AuditEntry::of(agent, AuditEvent::Verify, AuditDecision::Failed)
            },
        )?;
        if let Some(until) = attempts::record_failure(tx, &subject, now)? {
            let what = format!("{} locked out until {}", subject.key(), rfc3339(until));
            core.audit(
                tx,
                AuditEntry {
                    session_id: Some(session),
                    hint: Some(&what),
                    stage: Some(AuditStage::RateLimit),
                    ..AuditEntry::of(agent, AuditEvent::Lockout, AuditDecision::LockedOut)
                },
            )?;
        }
        Ok(Err(error))
    };
    let pending = match challenge {
        Loaded::Pending(pending) => pending,
        Loaded::Expired(row) => {
            return failed(
                AuditStage::Expired,
                VerifyError::Expired { id, expired_at: row.expires_at },
            );
        }
        _ => return failed(AuditStage::Used, VerifyError::Used(id)),
    };
    match pending.attempt(typed) {
        Attempt::Verified(verified) => {
            let (row, how) = verified.commit(tx)?;
            core.audit(
                tx,
                AuditEntry {
                    session_id: Some(session),
                    stage: Some(row.kind.into()),
                    ..AuditEntry::of(&row.agent, AuditEvent::Verify, how.into())
                },
            )?;
            Ok(Ok(VerificationResult {
                verified: true,
                challenge_id: row.id,
                element_name: row.agent,
                kind: row.kind.name(),
            }))
        }
        Attempt::Failed(failure) => {
            // Only the agent's own attempts spend the challenge.
            if own {
                failure.spend(tx)?;
            }
            let reason = match failure.because {
                FailedBecause::Unshown => AuditStage::Unshown,
                FailedBecause::WrongCode => AuditStage::WrongCode,
            };
            let error =
                if own { VerifyError::Failed(id) } else { VerifyError::FailedElsewhere(id) };
            failed(reason, error)
        }
    }
}
