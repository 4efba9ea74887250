//! The universal adapter runtime: operations that come from outside the
//! dongle (adapter files over HTTP, downstream MCP servers), registered
//! like the built-in ones and passing the same gate before any call leaves.
//!
//! The top-level `gate` judges each call (with its danger levels, trust
//! matrix and confirmation tokens); here, `naming` turns outside names into
//! MCP-AQL names; `definition` loads adapter files and `http` runs them;
//! `openapi` turns an OpenAPI or Swagger document into an adapter file
//! (both read YAML through `yaml`); `mcp` connects to downstream servers;
//! `error` says why an adapter could not be set up; `json_schema` checks
//! what upstreams send and answer against the schemas they declare;
//! `retry` repeats a call safe to repeat, with one backoff for both kinds.

pub mod definition;
pub mod error;
pub mod http;
pub mod json_schema;
pub mod mcp;
pub mod naming;
pub mod openapi;
pub mod retry;
pub mod yaml;
