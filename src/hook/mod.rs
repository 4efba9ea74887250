//! Enforcement hooks for MCP clients that offer them: the client asks
//! before each tool call, so enforcement does not depend on the agent
//! reporting its actions.

pub mod claude_code;
pub mod claude_settings;
pub mod copilot;
pub mod copilot_settings;
pub mod cursor;
pub mod cursor_settings;
pub mod droid;
pub mod droid_settings;
pub mod harness;
pub mod identity;
pub mod inspection;
pub mod opencode;
pub mod opencode_settings;
pub mod patch_envelope;
