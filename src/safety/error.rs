//! Why the loop refused an execution operation, as data; turned into the
//! wire's `AqlError` in one place ([`From`] below).

use crate::{
    protocol::error::AqlError,
    store::{StoreError, records::BlockRow},
};

use super::lifecycle::LifecycleError;

#[derive(Debug, thiserror::Error)]
pub enum SafetyError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("agent '{}' is hard-blocked", .0.agent)]
    Blocked(BlockRow),
    #[error("agent '{agent}' already runs execution {execution_id}")]
    ExecutionExists { agent: String, execution_id: String },
    #[error("agent '{0}' has no running execution")]
    NoActiveExecution(String),
    #[error("{operation}: the execution {error}")]
    Lifecycle { operation: &'static str, error: LifecycleError },
}

impl From<SafetyError> for AqlError {
    fn from(error: SafetyError) -> Self {
        match error {
            SafetyError::Store(error) => error.into(),
            SafetyError::Blocked(block) => {
                AqlError::agent_blocked(&block.agent, &block.challenge_id, &block.reason)
            }
            SafetyError::ExecutionExists { agent, execution_id } => {
                AqlError::execution_exists(&agent, &execution_id)
            }
            SafetyError::NoActiveExecution(agent) => AqlError::no_active_execution(&agent),
            SafetyError::Lifecycle { operation, error } => AqlError::bad_value(
                operation,
                "element_name",
                &format!("names an execution that {error}"),
            ),
        }
    }
}
