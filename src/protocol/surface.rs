//! The MCP tools an agent sees: which endpoint tools exist in each endpoint
//! mode, and which operations each tool may carry.
//!
//! `semantic` exposes `mcp_aql_create/read/update/delete/execute`, `single`
//! exposes `mcp_aql`, `all` exposes both. A semantic tool accepts only its
//! own category's operations; `mcp_aql` accepts every operation.
//!
//! A [`ToolPrefix`] (`mcp-integration.md` 6: `MCP_AQL_TOOL_PREFIX`, then
//! the config file's `tool_prefix`, then none) goes before every tool name,
//! so two MCP-AQL servers can sit side by side in one client: `github_`
//! makes `github_mcp_aql_read`. The [`Surface`] is the mode and the prefix
//! together: the one place tool names are made and recognised.

use crate::names::named_enum;
use std::str::FromStr;

use super::registry::Category;

pub const UNIFIED_TOOL: &str = "mcp_aql";

named_enum! {
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum EndpointMode {
        #[default]
        Semantic => "semantic",
        Single => "single",
        All => "all",
    }
}

impl EndpointMode {
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

impl FromStr for EndpointMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "semantic" => Ok(Self::Semantic),
            "single" => Ok(Self::Single),
            "all" => Ok(Self::All),
            other => {
                Err(format!("unknown endpoint mode '{other}' (expected semantic, single or all)"))
            }
        }
    }
}

/// Lowercase letters, digits and underscores, ending with `_` (6.4); at
/// most [`ToolPrefix::MAX_LEN`] characters, so every tool name stays
/// within MCP clients' 64.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(try_from = "String")]
pub struct ToolPrefix(String);

impl ToolPrefix {
    pub const MAX_LEN: usize = 48;

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ToolPrefix {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let allowed = s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if s.is_empty() {
            return Ok(Self::default());
        }
        if !allowed || !s.ends_with('_') || s.len() > Self::MAX_LEN {
            return Err(format!(
                "tool prefix '{s}' must be lowercase letters, digits and underscores, end with '_' and be at most {} characters (e.g. github_)",
                Self::MAX_LEN
            ));
        }
        Ok(Self(s.to_owned()))
    }
}

impl TryFrom<String> for ToolPrefix {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

/// The tools this server exposes: its endpoint mode and tool prefix.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Surface {
    pub mode: EndpointMode,
    pub prefix: ToolPrefix,
}

impl Surface {
    pub fn new(mode: EndpointMode, prefix: ToolPrefix) -> Self {
        Self { mode, prefix }
    }

    /// The MCP tool name of `endpoint`, prefixed.
    pub fn tool_name(&self, endpoint: Endpoint) -> String {
        format!("{}{}", self.prefix.as_str(), endpoint.tool_name())
    }

    /// The tool introspection names as an operation's `mcpTool`.
    pub fn home_tool(&self, category: Category) -> String {
        self.tool_name(self.mode.home_endpoint(category))
    }

    /// Finds the endpoint behind an MCP tool name, if this server exposes it.
    pub fn endpoint_for_tool(&self, tool: &str) -> Option<Endpoint> {
        let unprefixed = tool.strip_prefix(self.prefix.as_str())?;
        self.mode.endpoint_for_tool(unprefixed)
    }
}

/// One MCP tool carrying MCP-AQL requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Semantic(Category),
    Unified,
}

impl Endpoint {
    /// The tool's name without any prefix.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_follow_the_format_rules() {
        for good in ["github_", "db_", "a1_b_", ""] {
            assert!(good.parse::<ToolPrefix>().is_ok(), "{good}");
        }
        for bad in [
            "github",
            "GitHub_",
            "git-hub_",
            "_x",
            "x y_",
            &format!("{}_", "a".repeat(ToolPrefix::MAX_LEN)),
        ] {
            assert!(bad.parse::<ToolPrefix>().is_err(), "{bad}");
        }
    }

    #[test]
    fn tool_names_carry_the_prefix_and_only_prefixed_names_are_recognised() {
        let surface = Surface::new(EndpointMode::All, "github_".parse().unwrap());
        assert_eq!(surface.tool_name(Endpoint::Semantic(Category::Read)), "github_mcp_aql_read");
        assert_eq!(surface.home_tool(Category::Delete), "github_mcp_aql_delete");
        assert_eq!(surface.endpoint_for_tool("github_mcp_aql"), Some(Endpoint::Unified));
        assert_eq!(surface.endpoint_for_tool("mcp_aql_read"), None);
        assert_eq!(surface.endpoint_for_tool("github_mcp_aql_bogus"), None);
        assert_eq!(
            Surface::default().endpoint_for_tool("mcp_aql_read"),
            Some(Endpoint::Semantic(Category::Read))
        );
    }
}
