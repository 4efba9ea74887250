//! The coding agents whose hooks the dongle answers, and each one's
//! [`Adapter`]: how its payload names the tool call, how its tools are
//! read into actions, how it reads an answer, and where it names the
//! project.
//!
//! A harness without an adapter yet is still named (so `install`, `doctor`
//! and the docs speak of all of them), and `hook` for it denies every call.

use crate::{
    hook::{
        answer::{Reply, Verdict},
        claude_code, codex, copilot, cursor, droid, gemini, opencode,
        reading::{self, PayloadError, Reading, ToolCall, Vocabulary},
    },
    names::named_enum,
};

named_enum! {
    /// A coding agent that runs a hook (or plugin) before each tool call.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum Harness {
        ClaudeCode => "claude-code",
        /// OpenAI's Codex CLI.
        Codex => "codex",
        /// GitHub Copilot CLI.
        Copilot => "copilot",
        /// Google's Gemini CLI.
        Gemini => "gemini",
        /// Factory's Droid.
        Droid => "droid",
        Cursor => "cursor",
        Opencode => "opencode",
    }
}

impl Harness {
    /// The product's own name, for sentences.
    pub fn product(self) -> &'static str {
        match self {
            Self::ClaudeCode => "Claude Code",
            Self::Codex => "Codex",
            Self::Copilot => "Copilot",
            Self::Gemini => "Gemini CLI",
            Self::Droid => "Droid",
            Self::Cursor => "Cursor",
            Self::Opencode => "opencode",
        }
    }
}

/// How the hook speaks one harness.
#[derive(Debug, Clone, Copy)]
pub struct Adapter {
    /// The tool call in a payload (its size already checked).
    pub envelope: fn(&[u8]) -> Result<ToolCall, PayloadError>,
    /// How its tools are read into actions.
    pub vocabulary: Vocabulary,
    /// Its answer for a verdict, with the exit code that blocks there.
    pub reply: fn(&Verdict) -> Reply,
    /// The environment variable in which it tells a hook the project's
    /// folder, if it has one.
    pub project_variable: Option<&'static str>,
}

impl Adapter {
    /// The call in `payload` and what it does.
    pub fn read(&self, payload: &[u8]) -> Result<(ToolCall, Reading), PayloadError> {
        if payload.len() > reading::MAX_PAYLOAD_BYTES {
            return Err(PayloadError::TooLarge);
        }
        let call = (self.envelope)(payload)?;
        let reading = reading::read(&self.vocabulary, &call)?;
        Ok((call, reading))
    }

    /// The payload the real harness sent, recorded as
    /// `tests/fixtures/hook-payloads/HARNESS/CASE.json`, read.
    #[cfg(test)]
    pub fn read_recorded(&self, harness: Harness, case: &str) -> (ToolCall, Reading) {
        let path = format!(
            "{}/tests/fixtures/hook-payloads/{harness}/{case}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let payload = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        self.read(&payload).unwrap_or_else(|e| panic!("{path}: {e}"))
    }
}

impl Harness {
    /// Its adapter, `None` while the hook does not speak it yet.
    pub fn adapter(self) -> Option<&'static Adapter> {
        match self {
            Self::ClaudeCode => Some(&claude_code::ADAPTER),
            Self::Codex => Some(&codex::ADAPTER),
            Self::Gemini => Some(&gemini::ADAPTER),
            Self::Copilot => Some(&copilot::ADAPTER),
            Self::Droid => Some(&droid::ADAPTER),
            Self::Cursor => Some(&cursor::ADAPTER),
            Self::Opencode => Some(&opencode::ADAPTER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_adapter_denies_in_a_way_its_harness_blocks_on() {
        for harness in Harness::ALL {
            let Some(adapter) = harness.adapter() else { continue };
            let reply = (adapter.reply)(&Verdict::Deny("safety-dongle: no".into()));
            let says_why = reply.stdout.as_ref().is_some_and(|out| out.to_string().contains("no"))
                || reply.stderr.as_deref().is_some_and(|err| err.contains("no"));
            assert!(says_why, "{harness}: {reply:?}");
            let defer = (adapter.reply)(&Verdict::Defer);
            assert_eq!(defer.exit_code, 0, "{harness}");
            assert!(!format!("{defer:?}").contains("allow"), "{harness} never allows: {defer:?}");
            assert!(!format!("{reply:?}").contains("\"ask\""), "{harness} never asks: {reply:?}");
        }
    }
}
