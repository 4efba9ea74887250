//! The universal adapter runtime: operations that come from outside the
//! dongle (downstream MCP servers today), registered like the built-in
//! ones and passing the same gate before any call leaves.
//!
//! `gate` judges each call; `danger` classifies operations; `naming` turns
//! outside names into MCP-AQL names; `tokens` keeps confirmation tokens;
//! `mcp` connects to downstream servers; `openapi` turns an OpenAPI or
//! Swagger document into an adapter file.

pub mod danger;
pub mod gate;
pub mod mcp;
pub mod naming;
pub mod openapi;
pub mod tokens;
