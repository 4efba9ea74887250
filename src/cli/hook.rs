//! `safety-dongle hook HARNESS`: the harness's pre-tool-call hook. Reads
//! the payload on stdin through the harness's adapter (`hook::harness`),
//! evaluates the tool call with the same policy and state as the server (a
//! blocked agent stays blocked here too), writes the same audit rows, and
//! answers in the harness's own format and exit code. Any failure of its
//! own — unreadable payload, configuration or state, or a panic (audited)
//! — is a deny: it fails closed. So is running out of time: most harnesses
//! let the tool run when they kill a hook that took too long, so the hook
//! answers deny at its own deadline (`--timeout`), whatever it is waiting
//! for (a payload that never ends, a locked state file, a judge, a human),
//! and waits for approvals no longer than the deadline allows. A harness
//! the hook does not speak yet is refused every call, on stderr with exit 2
//! (the code that blocks in every harness that runs command hooks).
//!
//! Where it can (Unix, `[judge] enabled`, no `--no-judge`), the hook first
//! asks the judge for its setup (`judge`, `cli::judge`), which decides
//! with [`Deciding`] exactly as the hook would; without an answer from it,
//! the hook decides in-process, and when no judge listens, starts one
//! after answering. A judge that took the call and then failed to answer
//! leaves it refused, the refusal audited here.

use std::{
    collections::HashMap,
    io::{Read, Write},
    process::ExitCode,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use tokio_util::sync::CancellationToken;

use crate::{
    analysis::WorkingFolder,
    diagnostics::Diagnostic,
    gate::Gate,
    hook::{
        answer::{self, Attempt, Reply, Verdict},
        claude_settings::MARGIN_SECS,
        harness::{Adapter, Harness},
        identity,
        reading::{MAX_PAYLOAD_BYTES, PayloadError, Reading, ToolCall},
    },
    judge::address::JudgeSetup,
    protocol::registry::{CallContext, SessionEnds},
    safety::core::LoopCore,
};

use super::{
    HookArgs,
    assemble::{AssembleError, build_loop_core},
};

pub(super) fn run(harness: Harness, args: HookArgs) -> ExitCode {
    let started = Instant::now();
    let Some(adapter) = harness.adapter() else {
        eprintln!(
            "safety-dongle: the hook does not speak {harness} yet, so this tool call is refused"
        );
        return ExitCode::from(2);
    };
    let answer = Answer::watched(adapter, args.timeout);
    let mut judge_to_start = None;
    let verdict = answer::answer_failing_closed(|attempt| {
        decide(harness, adapter, &args, started, &mut judge_to_start, attempt)
    });
    let code = answer.give(&(adapter.reply)(&verdict));
    // After the answer: starting the judge is no part of this call's time.
    if let Some(setup) = judge_to_start {
        start_judge(&setup);
    }
    ExitCode::from(code)
}

/// The one answer given, whichever comes first: the decision or the
/// deadline's deny.
#[derive(Clone, Default)]
pub(super) struct Answer(Arc<Mutex<Option<u8>>>);

impl Answer {
    /// An answer that denies, in `adapter`'s format, and ends the process
    /// once `deadline_secs` have passed without one.
    pub fn watched(adapter: &'static Adapter, deadline_secs: u64) -> Self {
        let answer = Self::default();
        let watchdog = answer.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(deadline_secs));
            let code = watchdog.give(&(adapter.reply)(&Verdict::Deny(format!("safety-dongle did not decide within its deadline of {deadline_secs} s, so this tool call is refused"))));
            std::process::exit(code.into());
        });
        answer
    }

    /// Writes `reply` unless an answer was given; the exit code of the one
    /// given.
    pub fn give(&self, reply: &Reply) -> u8 {
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

/// Decides on the tool call on stdin: through the judge when one answers,
/// else in-process, naming the `attempt` as soon as there is a loop to
/// audit its refusal in; `judge_to_start` is set when no judge listens.
fn decide(
    harness: Harness,
    adapter: &'static Adapter,
    args: &HookArgs,
    started: Instant,
    judge_to_start: &mut Option<JudgeSetup>,
    attempt: &mut Option<Attempt>,
) -> Result<Verdict, HookFailure> {
    let mut payload = Vec::new();
    std::io::stdin()
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut payload)
        .map_err(HookFailure::Read)?;
    let config = args.load_config();
    let agent = args.agent.clone().unwrap_or_else(|| identity::default_agent(harness));
    let asking = Asking { harness, adapter, args, payload: &payload, agent: &agent };
    if let Some(why) = &args.judge_lost {
        let config = config.map_err(HookFailure::Config)?;
        return refuse_lost(&asking, &config, why, attempt);
    }
    if let Ok(config) = &config
        && let Some(decided) = ask_judge(&asking, config, started, judge_to_start, attempt)
    {
        return decided;
    }
    let (call, reading) = asking.adapter.read(asking.payload)?;
    let mut config = config.map_err(HookFailure::Config)?;
    let wait_secs = asking.args.timeout.saturating_sub(MARGIN_SECS);
    config.verifier.approval_timeout_secs = config.verifier.approval_timeout_secs.min(wait_secs);
    let deciding = Deciding::new(Arc::new(build_loop_core(&config)?));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(HookFailure::Runtime)?;
    let answering = HookCall {
        harness: asking.harness,
        agent: asking.agent.to_owned(),
        answer_by: None,
        cancelled: CancellationToken::new(),
    };
    Ok(runtime.block_on(deciding.decide(&answering, &call, &reading, attempt)))
}

/// One hook call, read and about to be decided.
pub(super) struct Asking<'a> {
    pub harness: Harness,
    pub adapter: &'static Adapter,
    pub args: &'a HookArgs,
    pub payload: &'a [u8],
    pub agent: &'a str,
}

/// The judge's decision, or the refusal of a call it took and did not
/// answer; `None` when no judge decided (then `judge_to_start` is set
/// when none listens).
#[cfg(unix)]
fn ask_judge(
    asking: &Asking<'_>,
    config: &crate::config::Config,
    started: Instant,
    judge_to_start: &mut Option<JudgeSetup>,
    attempt: &mut Option<Attempt>,
) -> Option<Result<Verdict, HookFailure>> {
    use crate::judge::client;
    let Some(setup) = judge_setup(asking.args, config) else {
        tracing::debug!("deciding in-process: judges are off");
        return None;
    };
    if asking.payload.len() > MAX_PAYLOAD_BYTES {
        return None;
    }
    let request = judge_request(asking, &setup, config, started);
    let address = match setup.address() {
        Ok(address) => address,
        Err(error) => {
            tracing::debug!(%error, "deciding in-process: no judge for this executable");
            return None;
        }
    };
    match client::ask(&address, &request, asking.payload) {
        client::Asked::Decided(verdict) => {
            tracing::debug!("decided by the judge");
            Some(Ok(verdict))
        }
        client::Asked::Lost(why) => Some(refuse_lost(asking, config, &why, attempt)),
        client::Asked::NotAsked { start, why } => {
            tracing::debug!(%why, "deciding in-process");
            if start {
                *judge_to_start = Some(setup);
            }
            None
        }
    }
}

/// What the hook asks the judge for `setup`, `started` when the hook did.
#[cfg(unix)]
pub(super) fn judge_request(
    asking: &Asking<'_>,
    setup: &JudgeSetup,
    config: &crate::config::Config,
    started: Instant,
) -> crate::judge::wire::Request {
    use crate::judge::{address, wire};
    // How long a human may be waited for: the deadline, less the margin
    // kept to answer, less what reading took.
    let wait_allowed = Duration::from_secs(asking.args.timeout.saturating_sub(MARGIN_SECS))
        .saturating_sub(started.elapsed());
    wire::Request {
        version: wire::VERSION,
        harness: asking.harness,
        agent: asking.agent.to_owned(),
        wait_ms: u64::try_from(wait_allowed.as_millis()).unwrap_or(u64::MAX),
        stamp: address::freshness(setup.config_file.as_deref(), &config.policies),
    }
}

/// No judge on this platform (docs/ARCHITECTURE.md): every call is decided
/// in-process.
#[cfg(not(unix))]
fn ask_judge(
    _: &Asking<'_>,
    _: &crate::config::Config,
    _: Instant,
    _: &mut Option<JudgeSetup>,
    _: &mut Option<Attempt>,
) -> Option<Result<Verdict, HookFailure>> {
    None
}

/// The judge this hook asks, unless judges are off (`--no-judge`,
/// `SAFETY_DONGLE_NO_JUDGE`, `[judge] enabled = false`) or there is no
/// data folder to hold its socket.
#[cfg(unix)]
pub(super) fn judge_setup(args: &HookArgs, config: &crate::config::Config) -> Option<JudgeSetup> {
    if args.no_judge || !config.judge.enabled {
        return None;
    }
    let setup = JudgeSetup {
        data_dir: config.data_dir.clone()?,
        config_file: args.config.config.clone(),
        policies: args.policies.clone(),
    };
    Some(setup.canonical())
}

/// Refuses a call the judge took and did not answer, auditing the
/// refusal as a failure of the dongle's own (the judge may have audited
/// its decision before it stopped: the refusal is what happened). The
/// front (`cli::front`) hands such a call here with `--judge-lost`.
fn refuse_lost(
    asking: &Asking<'_>,
    config: &crate::config::Config,
    why: &str,
    attempt: &mut Option<Attempt>,
) -> Result<Verdict, HookFailure> {
    let (call, reading) = asking.adapter.read(asking.payload)?;
    let lost = Attempt {
        core: Arc::new(build_loop_core(config)?),
        agent: asking.agent.to_owned(),
        session: session_of(asking.harness, &call),
        action: reading.action,
    };
    lost.audit_refusal();
    *attempt = Some(lost);
    Ok(Verdict::Deny(format!(
        "safety-dongle's judge stopped before it decided this tool call, so it is refused: {why}"
    )))
}

/// Starts the judge for `setup`, detached: its own process group, no
/// terminal, its output to a log in its folder. Whether it starts is for
/// the next call to find out; two hooks starting one each leave one.
#[cfg(unix)]
fn start_judge(setup: &JudgeSetup) {
    use std::os::unix::process::CommandExt;
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(exe);
    command.arg("judge").arg("--data-dir").arg(&setup.data_dir);
    if let Some(file) = &setup.config_file {
        command.arg("--config").arg(file);
    }
    for policy in &setup.policies {
        command.arg("--policy").arg(policy);
    }
    let log = setup.address().ok().and_then(|address| {
        crate::platform::create_private_dir(&address.folder).ok()?;
        std::fs::OpenOptions::new().create(true).append(true).open(&address.log).ok()
    });
    command
        .current_dir("/")
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log.map_or_else(std::process::Stdio::null, std::process::Stdio::from));
    if let Err(error) = command.spawn() {
        tracing::debug!(%error, "the judge could not be started");
    }
}

#[cfg(not(unix))]
fn start_judge(_: &JudgeSetup) {}

/// The gate's session for a call: `<harness>:<session_id>`.
fn session_of(harness: Harness, call: &ToolCall) -> String {
    format!("{harness}:{}", call.session)
}

/// Who asks about one call, and until when an answer is wanted.
pub(super) struct HookCall {
    pub harness: Harness,
    /// The agent the call is attributed to.
    pub agent: String,
    /// When a wait for a human must end (the judge's bound, from the
    /// hook's deadline); `None`: the configured wait, which the hook
    /// already cut to its deadline.
    pub answer_by: Option<tokio::time::Instant>,
    /// Cancelled when the hook asking stops waiting.
    pub cancelled: CancellationToken,
}

/// A loop that decides hook calls: the hook's own, built for one call, or
/// the judge's, kept for many. Each call is a session of its own, ended
/// (its requests for a human withdrawn) once decided; calls that name the
/// same session at once share it until the last is decided.
pub(super) struct Deciding {
    pub core: Arc<LoopCore>,
    pub gate: Arc<Gate>,
    /// How many calls of each session are being decided.
    open_sessions: Mutex<HashMap<String, usize>>,
}

impl Deciding {
    pub fn new(core: Arc<LoopCore>) -> Self {
        Self {
            gate: Arc::new(Gate::new(core.clone())),
            core,
            open_sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The verdict on `call`, read as `reading`, naming the `attempt` (so
    /// a panic while deciding is audited).
    pub async fn decide(
        &self,
        asking: &HookCall,
        call: &ToolCall,
        reading: &Reading,
        attempt: &mut Option<Attempt>,
    ) -> Verdict {
        let mut context = CallContext::new(session_of(asking.harness, call));
        if let Some(cwd) = &call.cwd {
            context.working_folder = WorkingFolder::for_this_user(cwd);
        }
        context.answer_by = asking.answer_by;
        context.cancelled = asking.cancelled.clone();
        *attempt = Some(Attempt {
            core: self.core.clone(),
            agent: asking.agent.clone(),
            session: context.session_id.clone(),
            action: reading.action.clone(),
        });
        let _open = OpenSession::enter(self, &context.session_id);
        let decision =
            self.gate.decide(&context, &asking.agent, &reading.action, &reading.writes).await;
        Verdict::of(&decision)
    }

    fn open_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        // Counts changed in single statements: a panic elsewhere cannot
        // leave one half-changed.
        self.open_sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// One call's part in its session; the last to leave ends the session: a
/// request it raised that nobody answered in time can no longer be
/// collected.
struct OpenSession<'a> {
    deciding: &'a Deciding,
    session: String,
}

impl<'a> OpenSession<'a> {
    fn enter(deciding: &'a Deciding, session: &str) -> Self {
        *deciding.open_sessions().entry(session.to_owned()).or_default() += 1;
        Self { deciding, session: session.to_owned() }
    }
}

impl Drop for OpenSession<'_> {
    fn drop(&mut self) {
        let last = {
            let mut open = self.deciding.open_sessions();
            let count = open.entry(self.session.clone()).or_default();
            *count = count.saturating_sub(1);
            let last = *count == 0;
            if last {
                open.remove(&self.session);
            }
            last
        };
        if last {
            self.deciding.gate.session_ended(Some(&self.session));
        }
    }
}
