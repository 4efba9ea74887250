//! Enforcement hooks for the coding agents that offer them: the harness
//! asks before each tool call, so enforcement does not depend on the agent
//! reporting its actions. One mechanism reads every harness's call
//! (`reading`, `patch`) and decides (`answer`); each harness has an
//! adapter (`harness`) naming its payload, tools and answer format.

pub mod answer;
pub mod claude_code;
pub mod claude_settings;
pub mod codex;
pub mod gemini;
pub mod harness;
pub mod identity;
pub mod install;
pub mod patch;
pub mod reading;
