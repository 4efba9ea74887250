//! MCP-AQL itself, independent of any transport: the operation registry,
//! request validation, routing, the result envelope and introspection.

pub mod batch;
pub mod canonical;
pub mod envelope;
pub mod error;
pub mod introspect;
pub mod limits;
pub mod paging;
pub mod params;
pub mod registry;
pub mod request;
pub mod router;
pub mod selection;
pub mod surface;
pub mod types;
