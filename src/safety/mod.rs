//! The execution safety loop (spec 8.6-8.8): the typed execution
//! lifecycle, the five-stage evaluator, the directive agents obey, the
//! engine that holds their state, and the MCP-AQL operations.

pub mod attempts;
pub mod directive;
pub mod engine;
pub mod evaluator;
pub mod lifecycle;
#[cfg(test)]
mod model_tests;
pub mod operations;
