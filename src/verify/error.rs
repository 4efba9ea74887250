//! Why a human's answer could not be used, as data; turned into the
//! wire's `AqlError` in one place ([`From`] below). A failure says nothing
//! about how a code was wrong.

use serde_json::json;

use crate::{protocol::error::AqlError, store::StoreError};

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
    #[error("'{0}' expired")]
    Expired(String),
    #[error("'{0}' was used already")]
    Used(String),
    /// A wrong code from the agent's own session: the challenge is spent.
    #[error("verification of '{0}' failed")]
    Failed(String),
    /// A wrong code from another session: nothing was spent.
    #[error("verification of '{0}' failed in a session that is not the agent's")]
    FailedElsewhere(String),
    #[error("agent '{agent}' is locked out for {retry_after_secs} s")]
    AgentLockedOut { agent: String, retry_after_secs: i64 },
    #[error("this session is locked out for {retry_after_secs} s")]
    SessionLockedOut { retry_after_secs: i64 },
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
            VerifyError::Expired(id) => AqlError::token_expired(&id),
            VerifyError::Used(id) => AqlError::token_used(&id),
            VerifyError::Failed(id) => AqlError::verification_failed(&id),
            VerifyError::FailedElsewhere(id) => AqlError::verification_failed_elsewhere(&id),
            VerifyError::AgentLockedOut { agent, retry_after_secs } => AqlError::rate_limited(&agent, retry_after_secs),
            VerifyError::SessionLockedOut { retry_after_secs } => AqlError::session_rate_limited(retry_after_secs),
            VerifyError::StillPending { id, closes_at, ask_again: AskAgain::ConfirmOperation } => AqlError::confirmation_pending(
                &id,
                &closes_at,
                &format!("call confirm_operation again with approval_id '{id}'"),
                Some(json!({ "operation": "confirm_operation", "params": { "approval_id": id } })),
            ),
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
