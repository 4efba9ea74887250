//! `safety-dongle hook HARNESS`: a coding agent's tool-call hook (Claude
//! Code, Copilot CLI, Droid, Cursor, opencode: `hook::harness`). Reads the
//! payload on stdin, evaluates each action of the tool call with the same
//! policy and state as the server (a blocked agent stays blocked here
//! too), writes the same audit rows, and answers on stdout in the
//! harness's format. Any failure of its own — unreadable payload,
//! configuration or state, or a panic (audited) — is a refusal: it fails
//! closed. So is running out of time: most harnesses let the tool run
//! when they kill a hook that took too long, so the hook refuses at its
//! own deadline (`--timeout`), whatever it is waiting for (a payload that
//! never ends, a locked state file, a human), and waits for approvals no
//! longer than the deadline allows. A call of several actions (a patch
//! naming several files) runs only if every action may.

use std::{
    io::{Read, Write},
    path::PathBuf,
    process::ExitCode,
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::{
    analysis::WorkingFolder,
    diagnostics::Diagnostic,
    gate::Gate,
    gate::GateDecision,
    hook::{
        claude_code::MAX_PAYLOAD_BYTES,
        claude_settings::MARGIN_SECS,
        harness::{self, Answer as HookAnswer, Attempt, CallError, Harness},
        identity,
    },
    protocol::registry::{CallContext, SessionEnds},
};

use super::{
    HookArgs,
    assemble::{AssembleError, build_loop_core},
};

pub(super) fn run(harness: Harness, args: HookArgs) -> ExitCode {
    let answer = Answer::default();
    let watchdog = answer.clone();
    let deadline = args.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(deadline));
        let refusal = harness.refusal(&format!("safety-dongle did not decide within its deadline of {deadline} s, so this tool call is refused"));
        watchdog.give(&refusal);
        std::process::exit(i32::from(refusal.exit_code));
    });
    let given = harness::answer_failing_closed(
        |reason| harness.refusal(reason),
        |attempt| decide(harness, &args, attempt),
    );
    answer.give(&given);
    ExitCode::from(given.exit_code)
}

/// The one answer printed, whichever comes first: the decision or the
/// deadline's deny.
#[derive(Clone, Default)]
struct Answer(Arc<Mutex<bool>>);

impl Answer {
    fn give(&self, answer: &HookAnswer) {
        let mut given = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !*given {
            *given = true;
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{}", answer.output);
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
    Call(#[from] CallError),
    #[error("the configuration has errors: {}", Diagnostic::one_line(.0))]
    Config(Vec<Diagnostic>),
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    #[error("no async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Decides on the tool call on stdin, naming the `attempt` as soon as
/// there is a loop to audit its refusal in.
fn decide(
    harness: Harness,
    args: &HookArgs,
    attempt: &mut Option<Attempt>,
) -> Result<HookAnswer, HookFailure> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(HookFailure::Read)?;
    let call = harness.read(&payload)?;
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
    let mut context = CallContext::new(format!("{harness}:{}", call.session_id));
    if let Some(cwd) = &call.cwd {
        context.working_folder = WorkingFolder::for_this_user(cwd);
    }
    let project = call
        .project
        .clone()
        .or_else(|| harness.project_variable().and_then(std::env::var_os).map(PathBuf::from));
    let agent = args
        .agent
        .clone()
        .unwrap_or_else(|| identity::default_agent(harness.name(), project.as_deref()));
    let mut decision = GateDecision::Continue { factors: Vec::new() };
    for action in &call.actions {
        *attempt = Some(Attempt {
            core: core.clone(),
            agent: agent.clone(),
            session: context.session_id.clone(),
            action: action.text.clone(),
        });
        decision =
            runtime.block_on(gate.decide(&context, &agent, &action.text, action.write.as_ref()));
        if matches!(decision, GateDecision::Deny { .. }) {
            break;
        }
    }
    // This process is the hook call's whole session: a request it raised
    // that nobody answered in time can no longer be collected.
    gate.session_ended(None);
    Ok(harness.answer(&decision))
}
