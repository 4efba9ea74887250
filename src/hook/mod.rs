//! Enforcement hooks for the coding agents that offer them: the harness
//! asks before each tool call, so enforcement does not depend on the agent
//! reporting its actions. One mechanism reads every harness's call
//! (`reading`, with `analysis::envelope` for patch envelopes) and decides (`answer`); each harness has an
//! adapter (`harness`) naming its payload, tools and answer format.

pub mod answer;
pub mod claude_code;
pub mod claude_settings;
pub mod codex;
pub mod codex_settings;
pub mod copilot;
pub mod copilot_settings;
pub mod cursor;
pub mod cursor_settings;
pub mod droid;
pub mod droid_settings;
pub mod gemini;
pub mod gemini_settings;
pub mod grouped;
pub mod harness;
pub mod identity;
pub mod inspection;
pub mod install;
pub mod opencode;
pub mod opencode_settings;
pub mod reading;
