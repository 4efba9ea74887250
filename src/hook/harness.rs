//! The coding-agent harnesses the hook speaks for, and what one hooked
//! tool call does, read the same way whichever harness sent it.
//!
//! Each harness sends its own payload (event names, tool names, argument
//! names) and reads its own answer. Its module translates the payload into
//! [`HookCall`]: the harness's session and folders, and the [`Action`]s
//! the call takes, each as the action text the policy sees and the write
//! it makes, if any (a patch envelope is one action per file). Tools that
//! Claude Code also has are translated into Claude Code's names and read
//! by `claude_code`'s one reading, so a shell command or a write is judged
//! alike from every harness. A call the hook cannot read (a write without
//! its path, an unknown tool with a command-shaped argument, a patch whose
//! grammar breaks) is an error, and so a refusal.
//!
//! [`Harness::answer`] writes the gate's decision in the harness's own
//! format with the exit code that blocks there. A call the policy lets
//! through, or a human approved, states no decision where the harness has
//! permissions of its own, so they apply as before; the hook never answers
//! `ask`, which runs the tool in some harnesses and hangs others.

use std::{fmt::Display, panic::AssertUnwindSafe, path::PathBuf, sync::Arc};

use serde_json::{Value, json};

use crate::{
    analysis::FileWrite, gate::GateDecision, names::named_enum, redact::redact_text,
    safety::core::LoopCore,
};

use super::{
    claude_code::{self, PayloadError, PreToolUse},
    copilot, cursor, droid, opencode,
    patch_envelope::{self, PatchError, PatchedFile},
};

named_enum! {
    /// A harness whose tool calls the hook judges (`safety-dongle hook NAME`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Harness {
        ClaudeCode => "claude-code",
        /// GitHub Copilot CLI, both its `preToolUse` and `PreToolUse` formats.
        Copilot => "copilot",
        /// Factory Droid.
        Droid => "droid",
        /// Cursor's `beforeShellExecution`, `beforeMCPExecution`,
        /// `beforeReadFile` and `preToolUse`.
        Cursor => "cursor",
        /// opencode, through the plugin `integrations/opencode/safety-dongle.js`.
        Opencode => "opencode",
    }
}

/// One hooked tool call, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCall {
    /// The harness's session (conversation) id.
    pub session_id: String,
    /// The folder the call runs in, if the harness says.
    pub cwd: Option<String>,
    /// The project the harness runs in, if the payload names it (else the
    /// harness's environment may: [`Harness::project_variable`]).
    pub project: Option<PathBuf>,
    /// What the call does, in order; never empty.
    pub actions: Vec<Action>,
}

/// One thing a call does, as the gate judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Action {
    /// The action text the policy evaluates and the audit shows.
    pub text: String,
    /// The write it makes, judged by its content.
    pub write: Option<FileWrite>,
}

/// Why a payload could not be read as a tool call (the hook then refuses).
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error(transparent)]
    Payload(#[from] PayloadError),
    #[error("the patch cannot be read: {0}")]
    Patch(#[from] PatchError),
    /// The call's shape is one the hook cannot judge.
    #[error("{0}")]
    Unreadable(String),
}

/// The hook's answer: what it prints and the exit code it ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub output: Value,
    pub exit_code: u8,
}

impl Answer {
    fn printed(output: Value) -> Self {
        Self { output, exit_code: 0 }
    }
}

impl Harness {
    /// Reads the payload the harness sent.
    pub fn read(self, bytes: &[u8]) -> Result<HookCall, CallError> {
        if bytes.len() > claude_code::MAX_PAYLOAD_BYTES {
            return Err(PayloadError::TooLarge.into());
        }
        match self {
            Self::ClaudeCode => {
                let call = claude_code::parse(bytes)?;
                Ok(HookCall {
                    actions: vec![Action::of(&call)],
                    session_id: call.session_id,
                    cwd: call.cwd,
                    project: None,
                })
            }
            Self::Copilot => copilot::read(bytes),
            Self::Droid => droid::read(bytes),
            Self::Cursor => cursor::read(bytes),
            Self::Opencode => opencode::read(bytes),
        }
    }

    /// The decision, in the harness's format.
    pub fn answer(self, decision: &GateDecision) -> Answer {
        match decision {
            GateDecision::Deny { reason, .. } => self.refusal(&format!("safety-dongle: {reason}")),
            GateDecision::Continue { .. } | GateDecision::HumanApproved(_) => match self {
                Self::ClaudeCode => Answer::printed(claude_code::output(decision)),
                Self::Copilot | Self::Droid | Self::Cursor => Answer::printed(json!({})),
                Self::Opencode => Answer::printed(opencode::CONTINUE.clone()),
            },
        }
    }

    /// A refusal saying `reason`, also for the hook's own failures.
    pub fn refusal(self, reason: &str) -> Answer {
        match self {
            Self::ClaudeCode | Self::Droid => Answer::printed(claude_code::deny(reason)),
            Self::Copilot => Answer::printed(copilot::deny(reason)),
            Self::Cursor => Answer::printed(cursor::deny(reason)),
            Self::Opencode => Answer::printed(opencode::deny(reason)),
        }
    }

    /// The variable the harness names its project folder in for a hook.
    pub const fn project_variable(self) -> Option<&'static str> {
        match self {
            Self::ClaudeCode => Some(super::identity::CLAUDE_PROJECT_DIR),
            Self::Copilot => Some("COPILOT_PROJECT_DIR"),
            Self::Droid => Some("FACTORY_PROJECT_DIR"),
            Self::Cursor => Some("CURSOR_PROJECT_DIR"),
            Self::Opencode => None,
        }
    }
}

impl Action {
    /// What a call in Claude Code's names does.
    pub fn of(call: &PreToolUse) -> Self {
        Self { text: claude_code::action_text(call), write: claude_code::file_write(call) }
    }

    /// The actions of a patch envelope: one per file.
    pub fn of_patch(envelope: &str) -> Result<Vec<Self>, CallError> {
        Ok(patch_envelope::read(envelope)?
            .into_iter()
            .map(|file| match file {
                PatchedFile::Write(write) => {
                    Self { text: format!("write_file {}", write.path), write: Some(write) }
                }
                PatchedFile::Delete { path } => {
                    Self { text: format!("delete_file {path}"), write: None }
                }
            })
            .collect())
    }
}

/// A call translated into Claude Code's names (`tool_name`, `tool_input`),
/// read by Claude Code's reading, field types checked.
pub fn as_claude_code(tool_name: &str, tool_input: Value) -> Result<Action, CallError> {
    let payload = json!({ "tool_name": tool_name, "tool_input": tool_input });
    let call = claude_code::parse(payload.to_string().as_bytes())?;
    Ok(Action::of(&call))
}

/// An argument that holds a command to run (as text or as a list of
/// words): a tool the hook does not know that carries one is refused,
/// since judging it as a plain call could let the command through unseen.
pub fn command_shaped(input: &Value) -> Option<&'static str> {
    const COMMAND_KEYS: [&str; 5] = ["command", "cmd", "script", "shell_command", "commandLine"];
    COMMAND_KEYS
        .into_iter()
        .find(|key| input.get(*key).is_some_and(|value| value.is_string() || value.is_array()))
}

/// The refusal of an unknown tool that carries a command.
pub fn unknown_command(tool: &str, key: &str) -> CallError {
    CallError::Unreadable(format!(
        "'{tool}' is not a tool safety-dongle knows, and its '{key}' argument looks like a command to run, so what it does cannot be judged"
    ))
}

/// What one hook call decides about, once its payload is read and the
/// loop assembled: the refusal audited if deciding then panics.
pub struct Attempt {
    pub core: Arc<LoopCore>,
    pub agent: String,
    /// The gate's session for this call (`HARNESS:<session_id>`).
    pub session: String,
    /// The action text, as the gate audits it.
    pub action: String,
}

/// The hook's answer, failing closed whatever happens while `decide`
/// runs: its answer; a refusal saying why when it could not decide; a
/// refusal when it panicked, with the refusal audited for the [`Attempt`]
/// it had named by then (a harness runs the tool when a hook exits without
/// an answer, so a panic is a refusal like any other failure of the
/// hook's own).
pub fn answer_failing_closed<T, E: Display>(
    refuse: impl Fn(&str) -> T,
    decide: impl FnOnce(&mut Option<Attempt>) -> Result<T, E>,
) -> T {
    let mut attempt = None;
    match std::panic::catch_unwind(AssertUnwindSafe(|| decide(&mut attempt))) {
        Ok(Ok(answer)) => answer,
        Ok(Err(reason)) => refuse(&format!(
            "safety-dongle could not evaluate this tool call, so it is refused: {reason}"
        )),
        Err(_) => {
            if let Some(Attempt { core, agent, session, action }) = &attempt {
                core.audit_own_failure(agent, Some(session), "gate", &redact_text(action));
            }
            refuse("safety-dongle failed while evaluating this tool call, so it is refused")
        }
    }
}
