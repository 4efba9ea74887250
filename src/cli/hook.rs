//! `safety-dongle hook claude-code`: Claude Code's PreToolUse hook. Reads
//! the payload on stdin, evaluates the tool call with the same policy and
//! state as the server (a blocked agent stays blocked here too), writes
//! the same audit rows, and answers on stdout. Any failure of its own —
//! unreadable payload, configuration or state, or a panic (audited) — is a
//! deny: it fails closed. So is running out of time: Claude Code lets the
//! tool run when it kills a hook that took too long, so the hook answers
//! deny at its own deadline (`--timeout`), whatever it is waiting for (a
//! payload that never ends, a locked state file, a human), and waits for
//! approvals no longer than the deadline allows.

use std::{
    io::{Read, Write},
    path::PathBuf,
    process::ExitCode,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::Value;

use crate::{
    analysis::WorkingFolder,
    diagnostics::Diagnostic,
    gate::Gate,
    hook::{
        claude_code::{self, Attempt, MAX_PAYLOAD_BYTES, PayloadError},
        claude_settings::MARGIN_SECS,
        identity,
    },
    protocol::registry::{CallContext, SessionEnds},
};

use super::{
    HookArgs,
    assemble::{AssembleError, build_loop_core},
};

pub(super) fn run(args: HookArgs) -> ExitCode {
    let answer = Answer::default();
    let watchdog = answer.clone();
    let deadline = args.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(deadline));
        watchdog.give(&claude_code::deny(&format!("safety-dongle did not decide within its deadline of {deadline} s, so this tool call is refused")));
        std::process::exit(0);
    });
    answer.give(&claude_code::answer_failing_closed(|attempt| decide(&args, attempt)));
    ExitCode::SUCCESS
}

/// The one answer printed, whichever comes first: the decision or the
/// deadline's deny.
#[derive(Clone, Default)]
struct Answer(Arc<Mutex<bool>>);

impl Answer {
    fn give(&self, answer: &Value) {
        let mut given = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !*given {
            *given = true;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{answer}");
            let _ = stdout.flush();
        }
    }
}

/// Why the hook could not decide (it then denies, saying this).
#[derive(Debug, thiserror::Error)]
enum HookFailure {
    #[error("reading the payload failed: {0}")]
    Read(#[source] std::io::Error),
    #[error(transparent)]
    Payload(#[from] PayloadError),
    #[error("the configuration has errors: {}", Diagnostic::one_line(.0))]
    Config(Vec<Diagnostic>),
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    #[error("no async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Decides on the tool call on stdin, naming the `attempt` as soon as
/// there is a loop to audit its refusal in.
fn decide(args: &HookArgs, attempt: &mut Option<Attempt>) -> Result<Value, HookFailure> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(HookFailure::Read)?;
    let call = claude_code::parse(&payload)?;
    let mut config = args.config.load_or_diagnose().map_err(HookFailure::Config)?;
    if !args.policies.is_empty() {
        config.policies = args.policies.clone();
    }
    let wait_allowed = args.timeout.saturating_sub(MARGIN_SECS);
    config.verifier.approval_timeout_secs = config.verifier.approval_timeout_secs.min(wait_allowed);
    let core = Arc::new(build_loop_core(&config)?);
    let gate = Gate::new(core.clone());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(HookFailure::Runtime)?;
    let mut context = CallContext::new(format!("claude-code:{}", call.session_id));
    if let Some(cwd) = &call.cwd {
        context.working_folder = WorkingFolder::for_this_user(cwd);
    }
    let write = claude_code::file_write(&call);
    let project = std::env::var_os(identity::CLAUDE_PROJECT_DIR).map(PathBuf::from);
    let agent = args
        .agent
        .clone()
        .unwrap_or_else(|| identity::default_agent("claude-code", project.as_deref()));
    let action = claude_code::action_text(&call);
    *attempt = Some(Attempt {
        core,
        agent: agent.clone(),
        session: context.session_id.clone(),
        action: action.clone(),
    });
    let decision = runtime.block_on(gate.decide(&context, &agent, &action, write.as_slice()));
    // This process is the hook call's whole session: a request it raised
    // that nobody answered in time can no longer be collected.
    gate.session_ended(None);
    Ok(claude_code::output(&decision))
}
