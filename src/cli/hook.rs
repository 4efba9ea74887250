//! `safety-dongle hook HARNESS`: the harness's pre-tool-call hook. Reads
//! the payload on stdin through the harness's adapter (`hook::harness`),
//! evaluates the tool call with the same policy and state as the server (a
//! blocked agent stays blocked here too), writes the same audit rows, and
//! answers in the harness's own format and exit code. Any failure of its
//! own — unreadable payload, configuration or state, or a panic (audited)
//! — is a deny: it fails closed. So is running out of time: most harnesses
//! let the tool run when they kill a hook that took too long, so the hook
//! answers deny at its own deadline (`--timeout`), whatever it is waiting
//! for (a payload that never ends, a locked state file, a human), and waits
//! for approvals no longer than the deadline allows. A harness the hook
//! does not speak yet is refused every call, on stderr with exit 2 (the
//! code that blocks in every harness that runs command hooks).

use std::{
    io::{Read, Write},
    process::ExitCode,
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::{
    analysis::WorkingFolder,
    diagnostics::Diagnostic,
    gate::Gate,
    hook::{
        answer::{self, Attempt, Reply, Verdict},
        claude_settings::MARGIN_SECS,
        harness::{Adapter, Harness},
        identity,
        reading::{MAX_PAYLOAD_BYTES, PayloadError},
    },
    protocol::registry::{CallContext, SessionEnds},
};

use super::{
    HookArgs,
    assemble::{AssembleError, build_loop_core},
};

pub(super) fn run(harness: Harness, args: HookArgs) -> ExitCode {
    let Some(adapter) = harness.adapter() else {
        eprintln!(
            "safety-dongle: the hook does not speak {harness} yet, so this tool call is refused"
        );
        return ExitCode::from(2);
    };
    let answer = Answer::default();
    let watchdog = answer.clone();
    let deadline = args.timeout;
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(deadline));
        let code = watchdog.give(&(adapter.reply)(&Verdict::Deny(format!("safety-dongle did not decide within its deadline of {deadline} s, so this tool call is refused"))));
        std::process::exit(code.into());
    });
    let verdict = answer::answer_failing_closed(|attempt| decide(harness, adapter, &args, attempt));
    ExitCode::from(answer.give(&(adapter.reply)(&verdict)))
}

/// The one answer given, whichever comes first: the decision or the
/// deadline's deny.
#[derive(Clone, Default)]
struct Answer(Arc<Mutex<Option<u8>>>);

impl Answer {
    /// Writes `reply` unless an answer was given; the exit code of the one
    /// given.
    fn give(&self, reply: &Reply) -> u8 {
        let mut given = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(code) = *given {
            return code;
        }
        *given = Some(reply.exit_code);
        if let Some(stderr) = &reply.stderr {
            let _ = writeln!(std::io::stderr().lock(), "{stderr}");
        }
        let mut stdout = std::io::stdout().lock();
        if let Some(answer) = &reply.stdout {
            let _ = writeln!(stdout, "{answer}");
        }
        let _ = stdout.flush();
        reply.exit_code
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
fn decide(
    harness: Harness,
    adapter: &Adapter,
    args: &HookArgs,
    attempt: &mut Option<Attempt>,
) -> Result<Verdict, HookFailure> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(HookFailure::Read)?;
    let (call, reading) = adapter.read(&payload)?;
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
    let mut context = CallContext::new(format!("{harness}:{}", call.session));
    if let Some(cwd) = &call.cwd {
        context.working_folder = WorkingFolder::for_this_user(cwd);
    }
    let agent = args.agent.clone().unwrap_or_else(|| identity::default_agent(harness));
    *attempt = Some(Attempt {
        core,
        agent: agent.clone(),
        session: context.session_id.clone(),
        action: reading.action.clone(),
    });
    let decision =
        runtime.block_on(gate.decide(&context, &agent, &reading.action, &reading.writes));
    // This process is the hook call's whole session: a request it raised
    // that nobody answered in time can no longer be collected.
    gate.session_ended(None);
    Ok(Verdict::of(&decision))
}
