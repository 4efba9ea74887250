//! The MCP tools an agent sees: which endpoint tools exist in each endpoint
//! mode, and which operations each tool may carry.
//!
//! `semantic` exposes `mcp_aql_create/read/update/delete/execute`, `single`
//! exposes `mcp_aql`, `all` exposes both. A semantic tool accepts only its
//! own category's operations; `mcp_aql` accepts every operation.

use std::{fmt, str::FromStr};

use super::registry::Category;

pub const UNIFIED_TOOL: &str = "mcp_aql";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndpointMode {
    #[default]
    Semantic,
    Single,
    All,
}

impl EndpointMode {
    pub fn name(self) -> &'static str {
        match self {
            Self::Semantic => "semantic",
            Self::Single => "single",
            Self::All => "all",
        }
    }

    /// The endpoint tools registered in this mode, in listing order.
    pub fn endpoints(self) -> Vec<Endpoint> {
        let semantic = Category::ALL.into_iter().map(Endpoint::Semantic);
        match self {
            Self::Semantic => semantic.collect(),
            Self::Single => vec![Endpoint::Unified],
            Self::All => semantic.chain([Endpoint::Unified]).collect(),
        }
    }

    /// The endpoint tool introspection names as an operation's `mcpTool`.
    pub fn home_endpoint(self, category: Category) -> Endpoint {
        match self {
            Self::Semantic | Self::All => Endpoint::Semantic(category),
            Self::Single => Endpoint::Unified,
        }
    }

    /// Finds the endpoint behind an MCP tool name, if this mode exposes it.
    pub fn endpoint_for_tool(self, tool: &str) -> Option<Endpoint> {
        self.endpoints().into_iter().find(|e| e.tool_name() == tool)
    }
}

impl fmt::Display for EndpointMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EndpointMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "semantic" => Ok(Self::Semantic),
            "single" => Ok(Self::Single),
            "all" => Ok(Self::All),
            other => Err(format!(
                "unknown endpoint mode '{other}' (expected semantic, single or all)"
            )),
        }
    }
}

/// One MCP tool carrying MCP-AQL requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Semantic(Category),
    Unified,
}

impl Endpoint {
    pub fn tool_name(self) -> &'static str {
        match self {
            Self::Semantic(Category::Create) => "mcp_aql_create",
            Self::Semantic(Category::Read) => "mcp_aql_read",
            Self::Semantic(Category::Update) => "mcp_aql_update",
            Self::Semantic(Category::Delete) => "mcp_aql_delete",
            Self::Semantic(Category::Execute) => "mcp_aql_execute",
            Self::Unified => UNIFIED_TOOL,
        }
    }

    /// The category this endpoint is restricted to; `None` for `mcp_aql`.
    pub fn category(self) -> Option<Category> {
        match self {
            Self::Semantic(c) => Some(c),
            Self::Unified => None,
        }
    }

    pub fn accepts(self, category: Category) -> bool {
        self.category().is_none_or(|c| c == category)
    }
}
