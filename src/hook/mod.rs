//! Enforcement hooks for MCP clients that offer them: the client asks
//! before each tool call, so enforcement does not depend on the agent
//! reporting its actions.

pub mod claude_code;
pub mod claude_settings;
pub mod copilot;
pub mod cursor;
pub mod droid;
pub mod harness;
pub mod identity;
pub mod opencode;
pub mod patch_envelope;
