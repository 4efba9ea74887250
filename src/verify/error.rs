//! Why a human's answer could not be used, as data; turned into the
//! wire's `AqlError` in one place ([`From`] below). A failure says nothing
//! about how a code was wrong.

use serde_json::json;

use crate::{
    protocol::error::{AqlError, LimitState, LimitWait, LimitWindow},
    store::{StoreError, now_ms, rfc3339},
};

use super::attempts::{FAILURE_WINDOW_MS, FAILURES_PER_WINDOW};

/// How a caller asks again for an answer a human has not given yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskAgain {
    /// `confirm_operation` with the same `approval_id`.
    ConfirmOperation,
    /// The gated call repeated with its confirmation token.
    RepeatTheCall,
}

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("'{id}' cannot be used: {why}")]
    Invalid { id: String, why: &'static str },
    /// Its time ran out at `expired_at` (Unix ms).
    #[error("'{id}' expired")]
    Expired { id: String, expired_at: i64 },
    #[error("'{0}' was used already")]
    Used(String),
    /// A wrong code from the agent's own session: the challenge is spent.
    #[error("verification of '{0}' failed")]
    Failed(String),
    /// A wrong code from another session: nothing was spent.
    #[error("verification of '{0}' failed in a session that is not the agent's")]
    FailedElsewhere(String),
    /// Too many failures: locked out until `until` (Unix ms), which is
    /// `retry_after_secs` from the attempt.
    #[error("agent '{agent}' is locked out for {retry_after_secs} s")]
    AgentLockedOut { agent: String, retry_after_secs: i64, until: i64 },
    #[error("this session is locked out for {retry_after_secs} s")]
    SessionLockedOut { retry_after_secs: i64, until: i64 },
    /// The human has not answered within the wait; the request stays
    /// open until `closes_at`.
    #[error("the human has not answered '{id}' yet")]
    StillPending { id: String, closes_at: String, ask_again: AskAgain },
    #[error("a human denied '{0}'")]
    Denied(String),
    #[error("'{0}' belongs to a gated call")]
    BelongsToGatedCall(String),
}

impl From<VerifyError> for AqlError {
    fn from(error: VerifyError) -> Self {
        match error {
            VerifyError::Store(error) => error.into(),
            VerifyError::Invalid { id, why } => AqlError::token_invalid(&id, why),
            VerifyError::Expired { id, expired_at } => AqlError::token_expired(&id, &rfc3339(expired_at), &rfc3339(now_ms())),
            VerifyError::Used(id) => AqlError::token_used(&id),
            VerifyError::Failed(id) => AqlError::verification_failed(&id),
            VerifyError::FailedElsewhere(id) => AqlError::verification_failed_elsewhere(&id),
            VerifyError::AgentLockedOut { agent, retry_after_secs, until } => AqlError::rate_limited(&agent, &lockout(retry_after_secs, until)),
            VerifyError::SessionLockedOut { retry_after_secs, until } => AqlError::session_rate_limited(&lockout(retry_after_secs, until)),
            // What an Approve/Deny request holds is the confirm tier, where
            // `destructive` operations land (`DangerLevel::risk_floor`); the
            // approval id is what the retry carries.
            VerifyError::StillPending { id, closes_at, ask_again: AskAgain::ConfirmOperation } => AqlError::confirmation_pending(
                &id,
                &closes_at,
                &format!("call confirm_operation again with approval_id '{id}'"),
                Some(json!({ "operation": "confirm_operation", "params": { "approval_id": id } })),
            )
            .to_repeat("confirm_operation", "destructive", &id),
            // The gate names the call and its token ([`AqlError::to_repeat`]).
            VerifyError::StillPending { id, closes_at, ask_again: AskAgain::RepeatTheCall } => {
                AqlError::confirmation_pending(&id, &closes_at, "repeat the same call with its confirmation token", None)
            }
            VerifyError::Denied(id) => AqlError::approval_denied(&id),
            VerifyError::BelongsToGatedCall(_) => AqlError::bad_value(
                "confirm_operation",
                "approval_id",
                "belongs to a gated call: repeat that call with its confirmation token (params._confirmation) to redeem it",
            ),
        }
    }
}

/// A lockout as the spec's rate limit: [`FAILURES_PER_WINDOW`] failures a
/// minute, none left, open again at `until`.
fn lockout(retry_after_secs: i64, until: i64) -> LimitState {
    const _: () = assert!(FAILURE_WINDOW_MS == 60_000, "the window is reported as a minute");
    LimitState {
        limit: Some((u64::from(FAILURES_PER_WINDOW), LimitWindow::Minute)),
        remaining: 0,
        wait: Some(LimitWait {
            retry_after_seconds: u64::try_from(retry_after_secs).unwrap_or(0),
            resets_at: rfc3339(until),
        }),
    }
}
