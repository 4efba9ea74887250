//! safety-dongle: an MCP-AQL server that sits between AI agents and what they
//! can touch.
//!
//! Data flows one way: transport (`server`) -> protocol (parse, validate,
//! route) -> operation handlers. The `cli` drives it; `config` and
//! `diagnostics` load and report on the files users write.
//!
//! Modules sit in layers, and production code imports only from its own
//! layer or a lower one (`tests/it/layering.rs` checks it), lowest first:
//! the leaves (`names`, `hex`, `redact`, `diagnostics`), `platform`, the
//! pure `analysis`, the `store`, `protocol`, `config`, `policy`, the
//! humans (`verify`), the loop (`safety`), the `gate`, the doors that use
//! it (`hook`, `adapter`, `lab`), the hook's `judge`, `server` and `cli`. The one upward
//! import is a witness: the store lifts a block only for a
//! `verify::Unblock`.

#![forbid(unsafe_code)]

pub mod adapter;
pub mod analysis;
pub mod cli;
pub mod config;
pub mod diagnostics;
pub mod gate;
pub mod hex;
pub mod hook;
pub mod judge;
pub mod lab;
mod names;
pub mod platform;
pub mod policy;
pub mod protocol;
pub mod redact;
pub mod safety;
pub mod server;
pub mod store;
pub mod verify;
