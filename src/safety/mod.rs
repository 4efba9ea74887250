//! The execution safety loop (spec 8.6-8.8): the typed execution
//! lifecycle, the five-stage evaluator, the directive agents obey, what
//! every acting path shares (`core`: the agent's block, pause and step
//! budget in the shared state, and this process's `sessions`), the
//! executions around steps, the human answers collected for them
//! (`answers`), their errors, and the MCP-AQL operations.

pub mod analysing;
pub mod answers;
pub mod core;
pub mod directive;
pub mod error;
pub mod evaluator;
pub mod executions;
pub mod lifecycle;
#[cfg(test)]
mod model_tests;
pub mod operations;
pub mod sessions;
