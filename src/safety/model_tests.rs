//! A reference model of the whole loop, and the real engine driven by the
//! same random command sequences (proptest-state-machine): steps, hooked
//! calls (`Gate::decide`), proxied calls (`Gate::admit`) and their token
//! redemption, a human answering approval requests through a scripted
//! verifier that speaks the real pipe protocol, `confirm_operation`,
//! `verify_challenge` with the right or a wrong code, sessions ending, an
//! operator's unblock, and restarts. After every command the engine's
//! answer must be exactly the model's.
//!
//! The properties this pins down: nothing goes ahead (a step, a hooked
//! call, a proxied call) for a blocked or paused agent; no agent takes
//! more than `maxAutonomousSteps` actions without a human granting a new
//! budget, however executions are restarted; a token is redeemed at most
//! once and only by the session and agent it was issued to, and dies with
//! its session; only the right code (or an operator) lifts a block; wrong
//! codes lock their subject out; a session that raised too many requests
//! gets no more dialogs.

use std::{path::Path, sync::Arc, time::Duration};

use proptest::prelude::*;
use proptest_state_machine::{ReferenceStateMachine, StateMachineTest, prop_state_machine};
use serde_json::{Value, json};

use crate::{
    config::{Channel, LoopMode},
    gate::{Gate, GateDecision, GatedCall, danger::DangerLevel},
    policy::{CompiledPolicy, PolicySource},
    protocol::{
        error::ErrorCode,
        registry::{CallContext, SessionEnds},
    },
    safety::answers::HumanAnswers,
    store::{
        Store,
        records::{self, ChallengeKind, ChallengeStatus},
    },
    verify::{
        code,
        humans::{HumanSettings, Humans},
        link::VerifierLink,
        operator_override,
    },
};

use super::{
    core::LoopCore,
    executions::{ExecuteRequest, FinishRequest, SafetyLoop, StepRequest},
};

const AGENTS: [&str; 2] = ["alpha", "beta"];
const SESSIONS: [&str; 2] = ["session-0", "session-1"];
/// Where wrong codes come from when they are not the agent's own.
const STRANGER: &str = "stranger";
const MAX_STEPS: u32 = 4;
/// `verify::humans`: dialogs one session may raise per window.
const REQUESTS_PER_SESSION: u32 = 10;
/// `verify::attempts`: failures per subject before a lockout.
const FAILURES_BEFORE_LOCKOUT: u32 = 10;
/// `safety::core`: danger-zone challenges per agent per window.
const DANGER_CHALLENGES: u32 = 3;
const POLICY: &str = "[defaults]\nmaxAutonomousSteps = 4\ndeny = [\"rm -rf /\", \"srv__drop*\"]\nrequiresApproval = [\"git push*\", \"srv__push*\"]\n";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hint {
    Benign,
    Approval,
    Deny,
}

impl Hint {
    fn text(self) -> &'static str {
        match self {
            Self::Benign => "executing shell command: cargo build",
            Self::Approval => "git push origin main",
            Self::Deny => "sudo /bin/rm -rf /",
        }
    }

    /// The proxied operation that means the same.
    fn operation(self) -> &'static str {
        match self {
            Self::Benign => "srv__read",
            Self::Approval => "srv__push",
            Self::Deny => "srv__drop",
        }
    }
}

#[derive(Debug, Clone)]
enum Command {
    Execute {
        agent: usize,
        session: usize,
    },
    Step {
        agent: usize,
        session: usize,
        hint: Hint,
    },
    Complete {
        agent: usize,
        session: usize,
    },
    Abort {
        agent: usize,
        session: usize,
    },
    /// A hooked call; the human approves or denies whatever it asks.
    Hook {
        agent: usize,
        hint: Hint,
        approve: bool,
    },
    /// A proxied call in `session`, acting for the session's agent.
    Proxy {
        session: usize,
        hint: Hint,
    },
    /// Repeats the call of the `token`-th token issued (modulo), from
    /// `session`.
    Redeem {
        session: usize,
        token: usize,
    },
    /// The human answers the agent's newest request still waiting.
    Human {
        agent: usize,
        approve: bool,
    },
    /// `confirm_operation` for the agent's pause.
    Confirm {
        agent: usize,
        session: usize,
    },
    /// A code for the agent's block, from the session that raised it
    /// (`own`) or from a stranger's.
    Verify {
        agent: usize,
        own: bool,
        right: bool,
    },
    EndSession {
        session: usize,
    },
    Unblock {
        agent: usize,
    },
    Restart,
}

/// What the engine must answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    Started,
    Finished,
    Refused,
    Continue,
    Pause,
    Stop,
    Done,
    Admitted,
    ConfirmationRequired,
    /// The human has not answered yet.
    Pending,
    /// A human approved the hooked call.
    HumanApproved,
    LockedOut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pending,
    Approved,
    Denied,
    Used,
    Cancelled,
}

/// A request for a human's Approve/Deny.
#[derive(Debug, Clone)]
struct Request {
    agent: usize,
    session: String,
    shown: bool,
    /// A step's pause (collected by `confirm_operation`), else a gated
    /// call's.
    from_step: bool,
    /// Holds its agent paused while it waits or waits to be collected.
    holds: bool,
    step_limit: bool,
    status: Status,
}

#[derive(Debug, Clone)]
struct Token {
    session: usize,
    agent: usize,
    request: usize,
    used: bool,
    revoked: bool,
}

#[derive(Debug, Clone, Copy, Default)]
struct Block {
    generation: u32,
    /// Its current challenge: shown (a hash exists) and still pending.
    shown: bool,
    pending: bool,
}

#[derive(Debug, Clone, Default)]
struct AgentModel {
    block: Option<Block>,
    generations: u32,
    /// Danger-zone challenges raised for it (blocks and re-issues).
    danger_challenges: u32,
    running: bool,
    /// The session whose call started its execution.
    execution_session: Option<usize>,
    /// Actions counted since a human last granted a budget.
    steps: u32,
    /// Actions that went ahead without a human since then.
    autonomous: u32,
}

#[derive(Debug, Clone)]
struct Model {
    agents: [AgentModel; 2],
    taint: [Option<(usize, u32)>; 2],
    session_agent: [Option<usize>; 2],
    requests: Vec<Request>,
    tokens: Vec<Token>,
    /// Requests for a human raised per session name.
    raised: std::collections::BTreeMap<String, u32>,
    /// Failed verifications per subject (agent name or session).
    failures: std::collections::BTreeMap<String, u32>,
    hooks: usize,
    last: Answer,
}

impl Model {
    fn blocked_in(&self, agent: usize, session: Option<usize>) -> bool {
        self.blocker(agent, session).is_some()
    }

    /// The agent whose block applies to `agent` in `session`: its own, or
    /// that of the agent whose block tainted the session (as
    /// `LoopCore::block_for`).
    fn blocker(&self, agent: usize, session: Option<usize>) -> Option<usize> {
        if self.agents[agent].block.is_some() {
            return Some(agent);
        }
        let (other, generation) = session.and_then(|s| self.taint[s])?;
        self.agents[other]
            .block
            .is_some_and(|block| block.generation == generation)
            .then_some(other)
    }

    fn paused(&self, agent: usize) -> bool {
        self.requests.iter().any(|r| {
            r.agent == agent && r.holds && matches!(r.status, Status::Pending | Status::Approved)
        })
    }

    /// Records a request for a human raised in `session`; whether a human
    /// was shown it.
    fn raise(&mut self, session: &str) -> bool {
        let count = self.raised.entry(session.to_owned()).or_default();
        *count += 1;
        *count <= REQUESTS_PER_SESSION
    }

    fn block(&mut self, agent: usize, session: &str, taint: Option<usize>) {
        let shown = self.raise(session);
        let model = &mut self.agents[agent];
        model.generations += 1;
        model.danger_challenges += 1;
        model.block = Some(Block { generation: model.generations, shown, pending: true });
        if let Some(s) = taint {
            self.taint[s] = Some((agent, model.generations));
        }
    }

    /// A blocked call re-issues a spent challenge, within the window's
    /// allowance.
    fn reissue(&mut self, agent: usize, session: &str) {
        let Some(block) = self.agents[agent].block else { return };
        if block.pending || self.agents[agent].danger_challenges >= DANGER_CHALLENGES {
            return;
        }
        let shown = self.raise(session);
        let model = &mut self.agents[agent];
        model.danger_challenges += 1;
        model.block = Some(Block { shown, pending: true, ..block });
    }

    /// Opens a request; returns its index.
    fn request(
        &mut self,
        agent: usize,
        session: &str,
        from_step: bool,
        holds: bool,
        step_limit: bool,
    ) -> usize {
        let shown = self.raise(session);
        self.requests.push(Request {
            agent,
            session: session.to_owned(),
            shown,
            from_step,
            holds,
            step_limit,
            status: Status::Pending,
        });
        self.requests.len() - 1
    }

    /// A human's Approve collected: a step-limit request grants a budget.
    fn collect(&mut self, request: usize) {
        self.requests[request].status = Status::Used;
        if self.requests[request].step_limit {
            let agent = &mut self.agents[self.requests[request].agent];
            agent.steps = 0;
            agent.autonomous = 0;
        }
    }

    fn proceed(&mut self, agent: usize) {
        self.agents[agent].autonomous += 1;
    }

    fn end_session(&mut self, session: Option<usize>) {
        let name = session.map(|s| SESSIONS[s].to_owned());
        for request in &mut self.requests {
            if name.as_ref().is_none_or(|n| *n == request.session)
                && matches!(request.status, Status::Pending | Status::Approved)
            {
                request.status = Status::Cancelled;
            }
        }
        for token in &mut self.tokens {
            if session.is_none_or(|s| s == token.session) {
                token.revoked = true;
            }
        }
        for agent in &mut self.agents {
            if agent.running && (session.is_none() || agent.execution_session == session) {
                agent.running = false;
                agent.execution_session = None;
            }
        }
        for s in 0..SESSIONS.len() {
            if session.is_none_or(|ended| ended == s) {
                self.taint[s] = None;
                self.session_agent[s] = None;
            }
        }
    }

    /// The gate's decision on an action of `agent` in `session` (`None`: a
    /// hook's own session). Returns the answer and the request it opened.
    fn gate(
        &mut self,
        agent: usize,
        session: Option<usize>,
        session_name: &str,
        hint: Hint,
    ) -> (Answer, Option<usize>) {
        if let Some(blocker) = self.blocker(agent, session) {
            self.reissue(blocker, session_name);
            return (Answer::Refused, None);
        }
        if self.paused(agent) {
            return (Answer::Refused, None);
        }
        self.agents[agent].steps += 1;
        if self.agents[agent].steps > MAX_STEPS {
            return (Answer::Pause, Some(self.request(agent, session_name, false, true, true)));
        }
        match hint {
            Hint::Benign => {
                self.proceed(agent);
                (Answer::Continue, None)
            }
            Hint::Approval => {
                (Answer::Pause, Some(self.request(agent, session_name, false, false, false)))
            }
            Hint::Deny => {
                self.block(agent, session_name, session);
                (Answer::Stop, None)
            }
        }
    }
}

struct Reference;

impl ReferenceStateMachine for Reference {
    type State = Model;
    type Transition = Command;

    fn init_state() -> BoxedStrategy<Model> {
        Just(Model {
            agents: Default::default(),
            taint: [None; 2],
            session_agent: [None; 2],
            requests: Vec::new(),
            tokens: Vec::new(),
            raised: Default::default(),
            failures: Default::default(),
            hooks: 0,
            last: Answer::Done,
        })
        .boxed()
    }

    fn transitions(_: &Model) -> BoxedStrategy<Command> {
        let agent = 0..AGENTS.len();
        let session = 0..SESSIONS.len();
        let hint = || prop_oneof![4 => Just(Hint::Benign), 1 => Just(Hint::Approval), 1 => Just(Hint::Deny)];
        prop_oneof![
            3 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Execute { agent, session }),
            6 => (agent.clone(), session.clone(), hint()).prop_map(|(agent, session, hint)| Command::Step { agent, session, hint }),
            1 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Complete { agent, session }),
            1 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Abort { agent, session }),
            4 => (agent.clone(), hint(), any::<bool>()).prop_map(|(agent, hint, approve)| Command::Hook { agent, hint, approve }),
            4 => (session.clone(), hint()).prop_map(|(session, hint)| Command::Proxy { session, hint }),
            2 => (session.clone(), 0..8_usize).prop_map(|(session, token)| Command::Redeem { session, token }),
            3 => (agent.clone(), any::<bool>()).prop_map(|(agent, approve)| Command::Human { agent, approve }),
            1 => (agent.clone(), session.clone()).prop_map(|(agent, session)| Command::Confirm { agent, session }),
            3 => (agent.clone(), any::<bool>(), prop_oneof![1 => Just(true), 3 => Just(false)]).prop_map(|(agent, own, right)| Command::Verify { agent, own, right }),
            1 => session.clone().prop_map(|session| Command::EndSession { session }),
            1 => agent.prop_map(|agent| Command::Unblock { agent }),
            1 => Just(Command::Restart),
        ]
        .boxed()
    }

    fn apply(mut state: Model, command: &Command) -> Model {
        state.last = match *command {
            Command::Execute { agent, session } => {
                if let Some(blocker) = state.blocker(agent, Some(session)) {
                    state.reissue(blocker, SESSIONS[session]);
                    Answer::Refused
                } else if state.agents[agent].running {
                    Answer::Refused
                } else {
                    state.agents[agent].running = true;
                    state.agents[agent].execution_session = Some(session);
                    state.session_agent[session] = Some(agent);
                    Answer::Started
                }
            }
            Command::Step { agent, session, hint } => {
                if let Some(blocker) = state.blocker(agent, Some(session)) {
                    state.reissue(blocker, SESSIONS[session]);
                    Answer::Stop
                } else if !state.agents[agent].running || state.paused(agent) {
                    // Held back: no step of the budget is spent.
                    Answer::Pause
                } else {
                    state.agents[agent].steps += 1;
                    if state.agents[agent].steps > MAX_STEPS {
                        state.request(agent, SESSIONS[session], true, true, true);
                        Answer::Pause
                    } else {
                        match hint {
                            Hint::Benign => {
                                state.proceed(agent);
                                Answer::Continue
                            }
                            Hint::Approval => {
                                state.request(agent, SESSIONS[session], true, true, false);
                                Answer::Pause
                            }
                            Hint::Deny => {
                                state.block(agent, SESSIONS[session], Some(session));
                                Answer::Stop
                            }
                        }
                    }
                }
            }
            Command::Complete { agent, session } | Command::Abort { agent, session } => {
                if state.blocked_in(agent, Some(session)) || !state.agents[agent].running {
                    Answer::Refused
                } else {
                    state.agents[agent].running = false;
                    state.agents[agent].execution_session = None;
                    if state.session_agent[session] == Some(agent) {
                        state.session_agent[session] = None;
                    }
                    Answer::Finished
                }
            }
            Command::Hook { agent, hint, approve } => {
                state.hooks += 1;
                let name = format!("hook-{}", state.hooks);
                let answer = match state.gate(agent, None, &name, hint) {
                    (Answer::Continue, _) => Answer::Continue,
                    (Answer::Pause, Some(request)) if approve => {
                        state.collect(request);
                        Answer::HumanApproved
                    }
                    (Answer::Pause, Some(request)) => {
                        state.requests[request].status = Status::Denied;
                        Answer::Refused
                    }
                    _ => Answer::Refused,
                };
                // The hook's process, and with it its session, ends.
                for request in &mut state.requests {
                    if request.session == name
                        && matches!(request.status, Status::Pending | Status::Approved)
                    {
                        request.status = Status::Cancelled;
                    }
                }
                answer
            }
            Command::Proxy { session, hint } => {
                let agent = state.session_agent[session].unwrap_or(session);
                match state.gate(agent, Some(session), SESSIONS[session], hint) {
                    (Answer::Continue, _) => Answer::Admitted,
                    (Answer::Pause, Some(request)) if state.requests[request].shown => {
                        state.tokens.push(Token {
                            session,
                            agent,
                            request,
                            used: false,
                            revoked: false,
                        });
                        Answer::ConfirmationRequired
                    }
                    (Answer::Pause, Some(request)) => {
                        // Nobody saw it: it holds nothing.
                        state.requests[request].status = Status::Cancelled;
                        Answer::Refused
                    }
                    _ => Answer::Refused,
                }
            }
            Command::Redeem { session, token } => {
                if state.tokens.is_empty() {
                    Answer::Done
                } else {
                    let index = token % state.tokens.len();
                    let token = state.tokens[index].clone();
                    let agent = state.session_agent[session].unwrap_or(session);
                    if token.revoked
                        || token.used
                        || token.session != session
                        || token.agent != agent
                    {
                        Answer::Refused
                    } else if state.blocked_in(agent, Some(session))
                        || state.requests.iter().enumerate().any(|(i, r)| {
                            i != token.request
                                && r.agent == agent
                                && r.holds
                                && matches!(r.status, Status::Pending | Status::Approved)
                        })
                    {
                        state.tokens[index].used = true;
                        Answer::Refused
                    } else {
                        match state.requests[token.request].status {
                            Status::Pending => Answer::Pending,
                            Status::Approved => {
                                state.tokens[index].used = true;
                                state.collect(token.request);
                                Answer::Admitted
                            }
                            _ => {
                                state.tokens[index].used = true;
                                Answer::Refused
                            }
                        }
                    }
                }
            }
            Command::Human { agent, approve } => {
                if let Some(request) = state
                    .requests
                    .iter_mut()
                    .rev()
                    .find(|r| r.agent == agent && r.shown && r.status == Status::Pending)
                {
                    request.status = if approve { Status::Approved } else { Status::Denied };
                }
                Answer::Done
            }
            Command::Confirm { agent, .. } => {
                let holding = state.requests.iter().rposition(|r| {
                    r.agent == agent
                        && r.holds
                        && matches!(r.status, Status::Pending | Status::Approved)
                });
                match holding {
                    None => Answer::Done,
                    Some(request)
                        if !state.requests[request].from_step || !state.requests[request].shown =>
                    {
                        Answer::Refused
                    }
                    Some(request) if state.requests[request].status == Status::Pending => {
                        Answer::Pending
                    }
                    Some(request) => {
                        state.collect(request);
                        Answer::Done
                    }
                }
            }
            Command::Verify { agent, own, right } => match state.agents[agent].block {
                None => Answer::Done,
                Some(block) => {
                    let subject = if own { AGENTS[agent].to_owned() } else { STRANGER.to_owned() };
                    let failures = state.failures.entry(subject).or_default();
                    if *failures >= FAILURES_BEFORE_LOCKOUT {
                        Answer::LockedOut
                    } else if block.pending && block.shown && right {
                        state.agents[agent].block = None;
                        Answer::Done
                    } else {
                        *failures += 1;
                        if own && block.pending {
                            state.agents[agent].block = Some(Block { pending: false, ..block });
                        }
                        Answer::Refused
                    }
                }
            },
            Command::EndSession { session } => {
                state.end_session(Some(session));
                Answer::Done
            }
            Command::Unblock { agent } => {
                state.agents[agent].block = None;
                Answer::Done
            }
            Command::Restart => {
                // The process exits: its sessions end, and with them their
                // executions, tokens and requests waiting for a human.
                state.end_session(None);
                Answer::Done
            }
        };
        state
    }
}

/// The scripted human: shows every request by recording it, sends the
/// hash of a fixed code for code requests, and answers an approval with
/// the decision in `auto` when that exists as the request arrives, else
/// with the one written to `<id>.answer` later, giving up (a timeout) when
/// the folder is gone with its test. Its event lines are the protocol
/// crate's own, written into the script.
fn human_script(dir: &Path, salt: &str, hash: &str) -> std::path::PathBuf {
    use verifier_protocol::{Decision, Event};
    let line = |event: Event| event.line().trim_end().to_owned();
    let shown = line(Event::Shown { channel: Channel::Command });
    let script = dir.join("human.sh");
    let text = format!(
        r#"#!/bin/sh
dir="{dir}"
IFS= read -r line
id=$(printf '%s' "$line" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p')
case "$line" in
*'"kind":"code"'*)
  printf '%s\n' '{hashed}' '{shown}'
  exit 0;;
esac
auto=$(cat "$dir/auto" 2>/dev/null)
: > "$dir/$id.shown"
printf '%s\n' '{shown}'
if [ -n "$auto" ]; then answer="$auto"; else
  while [ -d "$dir" ] && [ ! -f "$dir/$id.answer" ]; do sleep 0.01; done
  answer=$(cat "$dir/$id.answer" 2>/dev/null)
fi
case "$answer" in
approve) printf '%s\n' '{approve}';;
deny) printf '%s\n' '{deny}';;
*) printf '%s\n' '{timeout}';;
esac
"#,
        dir = dir.display(),
        hashed = line(Event::Hash { salt: salt.to_owned(), hash: hash.to_owned() }),
        approve = line(Event::Decision { decision: Decision::Approve }),
        deny = line(Event::Decision { decision: Decision::Deny }),
        timeout = line(Event::Decision { decision: Decision::Timeout }),
    );
    std::fs::write(&script, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    script
}

struct Engine {
    runtime: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    store: Arc<Store>,
    policy: Arc<CompiledPolicy>,
    program: std::path::PathBuf,
    code: String,
    safety: SafetyLoop,
    answers: HumanAnswers,
    gate: Gate,
    /// Issued tokens: the token and the call it was issued for.
    tokens: Vec<(String, Hint)>,
    hooks: usize,
}

fn start(
    store: &Arc<Store>,
    policy: &Arc<CompiledPolicy>,
    program: &Path,
) -> (SafetyLoop, HumanAnswers, Gate) {
    let humans = HumanSettings {
        challenge_ttl_ms: 3_600_000,
        approval_wait: Duration::from_millis(250),
        verifier: Ok(VerifierLink::new(program.to_path_buf(), vec![Channel::Command], None)),
    };
    let core = Arc::new(LoopCore::new(
        store.clone(),
        policy.clone(),
        LoopMode::Enforcing,
        Humans::new(store.clone(), humans),
    ));
    (SafetyLoop::new(core.clone()), HumanAnswers::new(core.clone()), Gate::new(core))
}

fn context(session: &str, client: Option<&str>) -> CallContext {
    let mut call = CallContext::new(session);
    call.client = client.map(str::to_owned);
    call
}

fn session(index: usize) -> CallContext {
    context(SESSIONS[index], Some(AGENTS[index]))
}

fn directive_answer(value: &Value) -> Answer {
    match (value["continue"].as_bool(), value["stopped"].as_bool()) {
        (Some(true), _) => Answer::Continue,
        (Some(false), Some(true)) => Answer::Stop,
        _ => Answer::Pause,
    }
}

impl Engine {
    /// Repeats the proxied call `hint` with `token` from `session`.
    fn proxy(
        &self,
        session: usize,
        hint: Hint,
        token: Option<&str>,
    ) -> Result<String, crate::protocol::error::AqlError> {
        let arguments = json!({"n": 1});
        let call = GatedCall {
            operation: hint.operation(),
            source: "srv",
            danger: DangerLevel::Safe,
            arguments: &arguments,
            token,
            trust: None,
            requires_confirmation: false,
        };
        self.runtime
            .block_on(self.gate.admit(&self::session(session), call))
            .map(|admission| format!("{admission:?}"))
    }

    /// The newest approval request of `agent` a human was shown and that
    /// still waits.
    /// The newest approval request `agent` waits on, once the human has
    /// been shown it. Its verifier may still be starting (on a loaded
    /// machine, long after the request was stored): the human answers
    /// what they will see, so this waits (bounded) for it to be shown
    /// rather than answering an older request or none.
    fn waiting_request(&self, agent: &str) -> Option<String> {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let newest: Option<String> = self
                .store
                .read(|tx| {
                    let sql = "SELECT id FROM challenges WHERE agent = ?1 AND kind = 'approval' AND status = 'pending' ORDER BY created_at DESC, rowid DESC LIMIT 1";
                    tx.rows(sql, crate::store::sql::values![agent], |row| row.get(0))
                })
                .unwrap()
                .into_iter()
                .next();
            let id = newest?;
            if self.dir.path().join(format!("{id}.shown")).exists() {
                return Some(id);
            }
            assert!(std::time::Instant::now() < deadline, "request {id} was never shown");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn status(&self, id: &str) -> ChallengeStatus {
        self.store
            .read(|tx| records::challenge(tx, id))
            .unwrap()
            .map(|(row, _)| row.status)
            .unwrap()
    }
}

struct RealLoop;

impl StateMachineTest for RealLoop {
    type SystemUnderTest = Engine;
    type Reference = Reference;

    fn init_test(_: &Model) -> Engine {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(&dir.path().join("state")).unwrap());
        let source = PolicySource { path: "model.toml".into(), text: POLICY.into() };
        let policy = Arc::new(CompiledPolicy::compile(&[source]).unwrap());
        let (code, hash) = code::tests::fresh();
        let program = human_script(dir.path(), &hash.salt, &hash.hash);
        let (safety, answers, gate) = start(&store, &policy, &program);
        Engine {
            runtime,
            dir,
            store,
            policy,
            program,
            code,
            safety,
            answers,
            gate,
            tokens: Vec::new(),
            hooks: 0,
        }
    }

    fn apply(mut engine: Engine, model: &Model, command: Command) -> Engine {
        let answer = match command {
            Command::Execute { agent, session: s } => {
                let request =
                    ExecuteRequest { agent: AGENTS[agent].into(), goal: None, max_steps: None };
                match engine.runtime.block_on(engine.safety.execute(&session(s), request)) {
                    Ok(_) => Answer::Started,
                    Err(_) => Answer::Refused,
                }
            }
            Command::Step { agent, session: s, hint } => {
                let request = StepRequest {
                    agent: AGENTS[agent].into(),
                    hint: hint.text().into(),
                    outcome: None,
                    agent_risk: None,
                };
                directive_answer(
                    &engine.runtime.block_on(engine.safety.step(&session(s), request)).to_json(),
                )
            }
            Command::Complete { agent, session: s } | Command::Abort { agent, session: s } => {
                let request =
                    FinishRequest { agent: AGENTS[agent].into(), outcome: None, text: None };
                let finished = if matches!(command, Command::Complete { .. }) {
                    engine.safety.complete(&session(s), request)
                } else {
                    engine.safety.abort(&session(s), request)
                };
                if finished.is_ok() { Answer::Finished } else { Answer::Refused }
            }
            Command::Hook { agent, hint, approve } => {
                engine.hooks += 1;
                let name = format!("hook-{}", engine.hooks);
                let auto = engine.dir.path().join("auto");
                std::fs::write(&auto, if approve { "approve" } else { "deny" }).unwrap();
                let decided = engine.runtime.block_on(engine.gate.decide(
                    &context(&name, None),
                    AGENTS[agent],
                    hint.text(),
                    &[],
                ));
                std::fs::remove_file(&auto).unwrap();
                engine.gate.session_ended(Some(&name));
                match decided {
                    GateDecision::Continue { .. } => Answer::Continue,
                    GateDecision::HumanApproved(_) => Answer::HumanApproved,
                    GateDecision::Deny { .. } => Answer::Refused,
                }
            }
            Command::Proxy { session: s, hint } => match engine.proxy(s, hint, None) {
                Ok(_) => Answer::Admitted,
                Err(error) if error.code == ErrorCode::ConfirmationRequired => {
                    let token =
                        error.details["confirmation_token"].as_str().expect("a token").to_owned();
                    engine.tokens.push((token, hint));
                    Answer::ConfirmationRequired
                }
                Err(_) => Answer::Refused,
            },
            Command::Redeem { session: s, token } => {
                if engine.tokens.is_empty() {
                    Answer::Done
                } else {
                    let (token, hint) = engine.tokens[token % engine.tokens.len()].clone();
                    match engine.proxy(s, hint, Some(&token)) {
                        Ok(_) => Answer::Admitted,
                        Err(error) if error.code == ErrorCode::ConfirmationRequired => {
                            Answer::Pending
                        }
                        Err(_) => Answer::Refused,
                    }
                }
            }
            Command::Human { agent, approve } => {
                if let Some(id) = engine.waiting_request(AGENTS[agent]) {
                    std::fs::write(
                        engine.dir.path().join(format!("{id}.answer")),
                        if approve { "approve" } else { "deny" },
                    )
                    .unwrap();
                    // The answer is stored, then put on the board: wait
                    // for both (bounded), however loaded the machine is.
                    let humans = &engine.safety.core().humans;
                    let deadline = std::time::Instant::now() + Duration::from_secs(30);
                    while engine.status(&id) == ChallengeStatus::Pending
                        || humans.approval_still_waiting(&id)
                    {
                        assert!(
                            std::time::Instant::now() < deadline,
                            "the human's answer was never recorded"
                        );
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                Answer::Done
            }
            Command::Confirm { agent, session: s } => {
                let holding =
                    engine.store.read(|tx| records::pausing_challenge(tx, AGENTS[agent])).unwrap();
                match holding {
                    None => Answer::Done,
                    Some(challenge) => match engine
                        .runtime
                        .block_on(engine.answers.confirm(&session(s), &challenge.id))
                    {
                        Ok(_) => Answer::Done,
                        Err(crate::verify::error::VerifyError::StillPending { .. }) => {
                            Answer::Pending
                        }
                        Err(_) => Answer::Refused,
                    },
                }
            }
            Command::Verify { agent, own, right } => {
                let block = engine.store.read(|tx| records::block_of(tx, AGENTS[agent])).unwrap();
                match block {
                    None => Answer::Done,
                    Some(block) => {
                        let raised_in = engine
                            .store
                            .read(|tx| records::challenge(tx, &block.challenge_id))
                            .unwrap()
                            .and_then(|(row, _)| row.session_id)
                            .unwrap();
                        assert_eq!(
                            engine
                                .store
                                .read(|tx| records::challenge(tx, &block.challenge_id))
                                .unwrap()
                                .map(|(row, _)| row.kind),
                            Some(ChallengeKind::DangerZone)
                        );
                        let from = if own { raised_in } else { STRANGER.to_owned() };
                        let typed = if right {
                            engine.code.clone()
                        } else {
                            "0000000000000000000000000Z".to_owned()
                        };
                        match engine.runtime.block_on(engine.answers.verify_challenge(
                            &context(&from, None),
                            &block.challenge_id,
                            &typed,
                        )) {
                            Ok(_) => Answer::Done,
                            Err(
                                crate::verify::error::VerifyError::AgentLockedOut { .. }
                                | crate::verify::error::VerifyError::SessionLockedOut { .. },
                            ) => Answer::LockedOut,
                            Err(_) => Answer::Refused,
                        }
                    }
                }
            }
            Command::EndSession { session: s } => {
                engine.gate.session_ended(Some(SESSIONS[s]));
                Answer::Done
            }
            Command::Unblock { agent } => {
                let unblock = operator_override(AGENTS[agent], AGENTS[agent], true).unwrap();
                engine.store.write_durable(|tx| records::remove_block(tx, &unblock)).unwrap();
                Answer::Done
            }
            Command::Restart => {
                engine.gate.session_ended(None);
                (engine.safety, engine.answers, engine.gate) =
                    start(&engine.store, &engine.policy, &engine.program);
                Answer::Done
            }
        };
        assert_eq!(answer, model.last, "engine and model disagree");
        engine
    }

    fn check_invariants(engine: &Engine, model: &Model) {
        for (index, agent) in AGENTS.iter().enumerate() {
            let blocked = engine.store.read(|tx| records::block_of(tx, agent)).unwrap().is_some();
            assert_eq!(blocked, model.agents[index].block.is_some(), "stored block of {agent}");
            assert!(
                model.agents[index].autonomous <= MAX_STEPS,
                "{agent} took more than {MAX_STEPS} actions without a human"
            );
        }
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn no_command_sequence_lets_an_agent_act_blocked_or_paused_or_past_its_budget(sequential 1..50 => RealLoop);
}
