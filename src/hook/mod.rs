//! Enforcement hooks for MCP clients that offer them: the client asks
//! before each tool call, so enforcement does not depend on the agent
//! reporting its actions.

pub mod claude_code;
pub mod claude_settings;
pub mod identity;
