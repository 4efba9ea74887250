//! The universal adapter runtime: operations that come from outside the
//! dongle (adapter files over HTTP, downstream MCP servers), registered
//! like the built-in ones and passing the same gate before any call leaves.
//!
//! `gate` judges each call; `danger` classifies operations and `trust`
//! holds adapters to the danger x trust matrix; `naming` turns outside
//! names into MCP-AQL names; `tokens` keeps confirmation tokens;
//! `definition` loads adapter files and `http` runs them; `openapi` turns
//! an OpenAPI or Swagger document into an adapter file (both read YAML
//! through `yaml`); `mcp` connects to downstream servers.

pub mod danger;
pub mod definition;
pub mod gate;
pub mod http;
pub mod mcp;
pub mod naming;
pub mod openapi;
pub mod tokens;
pub mod trust;
pub mod yaml;
