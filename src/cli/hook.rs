//! `safety-dongle hook claude-code`: Claude Code's PreToolUse hook. Reads
//! the payload on stdin, evaluates the tool call with the same policy and
//! state as the server (a blocked agent stays blocked here too), writes
//! the same audit rows, and answers on stdout. Any failure of its own —
//! unreadable payload, configuration or state — is a deny: it fails
//! closed.

use std::{io::Read, process::ExitCode};

use crate::{
    hook::claude_code::{self, MAX_PAYLOAD_BYTES},
    protocol::registry::CallContext,
};

use super::HookArgs;

pub(super) fn run(args: HookArgs) -> ExitCode {
    let answer = match decide(&args) {
        Ok(answer) => answer,
        Err(reason) => claude_code::deny(&format!("safety-dongle could not evaluate this tool call, so it is refused: {reason}")),
    };
    println!("{answer}");
    ExitCode::SUCCESS
}

fn decide(args: &HookArgs) -> Result<serde_json::Value, String> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(|e| format!("reading the payload failed: {e}"))?;
    let call = claude_code::parse(&payload)?;
    let mut config = args.config.load_or_diagnose().map_err(|errors| {
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        format!("the configuration has errors: {}", messages.join("; "))
    })?;
    if !args.policies.is_empty() {
        config.policies = args.policies.clone();
    }
    let safety = super::serve::build_safety_loop(&config)?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("no async runtime: {e}"))?;
    let context = CallContext::new(format!("claude-code:{}", call.session_id));
    let decision = runtime.block_on(safety.gate(&context, &args.agent, &claude_code::action_text(&call)));
    Ok(claude_code::output(&decision))
}
