//! The safety loop's stateful side: executions, hard blocks, pauses and
//! notifications around the pure evaluator.
//!
//! Each operation is one write transaction: the agent's block, session and
//! execution are read, the step is evaluated, and its effects and audit row
//! are committed together. When a step creates a block or a challenge, a
//! `synchronous=FULL` barrier follows the commit before the directive is
//! returned, so nothing is announced that a power cut could undo.
//!
//! Hard blocks are per agent and durable; they also taint the MCP session
//! that triggered them, so an agent cannot shed its block by reporting
//! under another name in the same session. Pauses (approval, verification,
//! step limit, failure) are per agent and live in memory: they end when a
//! human decides, when their challenge expires (approval and verification),
//! or never on their own (step limit).
//!
//! After the commit, the human is asked: a code challenge goes to the
//! verifier, which returns only its salted hash (stored durably); an
//! approval request is followed by a background task that records the
//! answer. The step waits only until the request is shown, and says so in
//! the directive if no channel could show it.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use rusqlite::Transaction;
use serde_json::{Map, Value, json};

use crate::{
    config::LoopMode,
    policy::CompiledPolicy,
    protocol::{error::AqlError, registry::{CallContext, OperationResult}},
    verify::{
        approvals::{ApprovalBoard, Settled},
        code_verified,
        link::{Approved, HumanRequest, Shown, VerifierLink, VerifierUnavailable},
        redact::redact_text,
    },
    store::{
        Store, StoreError,
        audit::{self, AuditEntry},
        now_ms,
        records::{self, BlockRow, ChallengeKind, ChallengeRow, EventRow, ExecutionRow},
        rfc3339,
    },
};

use super::{
    attempts::{self, Subject},
    directive::{Directive, Notification, NotificationKind, SafetyTier},
    evaluator::{Evaluation, Outcome, PauseKind, StepFacts, Verdict, evaluate_step},
    lifecycle::{AnyExecution, Execution, NewExecution},
};

/// How the loop is run.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    pub mode: LoopMode,
    /// How long a verification or approval challenge stays open.
    pub challenge_ttl_ms: i64,
    /// How long `confirm_operation` waits for a human's answer.
    pub approval_wait: Duration,
    /// How to reach the verifier, or why it cannot be reached: then no
    /// request can be shown (and the loop stays closed).
    pub verifier: Result<VerifierLink, VerifierUnavailable>,
}

/// At most this many fresh codes for one blocked agent per window.
const REISSUES_PER_WINDOW: u32 = 3;
const REISSUE_WINDOW_MS: i64 = 5 * 60 * 1000;
/// At most this many requests for a human (dialogs) raised by one MCP
/// session per window, whatever agent names it reports under: a session
/// cannot flood a person with dialogs through fresh names.
const HUMAN_REQUESTS_PER_SESSION: u32 = 10;
const HUMAN_REQUEST_WINDOW_MS: i64 = 5 * 60 * 1000;

/// A request for a human, decided in the transaction, made after it.
#[derive(Debug, Clone)]
struct Ask {
    kind: ChallengeKind,
    id: String,
    agent: String,
    /// The MCP session whose call raised it.
    session_id: String,
    reason: String,
    action: String,
    expires_at: i64,
}

/// Whose call, about which action, raises a request for a human.
#[derive(Debug, Clone, Copy)]
struct Raised<'a> {
    session_id: &'a str,
    agent: &'a str,
    action: &'a str,
}

#[derive(Debug, Clone)]
struct Pause {
    kind: PauseKind,
    challenge_id: String,
    challenge_kind: ChallengeKind,
    reason: String,
    /// `None`: only a human ends it.
    expires_at: Option<i64>,
}

impl Pause {
    /// The key a client finds this pause's challenge id under.
    fn id_key(&self) -> &'static str {
        if self.challenge_kind == ChallengeKind::Verify { "verificationId" } else { "approvalId" }
    }
}

pub struct ExecuteRequest {
    pub agent: String,
    pub goal: Option<String>,
    pub max_steps: Option<u32>,
}

pub struct StepRequest {
    pub agent: String,
    pub hint: String,
    pub outcome: Option<Outcome>,
    pub agent_risk: Option<u8>,
}

/// The gate's answer on one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// The policy lets it through.
    Continue { factors: Vec<String> },
    /// A human approved it through the verifier.
    HumanApproved { factors: Vec<String> },
    /// Refused (a deny, a block, a human's no, or fail-closed).
    Deny { reason: String, factors: Vec<String> },
}

/// The gate's answer on an action, before anyone waits for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// The policy lets it through.
    Allowed { factors: Vec<String> },
    /// Refused (a deny, a block, or fail-closed); a deny also blocked the
    /// agent.
    Refused { reason: String, factors: Vec<String> },
    /// A human was shown approval request `approval_id`, open until
    /// `expires_at` (ms).
    AwaitingHuman { approval_id: String, reason: String, factors: Vec<String>, expires_at: i64 },
}

pub struct FinishRequest {
    pub agent: String,
    pub outcome: Option<Outcome>,
    pub text: Option<String>,
}

/// What a step's transaction decided, and what must follow its commit.
struct StepResult {
    directive: Directive,
    needs_sync: bool,
    /// The block this step created, as `blocked_at`.
    taints_session: Option<i64>,
    new_pause: Option<Pause>,
    expired_pause: bool,
    ask: Option<Ask>,
}

pub struct SafetyLoop {
    store: Arc<Store>,
    policy: Arc<CompiledPolicy>,
    config: LoopConfig,
    pid: u32,
    pauses: Mutex<HashMap<String, Pause>>,
    /// Sessions that triggered a hard block: the blocked agent and the
    /// block's `blocked_at`. The taint lasts exactly as long as that block.
    tainted: Mutex<HashMap<String, (String, i64)>>,
    approvals: Arc<ApprovalBoard>,
    /// Approval requests the gate opened: the call they gate is repeated
    /// to redeem them, so `confirm_operation` must not spend them.
    gate_approvals: Mutex<std::collections::HashSet<String>>,
    /// The agent whose execution this process started in each session,
    /// until it finishes: who a proxied call in that session acts for.
    session_agents: Mutex<HashMap<String, String>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps hold plain data updated in single statements: a panic
    // elsewhere cannot leave them half-changed.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn internal(error: StoreError) -> AqlError {
    tracing::error!(%error, "safety state store failed");
    AqlError::internal("safety state unavailable")
}

/// Whether process `pid` still runs (Linux; elsewhere assumed alive).
pub fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { std::path::Path::new(&format!("/proc/{pid}")).exists() } else { true }
}

impl SafetyLoop {
    pub fn new(store: Arc<Store>, policy: Arc<CompiledPolicy>, config: LoopConfig) -> Self {
        Self {
            store,
            policy,
            config,
            pid: std::process::id(),
            pauses: Mutex::new(HashMap::new()),
            tainted: Mutex::new(HashMap::new()),
            approvals: Arc::new(ApprovalBoard::default()),
            gate_approvals: Mutex::new(std::collections::HashSet::new()),
            session_agents: Mutex::new(HashMap::new()),
        }
    }

    pub fn store(&self) -> &Arc<Store> {
        &self.store
    }

    pub fn mode(&self) -> LoopMode {
        self.config.mode
    }

    pub fn policy(&self) -> &CompiledPolicy {
        &self.policy
    }

    fn audit(&self, tx: &Transaction<'_>, entry: AuditEntry<'_>) -> Result<i64, StoreError> {
        audit::append(tx, &AuditEntry { policy_hash: self.policy.hash(), ..entry })
    }

    /// The block that applies to `agent` in this session: its own, or that
    /// of the agent whose block tainted the session.
    fn block_for(&self, tx: &Transaction<'_>, call: &CallContext, agent: &str) -> Result<Option<BlockRow>, StoreError> {
        if let Some(block) = records::block_of(tx, agent)? {
            return Ok(Some(block));
        }
        let tainter = lock(&self.tainted).get(&call.session_id).cloned();
        if let Some((other, blocked_at)) = tainter {
            match records::block_of(tx, &other)? {
                Some(block) if block.blocked_at == blocked_at => return Ok(Some(block)),
                _ => {
                    lock(&self.tainted).remove(&call.session_id);
                }
            }
        }
        Ok(None)
    }

    /// The agent's non-terminal execution; one left by a process that died
    /// is failed on the way, as its session is over (spec 2.3.3).
    fn active_execution(&self, tx: &Transaction<'_>, agent: &str, now: i64) -> Result<Option<ExecutionRow>, StoreError> {
        let Some(row) = records::active_execution(tx, agent)? else { return Ok(None) };
        if row.owner_pid == self.pid || process_alive(row.owner_pid) {
            return Ok(Some(row));
        }
        if let Ok(running) = AnyExecution::from_row(row.clone())?.running("failed") {
            let failed = running.fail(now, Some("the safety-dongle process serving it exited".into()));
            records::update_execution(tx, failed.row())?;
            self.audit(tx, AuditEntry { agent, execution_id: Some(&row.id), event: "abandon", decision: "failed", ..Default::default() })?;
        }
        Ok(None)
    }

    /// `execute_agent`: starts a monitored execution.
    pub async fn execute(&self, call: &CallContext, request: ExecuteRequest) -> OperationResult {
        let now = now_ms();
        let settings = self.policy.settings_for(&request.agent);
        let max_steps = request.max_steps.map_or(settings.max_steps, |asked| asked.min(settings.max_steps));
        let agent = request.agent.as_str();
        let mut ask = None;
        let result = self.store
            .write(|tx| {
                if let Some(mut block) = self.block_for(tx, call, agent)? {
                    ask = self.reissue_if_expired(tx, call, &mut block, now)?;
                    self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "execute", decision: "refused", stage: Some("block"), ..Default::default() })?;
                    return Ok(Err(AqlError::agent_blocked(&block.agent, &block.challenge_id, &block.reason)));
                }
                if let Some(active) = self.active_execution(tx, agent, now)? {
                    return Ok(Err(AqlError::execution_exists(agent, &active.id)));
                }
                let execution = Execution::new(NewExecution {
                    id: uuid::Uuid::new_v4().to_string(),
                    agent: agent.to_owned(),
                    max_steps,
                    started_at: now,
                    owner_pid: self.pid,
                    session_id: call.session_id.clone(),
                    event_cursor: records::last_event_id(tx)?,
                    goal: request.goal.clone(),
                })
                .start();
                records::insert_execution(tx, execution.row())?;
                self.audit(tx, AuditEntry { agent, execution_id: Some(&execution.row().id), session_id: Some(&call.session_id), event: "execute", decision: "started", ..Default::default() })?;
                let mut state = execution_json(execution.row());
                state["riskTolerance"] = settings.tolerance.name().into();
                state["safetyLoop"] = self.config.mode.name().into();
                Ok(Ok(state))
            })
            .map_err(internal)?;
        if let Some(ask) = ask {
            let _ = self.sync_and_ask(&ask).await;
        }
        if result.is_ok() {
            lock(&self.session_agents).insert(call.session_id.clone(), request.agent.clone());
        }
        result
    }

    /// `record_execution_step`: evaluates the reported action and answers
    /// with an `AutonomyDirective`. Store failures answer with a refusal,
    /// never with permission to go on.
    pub async fn step(&self, call: &CallContext, request: StepRequest) -> OperationResult {
        let now = now_ms();
        let result = self.store.write(|tx| self.step_in(tx, call, &request, now));
        let result = match result {
            Ok(result) => result,
            Err(error) => {
                tracing::error!(%error, "safety state store failed during a step");
                return Ok(Directive::refuse(
                    "Safety state unavailable: refusing to continue",
                    "the safety state store could not record this step; fail closed",
                )
                .to_json());
            }
        };
        if result.needs_sync
            && let Err(error) = self.store.sync_barrier()
        {
            tracing::error!(%error, "could not make a block or challenge durable");
            return Ok(Directive::refuse("Safety state unavailable: refusing to continue", "the block could not be made durable; fail closed").to_json());
        }
        if let Some(blocked_at) = result.taints_session {
            lock(&self.tainted).insert(call.session_id.clone(), (request.agent.clone(), blocked_at));
        }
        {
            let mut pauses = lock(&self.pauses);
            if result.expired_pause {
                pauses.remove(&request.agent);
            }
            if let Some(pause) = result.new_pause {
                pauses.insert(request.agent.clone(), pause);
            }
        }
        let mut directive = result.directive;
        if let Some(ask) = result.ask
            && let Err(failures) = self.ask_human(&ask).await
        {
            let way_out = match ask.kind {
                ChallengeKind::DangerZone => format!(" The operator can lift the block with `safety-dongle unblock {}` at a terminal.", ask.agent),
                _ => String::new(),
            };
            let unshown = format!("No channel could show the request to a human ({}).{way_out}", failures.join("; "));
            directive.factors.push(unshown.clone());
            directive.reason = Some(match directive.reason.take() {
                Some(reason) => format!("{reason}. {unshown}"),
                None => unshown,
            });
        }
        Ok(directive.to_json())
    }

    fn step_in(&self, tx: &Transaction<'_>, call: &CallContext, request: &StepRequest, now: i64) -> Result<StepResult, StoreError> {
        let agent = request.agent.as_str();
        let hint = Some(request.hint.as_str());
        let session = Some(call.session_id.as_str());
        let plain = |directive| StepResult { directive, needs_sync: false, taints_session: None, new_pause: None, expired_pause: false, ask: None };
        let enforcing = self.config.mode == LoopMode::Enforcing;

        if let Some(mut block) = self.block_for(tx, call, agent)? {
            let ask = if enforcing { self.reissue_if_expired(tx, call, &mut block, now)? } else { None };
            let mut directive = Directive::refuse(
                format!("Agent '{}' is hard-blocked: {}. Wait for a human to complete challenge {}", block.agent, block.reason, block.challenge_id),
                format!("agent '{}' is hard-blocked until a human completes challenge {}", block.agent, block.challenge_id),
            );
            directive.stopped = true;
            directive.notifications.push(self.notification(NotificationKind::DangerZone, &block.reason, [("verificationId", block.challenge_id.as_str()), ("agent", block.agent.as_str())], now));
            let directive = self.apply_mode(directive);
            self.audit(tx, AuditEntry { agent, session_id: session, event: "step", hint, decision: decision_name(&directive), stage: Some("block"), ..Default::default() })?;
            return Ok(StepResult { ask, ..plain(directive) });
        }

        let Some(row) = self.active_execution(tx, agent, now)? else {
            let directive = Directive::refuse(
                format!("Agent '{agent}' has no running execution: call execute_agent first"),
                "no running execution for this agent",
            );
            self.audit(tx, AuditEntry { agent, session_id: session, event: "step", hint, decision: "refused", stage: Some("lifecycle"), ..Default::default() })?;
            return Ok(plain(directive));
        };
        let execution_id = row.id.clone();
        let mut execution = match AnyExecution::from_row(row)?.running("stepped") {
            Ok(execution) => execution,
            Err(_) => return Err(StoreError::Inconsistent("an active execution is not running")),
        };
        let step = execution.record_step();
        let max_steps = execution.row().max_steps;
        let notifications = self.deliver_events(tx, &mut execution, agent, now)?;

        if matches!(self.config.mode, LoopMode::Logging | LoopMode::Disabled) {
            let factor = match self.config.mode {
                LoopMode::Logging => "logging mode: action recorded, not evaluated",
                _ => "safety loop disabled: action not evaluated",
            };
            let directive = Directive { proceed: true, factors: vec![factor.into()], stopped: false, reason: None, steps_remaining: None, next_step_risk: None, notifications };
            records::update_execution(tx, execution.row())?;
            self.audit(tx, AuditEntry { agent, execution_id: Some(&execution_id), session_id: session, event: "step", hint, decision: self.config.mode.name(), ..Default::default() })?;
            return Ok(plain(directive));
        }

        let mut expired_pause = false;
        let pending = lock(&self.pauses).get(agent).cloned();
        if let Some(pause) = pending.filter(|_| enforcing) {
            if pause.expires_at.is_some_and(|at| at <= now) {
                records::set_challenge_status(tx, &pause.challenge_id, "expired")?;
                expired_pause = true;
            } else {
                let mut directive = Directive::refuse(
                    format!("Waiting for a human: {} {} ({})", pause.challenge_kind.name(), pause.challenge_id, pause.reason),
                    format!("{} {} is still waiting for a human", pause.challenge_kind.name(), pause.challenge_id),
                );
                directive.steps_remaining = Some(max_steps.saturating_sub(step));
                directive.notifications = notifications;
                directive.notifications.push(self.pause_notification(&pause, now));
                records::update_execution(tx, execution.row())?;
                self.audit(tx, AuditEntry { agent, execution_id: Some(&execution_id), session_id: session, event: "step", hint, decision: "pause", stage: Some("pending"), ..Default::default() })?;
                return Ok(plain(directive));
            }
        }

        let facts = StepFacts { agent, hint: &request.hint, outcome: request.outcome, step, max_steps, agent_risk: request.agent_risk, folder: &call.working_folder };
        let evaluation = evaluate_step(&self.policy, &facts);
        let mut directive = Directive {
            proceed: evaluation.verdict == Verdict::Continue,
            factors: evaluation.factors.clone(),
            stopped: evaluation.verdict == Verdict::Stop,
            reason: evaluation.reason.clone(),
            steps_remaining: Some(max_steps.saturating_sub(step)),
            next_step_risk: Some(evaluation.tier),
            notifications,
        };
        let rule = evaluation.rule.map(|i| self.policy.rule(i).describe());
        let stage = format!("stage {}", evaluation.stage.number());

        let (mut taints_session, mut new_pause, mut ask) = (None, None, None);
        if enforcing {
            match evaluation.verdict {
                Verdict::Continue | Verdict::Pause(PauseKind::FailClosed) => {}
                Verdict::Stop => {
                    let block = self.hard_block(tx, Raised { session_id: &call.session_id, agent, action: &request.hint }, &evaluation, rule.as_deref(), now)?;
                    execution.advance_cursor(records::last_event_id(tx)?);
                    directive.notifications.push(self.notification(NotificationKind::DangerZone, &block.reason, [("verificationId", block.id.as_str()), ("agent", agent)], now));
                    taints_session = Some(now);
                    ask = Some(block);
                }
                Verdict::Pause(kind) => {
                    let (pause, pause_ask) = self.open_pause(tx, Raised { session_id: &call.session_id, agent, action: &request.hint }, kind, evaluation.reason.clone().unwrap_or_default(), now)?;
                    directive.notifications.push(self.pause_notification(&pause, now));
                    new_pause = Some(pause);
                    ask = Some(pause_ask);
                }
            }
        }
        let directive = self.apply_mode(directive);
        records::update_execution(tx, execution.row())?;
        self.audit(tx, AuditEntry {
            agent,
            execution_id: Some(&execution_id),
            session_id: session,
            event: "step",
            hint,
            decision: decision_name(&directive),
            stage: Some(&stage),
            rule: rule.as_deref(),
            ..Default::default()
        })?;
        Ok(StepResult { directive, needs_sync: ask.is_some(), taints_session, new_pause, expired_pause, ask })
    }

    /// A blocked agent whose challenge expired gets a fresh one, at most
    /// [`REISSUES_PER_WINDOW`] per [`REISSUE_WINDOW_MS`].
    fn reissue_if_expired(&self, tx: &Transaction<'_>, call: &CallContext, block: &mut BlockRow, now: i64) -> Result<Option<Ask>, StoreError> {
        if block.agent.is_empty() || self.config.mode != LoopMode::Enforcing {
            return Ok(None);
        }
        let expired = match records::challenge(tx, &block.challenge_id)? {
            Some((challenge, _)) => challenge.expires_at <= now || challenge.status != "pending",
            None => true,
        };
        if !expired || records::challenges_since(tx, &block.agent, ChallengeKind::DangerZone, now - REISSUE_WINDOW_MS)? >= REISSUES_PER_WINDOW {
            return Ok(None);
        }
        records::set_challenge_status(tx, &block.challenge_id, "expired")?;
        let raised = Raised { session_id: &call.session_id, agent: &block.agent, action: "re-issued for an expired challenge" };
        let ask = self.new_ask(ChallengeKind::DangerZone, raised, block.reason.clone(), now);
        self.record_challenge(tx, &ask, ask.expires_at, true, now)?;
        records::set_block_challenge(tx, &block.agent, &ask.id)?;
        self.audit(tx, AuditEntry { agent: &block.agent, event: "reissue", decision: "new challenge", stage: Some("block"), ..Default::default() })?;
        block.challenge_id = ask.id.clone();
        Ok(Some(ask))
    }

    /// Makes a re-issued challenge durable, then asks the human.
    async fn sync_and_ask(&self, ask: &Ask) -> Result<(), Vec<String>> {
        self.store.sync_barrier().map_err(|_| vec!["the challenge could not be made durable".to_owned()])?;
        self.ask_human(ask).await
    }

    /// Shows a code or an approval request to a human through the verifier.
    /// A code's salted hash is stored durably before this returns.
    async fn ask_human(&self, ask: &Ask) -> Result<(), Vec<String>> {
        let link = match &self.config.verifier {
            Ok(link) => link,
            Err(unavailable) => return Err(vec![unavailable.to_string()]),
        };
        // The request itself is already stored, so it counts.
        let raised = self.store.read(|tx| records::challenges_in_session_since(tx, &ask.session_id, now_ms() - HUMAN_REQUEST_WINDOW_MS));
        match raised {
            Ok(count) if count <= HUMAN_REQUESTS_PER_SESSION => {}
            Ok(_) => {
                return Err(vec![format!(
                    "this MCP session already asked a human {HUMAN_REQUESTS_PER_SESSION} times in {} minutes, so no dialog was opened",
                    HUMAN_REQUEST_WINDOW_MS / 60_000
                )]);
            }
            Err(_) => return Err(vec!["the safety state could not be read, so no dialog was opened".into()]),
        }
        let expires_at = rfc3339(ask.expires_at);
        let timeout_secs = u64::try_from((ask.expires_at - now_ms()).max(1_000) / 1_000).unwrap_or(1);
        let tier = match ask.kind {
            ChallengeKind::DangerZone => Some("danger_zone"),
            ChallengeKind::Verify => Some("verify"),
            ChallengeKind::Approval => None,
        };
        let request = HumanRequest { id: &ask.id, agent: &ask.agent, tier, reason: &ask.reason, action: &ask.action, expires_at: &expires_at, timeout_secs };
        if ask.kind == ChallengeKind::Approval {
            let ticket = link.ask_approval(&request).await;
            if let (Shown::On(_), Some(decision)) = (&ticket.shown, ticket.decision) {
                self.approvals.open(&ask.id, &ask.agent);
                let (board, store, id) = (self.approvals.clone(), self.store.clone(), ask.id.clone());
                tokio::spawn(async move {
                    let decision = decision.await.unwrap_or(crate::verify::link::Decision::TimedOut);
                    let status = match &decision {
                        crate::verify::link::Decision::Approve(_) => "approved",
                        crate::verify::link::Decision::Deny => "denied",
                        crate::verify::link::Decision::TimedOut => "expired",
                    };
                    let _ = store.write_durable(|tx| records::set_challenge_status(tx, &id, status));
                    board.settle(&id, decision);
                });
            }
            return match ticket.shown {
                Shown::On(_) => Ok(()),
                Shown::Nowhere(errors) => Err(errors),
            };
        }
        let outcome = link.show_code(&request).await;
        if let Some((salt, hash)) = &outcome.hash
            && self.store.write_durable(|tx| records::set_challenge_hash(tx, &ask.id, salt, hash)).is_err()
        {
            return Err(vec!["the code's hash could not be stored".into()]);
        }
        match (outcome.hash, outcome.shown) {
            (Some(_), Shown::On(_)) => Ok(()),
            (None, Shown::On(_)) => Err(vec!["verifier: showed a code without sending its hash".into()]),
            (_, Shown::Nowhere(errors)) => Err(errors),
        }
    }

    /// Records a hard block: a durable challenge, the block itself, and the
    /// danger-zone broadcast. Returns the request for the human.
    fn hard_block(&self, tx: &Transaction<'_>, raised: Raised<'_>, evaluation: &Evaluation, rule: Option<&str>, now: i64) -> Result<Ask, StoreError> {
        let agent = raised.agent;
        let reason = evaluation.reason.clone().unwrap_or_else(|| "hard block".into());
        let ask = self.new_ask(ChallengeKind::DangerZone, raised, reason, now);
        self.record_challenge(tx, &ask, ask.expires_at, true, now)?;
        records::insert_block(tx, &BlockRow { agent: agent.to_owned(), challenge_id: ask.id.clone(), reason: ask.reason.clone(), rule: rule.map(str::to_owned), blocked_at: now })?;
        records::insert_event(tx, &EventRow {
            id: 0,
            agent: None,
            kind: NotificationKind::DangerZone.name().into(),
            message: format!("Agent '{agent}' was hard-blocked: {}", ask.reason),
            metadata: json!({ "verificationId": ask.id, "agent": agent, "reason": ask.reason }).to_string(),
            created_at: now,
        })?;
        Ok(ask)
    }

    /// A request for a human under a fresh challenge id, valid for the
    /// configured challenge lifetime.
    fn new_ask(&self, kind: ChallengeKind, raised: Raised<'_>, reason: String, now: i64) -> Ask {
        Ask {
            kind,
            id: uuid::Uuid::new_v4().to_string(),
            agent: raised.agent.to_owned(),
            session_id: raised.session_id.to_owned(),
            reason,
            action: raised.action.to_owned(),
            expires_at: now + self.config.challenge_ttl_ms,
        }
    }

    /// Stores the challenge an [`Ask`] describes; `record_expiry` is when it
    /// stops being valid (`i64::MAX` for one only a human can end).
    fn record_challenge(&self, tx: &Transaction<'_>, ask: &Ask, record_expiry: i64, durable: bool, now: i64) -> Result<(), StoreError> {
        records::insert_challenge(tx, &ChallengeRow {
            id: ask.id.clone(),
            agent: ask.agent.clone(),
            kind: ask.kind.name().into(),
            action: ask.action.clone(),
            reason: ask.reason.clone(),
            created_at: now,
            expires_at: record_expiry,
            status: "pending".into(),
            durable,
            owner_pid: self.pid,
            session_id: Some(ask.session_id.clone()),
        })
    }

    /// Records the challenge behind a pause; returns the pause and the
    /// request for the human.
    fn open_pause(&self, tx: &Transaction<'_>, raised: Raised<'_>, kind: PauseKind, reason: String, now: i64) -> Result<(Pause, Ask), StoreError> {
        let challenge_kind = if kind == PauseKind::Verification { ChallengeKind::Verify } else { ChallengeKind::Approval };
        let ask = self.new_ask(challenge_kind, raised, reason, now);
        let expires_at = (kind != PauseKind::StepLimit).then_some(ask.expires_at);
        let pause = Pause { kind, challenge_id: ask.id.clone(), challenge_kind, reason: ask.reason.clone(), expires_at };
        self.record_challenge(tx, &ask, expires_at.unwrap_or(i64::MAX), false, now)?;
        Ok((pause, ask))
    }

    fn pause_notification(&self, pause: &Pause, now: i64) -> Notification {
        let level = match pause.kind {
            PauseKind::StepLimit => "step_limit",
            PauseKind::PreviousFailure => "previous_failure",
            PauseKind::Verification => "verify",
            PauseKind::Approval | PauseKind::FailClosed => "confirm",
        };
        self.notification(NotificationKind::AutonomyPause, &pause.reason, [(pause.id_key(), pause.challenge_id.as_str()), ("level", level)], now)
    }

    fn notification<const N: usize>(&self, kind: NotificationKind, message: &str, metadata: [(&str, &str); N], now: i64) -> Notification {
        Notification {
            kind,
            message: message.to_owned(),
            metadata: metadata.into_iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect(),
            timestamp: rfc3339(now),
        }
    }

    /// Pull-based notifications (spec 8.7.3): events since the execution's
    /// cursor, addressed to this agent or broadcast.
    fn deliver_events(&self, tx: &Transaction<'_>, execution: &mut Execution<super::lifecycle::state::Running>, agent: &str, now: i64) -> Result<Vec<Notification>, StoreError> {
        let events = records::events_after(tx, execution.row().event_cursor, agent)?;
        let mut notifications = Vec::with_capacity(events.len());
        for event in events {
            execution.advance_cursor(event.id);
            let metadata = match serde_json::from_str::<Value>(&event.metadata) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            };
            notifications.push(Notification {
                kind: NotificationKind::parse(&event.kind).unwrap_or(NotificationKind::Status),
                message: event.message,
                metadata,
                timestamp: rfc3339(event.created_at.min(now)),
            });
        }
        Ok(notifications)
    }

    /// Monitoring mode never holds an agent back; it says what it would do.
    fn apply_mode(&self, mut directive: Directive) -> Directive {
        if self.config.mode != LoopMode::Monitoring || directive.proceed {
            return directive;
        }
        let would = if directive.stopped { "stop" } else { "pause" };
        directive.reason = Some(format!("monitoring mode (advisory): would {would}: {}", directive.reason.unwrap_or_default()));
        directive.factors.push(format!("monitoring mode: directive is advisory, the agent may proceed (would {would})"));
        directive.proceed = true;
        directive.stopped = false;
        directive
    }

    /// `complete_execution` (or `failed` when the outcome is a failure).
    pub fn complete(&self, call: &CallContext, request: FinishRequest) -> OperationResult {
        self.finish(call, request, "complete")
    }

    /// `abort_execution`.
    pub fn abort(&self, call: &CallContext, request: FinishRequest) -> OperationResult {
        self.finish(call, request, "abort")
    }

    fn finish(&self, call: &CallContext, request: FinishRequest, event: &'static str) -> OperationResult {
        let now = now_ms();
        let agent = request.agent.as_str();
        let finished = self.finish_in_store(call, &request, event, now);
        if finished.is_ok() {
            let mut sessions = lock(&self.session_agents);
            if sessions.get(&call.session_id).is_some_and(|running| running == agent) {
                sessions.remove(&call.session_id);
            }
        }
        finished
    }

    fn finish_in_store(&self, call: &CallContext, request: &FinishRequest, event: &'static str, now: i64) -> OperationResult {
        let agent = request.agent.as_str();
        self.store
            .write(|tx| {
                if let Some(block) = self.block_for(tx, call, agent)? {
                    self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event, decision: "refused", stage: Some("block"), ..Default::default() })?;
                    return Ok(Err(AqlError::agent_blocked(&block.agent, &block.challenge_id, &block.reason)));
                }
                let Some(row) = self.active_execution(tx, agent, now)? else {
                    return Ok(Err(AqlError::no_active_execution(agent)));
                };
                let execution = AnyExecution::from_row(row)?;
                let finished = match (event, request.outcome) {
                    ("abort", _) => execution.cancel(now, request.text.clone()).map(Execution::into_row),
                    (_, Some(Outcome::Failure)) => execution.running("failed").map(|e| e.fail(now, request.text.clone()).into_row()),
                    _ => execution.running("completed").map(|e| e.complete(now, request.text.clone()).into_row()),
                };
                let row = match finished {
                    Ok(row) => row,
                    Err(error) => return Ok(Err(AqlError::bad_value(event, "element_name", &format!("names an execution that {error}")))),
                };
                records::update_execution(tx, &row)?;
                self.audit(tx, AuditEntry { agent, execution_id: Some(&row.id), session_id: Some(&call.session_id), event, decision: &row.status, ..Default::default() })?;
                Ok(Ok(execution_json(&row)))
            })
            .map_err(internal)?
    }

    /// The gate: a one-shot decision on an action outside any execution (a
    /// client hook's tool call), with the same policy, blocks, audit and
    /// humans as a step. A pause asks a human through the verifier and
    /// waits (bounded) for the answer.
    pub async fn gate(&self, call: &CallContext, agent: &str, action: &str) -> GateDecision {
        let action = &*redact_text(action);
        match self.check_action(call, agent, action, None, None, false).await {
            Checked::Allowed { factors } => GateDecision::Continue { factors },
            Checked::Refused { reason, factors } => GateDecision::Deny { reason, factors },
            Checked::AwaitingHuman { approval_id, reason, factors, .. } => match self.redeem_approval(call, agent, &approval_id, action).await {
                Ok(()) => GateDecision::HumanApproved { factors },
                Err(_) => GateDecision::Deny { reason: format!("{reason}; the human did not approve"), factors },
            },
        }
    }

    /// Decides on one action outside any execution. A deny or danger-zone
    /// verdict hard-blocks the agent as a step would (durably, before this
    /// returns); a pause shows an approval request to a human and returns
    /// its id without waiting for the answer. `risk_floor` is a baseline
    /// risk score the action carries whatever its text (a proxied
    /// operation's danger level); it can raise the computed score, never
    /// lower it. `must_ask` names why a human must approve the action even
    /// when the policy would let it continue (an adapter's trust level, an
    /// operation marked `requires_confirmation`). With `verify_refuses`, a
    /// verify-tier verdict refuses the action instead of asking for an
    /// approval: the tier wants a human's out-of-band code, which a single
    /// proxied call has no way to carry.
    pub async fn check_action(&self, call: &CallContext, agent: &str, action: &str, risk_floor: Option<u8>, must_ask: Option<&str>, verify_refuses: bool) -> Checked {
        // Evaluated, audited and shown to a human without any code in it.
        let action = &*redact_text(action);
        let now = now_ms();
        let settings = self.policy.settings_for(agent);
        let facts = StepFacts { agent, hint: action, outcome: None, step: 1, max_steps: settings.max_steps, agent_risk: risk_floor, folder: &call.working_folder };
        let enforcing = self.config.mode == LoopMode::Enforcing;
        let decided = self.store.write(|tx| {
            if let Some(mut block) = self.block_for(tx, call, agent)? {
                let ask = if enforcing { self.reissue_if_expired(tx, call, &mut block, now)? } else { None };
                self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "gate", hint: Some(action), decision: "refused", stage: Some("block"), ..Default::default() })?;
                let reason = format!("agent '{}' is hard-blocked ({}); a human must complete challenge {}", block.agent, block.reason, block.challenge_id);
                return Ok((Checked::Refused { reason, factors: vec![] }, ask, None));
            }
            let evaluation = evaluate_step(&self.policy, &facts);
            let rule = evaluation.rule.map(|i| self.policy.rule(i).describe());
            let mut stage = format!("stage {}", evaluation.stage.number());
            let mut factors = evaluation.factors.clone();
            let mut reason = evaluation.reason.clone().unwrap_or_default();
            let mut verdict = evaluation.verdict;
            match (verdict, must_ask) {
                (Verdict::Continue, Some(why)) => {
                    verdict = Verdict::Pause(PauseKind::Approval);
                    reason = why.to_owned();
                    stage = "operation".to_owned();
                    factors.push(format!("operation: {why}"));
                }
                (Verdict::Pause(PauseKind::Approval | PauseKind::Verification), Some(why)) => {
                    reason = format!("{reason}; {why}");
                    factors.push(format!("operation: {why}"));
                }
                _ => {}
            }
            let mut taint = None;
            let (checked, ask) = match (verdict, enforcing) {
                (Verdict::Continue, _) | (_, false) => (Checked::Allowed { factors }, None),
                (Verdict::Stop, true) => {
                    let ask = self.hard_block(tx, Raised { session_id: &call.session_id, agent, action }, &evaluation, rule.as_deref(), now)?;
                    let reason = format!("{reason}; agent '{agent}' is hard-blocked until a human completes challenge {}", ask.id);
                    taint = Some(now);
                    (Checked::Refused { reason, factors }, Some(ask))
                }
                (Verdict::Pause(PauseKind::FailClosed), true) => (Checked::Refused { reason, factors }, None),
                (Verdict::Pause(PauseKind::Verification), true) if verify_refuses => {
                    let reason = format!("{reason}; the verify tier needs a human's out-of-band code, so this call is refused (a policy autoApprove rule or the operation's declared danger level can allow it)");
                    (Checked::Refused { reason, factors }, None)
                }
                (Verdict::Pause(_), true) => {
                    let ask = self.new_ask(ChallengeKind::Approval, Raised { session_id: &call.session_id, agent, action }, reason.clone(), now);
                    self.record_challenge(tx, &ask, ask.expires_at, false, now)?;
                    lock(&self.gate_approvals).insert(ask.id.clone());
                    let checked = Checked::AwaitingHuman { approval_id: ask.id.clone(), reason, factors, expires_at: ask.expires_at };
                    (checked, Some(ask))
                }
            };
            let decision_name = match (&checked, self.config.mode) {
                (Checked::Refused { .. }, _) => "stop",
                (Checked::AwaitingHuman { .. }, _) => "pause",
                (_, LoopMode::Enforcing | LoopMode::Monitoring) => "continue",
                (_, mode) => mode.name(),
            };
            self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "gate", hint: Some(action), decision: decision_name, stage: Some(&stage), rule: rule.as_deref(), ..Default::default() })?;
            Ok((checked, ask, taint))
        });
        let fail_closed = || Checked::Refused { reason: "safety state unavailable: refusing (fail closed)".into(), factors: vec![] };
        let (checked, ask, taint) = match decided {
            Ok(decided) => decided,
            Err(error) => {
                tracing::error!(%error, "safety state store failed at the gate");
                return fail_closed();
            }
        };
        if ask.is_some() && self.store.sync_barrier().is_err() {
            return fail_closed();
        }
        if let Some(blocked_at) = taint {
            lock(&self.tainted).insert(call.session_id.clone(), (agent.to_owned(), blocked_at));
        }
        let Some(ask) = ask else { return checked };
        let shown = self.ask_human(&ask).await;
        match (checked, shown) {
            (Checked::AwaitingHuman { reason, factors, .. }, Err(failures)) => {
                Checked::Refused { reason: format!("{reason}; no channel could ask a human ({})", failures.join("; ")), factors }
            }
            // A block's challenge that could not be shown leaves the block
            // in place: the refusal stands either way.
            (checked, _) => checked,
        }
    }

    /// Waits (bounded) for the human's answer to an approval request the
    /// gate opened for `action`, and spends it. The agent's block, if one
    /// arrived meanwhile, still refuses.
    pub async fn redeem_approval(&self, call: &CallContext, agent: &str, approval_id: &str, action: &str) -> Result<(), AqlError> {
        let blocked = self.store.read(|tx| self.block_for(tx, call, agent)).map_err(internal)?;
        if let Some(block) = blocked {
            return Err(AqlError::agent_blocked(&block.agent, &block.challenge_id, &block.reason));
        }
        let settled = self.approvals.wait(approval_id, self.config.approval_wait).await;
        if !matches!(settled, Settled::StillPending) {
            lock(&self.gate_approvals).remove(approval_id);
        }
        let approved = self.approved(approval_id, settled)?;
        self.store
            .write_durable(|tx| {
                records::set_challenge_status(tx, approved.approval_id(), "used")?;
                self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "gate", hint: Some(action), decision: "approved", stage: Some("human"), ..Default::default() })
            })
            .map_err(internal)?;
        Ok(())
    }

    /// The human's Approve, or why there is none to spend.
    fn approved(&self, approval_id: &str, settled: Settled) -> Result<Approved, AqlError> {
        match settled {
            Settled::Approved(approved) => Ok(approved),
            Settled::StillPending => Err(AqlError::confirmation_pending(approval_id)),
            Settled::Denied => Err(AqlError::approval_denied(approval_id)),
            Settled::TimedOut => Err(AqlError::token_expired(approval_id)),
            Settled::Used => Err(AqlError::token_used(approval_id)),
            Settled::Unknown => Err(self.unknown_approval(approval_id)),
        }
    }

    /// Records a call refused before the policy was asked (an adapter's
    /// trust level does not allow the operation's danger level), durably,
    /// and says whether the refusal stands: only an enforcing loop refuses;
    /// the other modes record what would have happened and let it pass.
    pub fn refuse_outright(&self, call: &CallContext, agent: &str, action: &str, stage: &str) -> bool {
        let enforcing = self.config.mode == LoopMode::Enforcing;
        let decision = if enforcing { "stop" } else { "would_stop" };
        let written = self.store.write(|tx| {
            self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "gate", hint: Some(action), decision, stage: Some(stage), ..Default::default() })
        });
        if let Err(error) = written {
            tracing::error!(%error, "a refused call could not be audited; refusing (fail closed)");
            return true;
        }
        enforcing
    }

    /// Appends one audit row about a call the gate admitted: what became
    /// of it. The decision's own row was committed before the call left;
    /// this one is written off the answer's path, so the agent does not wait
    /// for a record of what it already has.
    pub fn record_outcome(self: &Arc<Self>, call: &CallContext, agent: &str, action: &str, outcome: &'static str) {
        let (safety, session, agent, action) = (self.clone(), call.session_id.clone(), agent.to_owned(), action.to_owned());
        tokio::task::spawn_blocking(move || {
            let written = safety.store.write(|tx| {
                safety.audit(tx, AuditEntry { agent: &agent, session_id: Some(&session), event: "call", hint: Some(&action), decision: outcome, ..Default::default() })
            });
            if let Err(error) = written {
                tracing::error!(%error, "the outcome of a gated call could not be audited");
            }
        });
    }

    /// Who a call outside `record_execution_step` acts for: the agent
    /// running an execution in this session, else the client by the name
    /// it gave at `initialize`. Blocks and audit rows use this name.
    pub fn acting_agent(&self, call: &CallContext) -> String {
        lock(&self.session_agents)
            .get(&call.session_id)
            .cloned()
            .or_else(|| call.client.clone())
            .unwrap_or_else(|| "mcp-client".to_owned())
    }

    /// Whether `call` comes from one of the challenge's agent's own
    /// sessions: the one whose call raised the challenge, one in which this
    /// process runs the agent's execution, or one its block tainted.
    fn is_agents_own_session(&self, call: &CallContext, challenge: &ChallengeRow) -> bool {
        challenge.session_id.as_deref() == Some(call.session_id.as_str())
            || lock(&self.session_agents).get(&call.session_id).is_some_and(|agent| *agent == challenge.agent)
            || lock(&self.tainted).get(&call.session_id).is_some_and(|(agent, _)| *agent == challenge.agent)
    }

    /// `verify_challenge`: one attempt at the code of a challenge. A right
    /// code lifts the block (danger zone) or the pause (verify tier), from
    /// any session. A wrong one from the agent's own session uses the
    /// challenge up and counts against the agent; from any other session it
    /// spends nothing and counts against that session (`attempts`).
    pub fn verify_challenge(&self, call: &CallContext, challenge_id: &str, typed: &str) -> OperationResult {
        let now = now_ms();
        let session = Some(call.session_id.as_str());
        let outcome = self
            .store
            .write_durable(|tx| {
                let Some((challenge, hash)) = records::challenge(tx, challenge_id)? else {
                    return Ok(Err(AqlError::token_invalid(challenge_id, "no such challenge")));
                };
                let agent = challenge.agent.as_str();
                if challenge.kind == ChallengeKind::Approval.name() {
                    return Ok(Err(AqlError::token_invalid(challenge_id, "this is an approval request: a human answers it in the dialog, and the agent calls confirm_operation")));
                }
                let own = self.is_agents_own_session(call, &challenge);
                let subject = if own { Subject::Agent(agent) } else { Subject::Session(&call.session_id) };
                if let Some(until) = attempts::locked_until(tx, &subject, now)? {
                    self.audit(tx, AuditEntry { agent, session_id: session, event: "verify", decision: "locked_out", stage: Some("rate_limit"), ..Default::default() })?;
                    let retry_after = (until - now + 999) / 1000;
                    return Ok(Err(if own { AqlError::rate_limited(agent, retry_after) } else { AqlError::session_rate_limited(retry_after) }));
                }
                let failed = |reason: &'static str| -> Result<Result<Value, AqlError>, StoreError> {
                    let stage = if own { reason } else { "other_session" };
                    self.audit(tx, AuditEntry { agent, session_id: session, event: "verify", decision: "failed", stage: Some(stage), ..Default::default() })?;
                    if let Some(until) = attempts::record_failure(tx, &subject, now)? {
                        let what = format!("{} locked out until {}", subject.key(), rfc3339(until));
                        self.audit(tx, AuditEntry { agent, session_id: session, event: "lockout", hint: Some(&what), decision: "locked_out", stage: Some("rate_limit"), ..Default::default() })?;
                    }
                    Ok(Err(match reason {
                        "used" => AqlError::token_used(challenge_id),
                        "expired" => AqlError::token_expired(challenge_id),
                        _ if !own => AqlError::verification_failed_elsewhere(challenge_id),
                        _ => AqlError::verification_failed(challenge_id),
                    }))
                };
                if challenge.status != "pending" {
                    return failed("used");
                }
                if challenge.expires_at <= now {
                    records::set_challenge_status(tx, challenge_id, "expired")?;
                    return failed("expired");
                }
                // Only the agent's own attempts spend the challenge.
                let spend = |status: &str| if own { records::set_challenge_status(tx, challenge_id, status) } else { Ok(()) };
                let Some((salt, hash)) = hash else {
                    spend("failed")?;
                    return failed("unshown");
                };
                let Some(proof) = code_verified(agent, &salt, &hash, typed) else {
                    spend("failed")?;
                    return failed("wrong_code");
                };
                records::set_challenge_status(tx, challenge_id, "verified")?;
                if challenge.kind == ChallengeKind::DangerZone.name() {
                    records::remove_block(tx, &proof)?;
                }
                self.audit(tx, AuditEntry { agent, session_id: session, event: "verify", decision: proof.resolution(), stage: Some(&challenge.kind), ..Default::default() })?;
                Ok(Ok(json!({ "verified": true, "challenge_id": challenge_id, "element_name": agent, "kind": challenge.kind })))
            })
            .map_err(internal)?;
        if let Ok(verified) = &outcome
            && let Some(agent) = verified["element_name"].as_str()
        {
            let mut pauses = lock(&self.pauses);
            if pauses.get(agent).is_some_and(|p| p.challenge_id == challenge_id) {
                pauses.remove(agent);
            }
        }
        outcome
    }

    /// `confirm_operation`: waits (bounded) for the human's answer to an
    /// approval request. Only the human's Approve, delivered by the
    /// verifier, makes this succeed; it can be used once.
    pub async fn confirm(&self, call: &CallContext, approval_id: &str) -> OperationResult {
        if lock(&self.gate_approvals).contains(approval_id) {
            return Err(AqlError::bad_value("confirm_operation", "approval_id", "belongs to a gated call: repeat that call with its confirmation token (params._confirmation) to redeem it"));
        }
        let agent = self.approvals.agent_of(approval_id);
        let settled = self.approvals.wait(approval_id, self.config.approval_wait).await;
        if matches!(settled, Settled::Denied) {
            self.lift_denied(agent.as_deref(), approval_id);
        }
        let approved = self.approved(approval_id, settled)?;
        let agent = agent.unwrap_or_default();
        self.use_approval(call, &agent, approved)
    }

    /// Spends an approval: lifts the agent's pause (a step-limit pause also
    /// grants a fresh step budget), and records it.
    fn use_approval(&self, call: &CallContext, agent: &str, approved: Approved) -> OperationResult {
        let pause = {
            let mut pauses = lock(&self.pauses);
            match pauses.get(agent) {
                Some(p) if p.challenge_id == approved.approval_id() => pauses.remove(agent),
                _ => None,
            }
        };
        self.store
            .write_durable(|tx| {
                records::set_challenge_status(tx, approved.approval_id(), "used")?;
                if pause.as_ref().is_some_and(|p| p.kind == PauseKind::StepLimit)
                    && let Some(row) = records::active_execution(tx, agent)?
                {
                    records::update_execution(tx, &ExecutionRow { steps: 0, ..row })?;
                }
                self.audit(tx, AuditEntry { agent, session_id: Some(&call.session_id), event: "confirm", decision: "approved", stage: Some("human"), ..Default::default() })?;
                Ok(())
            })
            .map_err(internal)?;
        Ok(json!({ "approved": true, "approval_id": approved.approval_id(), "element_name": agent }))
    }

    /// A denied request ends its pause: the agent must not take that
    /// action, and may report a different one.
    fn lift_denied(&self, agent: Option<&str>, approval_id: &str) {
        if let Some(agent) = agent {
            let mut pauses = lock(&self.pauses);
            if pauses.get(agent).is_some_and(|p| p.challenge_id == approval_id) {
                pauses.remove(agent);
            }
        }
    }

    /// Why an approval id is not waiting in this process.
    fn unknown_approval(&self, approval_id: &str) -> AqlError {
        let stored = self.store.read(|tx| records::challenge(tx, approval_id)).ok().flatten();
        match stored.map(|(c, _)| c.status) {
            Some(status) if status == "used" => AqlError::token_used(approval_id),
            Some(status) if status == "denied" => AqlError::approval_denied(approval_id),
            Some(status) if status == "expired" => AqlError::token_expired(approval_id),
            Some(_) => AqlError::token_invalid(approval_id, "no human was asked about this request (no channel could show it, or the dongle restarted)"),
            None => AqlError::token_invalid(approval_id, "no such approval request"),
        }
    }

    /// `get_execution_state`: the agent's latest execution, its block and
    /// any pause waiting for a human. Reading is allowed while blocked.
    pub fn state(&self, agent: &str) -> OperationResult {
        let (row, block) = self
            .store
            .read(|tx| Ok((records::latest_execution(tx, agent)?, records::block_of(tx, agent)?)))
            .map_err(internal)?;
        let Some(row) = row else {
            return Err(AqlError::no_active_execution(agent));
        };
        let mut state = execution_json(&row);
        state["blocked"] = block.is_some().into();
        if let Some(block) = block {
            state["verificationId"] = block.challenge_id.into();
            state["blockReason"] = block.reason.into();
        }
        if let Some(pause) = lock(&self.pauses).get(agent) {
            state["pending"] = json!({ "kind": pause.challenge_kind.name(), pause.id_key(): pause.challenge_id, "reason": pause.reason });
        }
        Ok(state)
    }
}

/// Spec 8.4.3's state format, plus step counts.
fn execution_json(row: &ExecutionRow) -> Value {
    let mut state = json!({
        "execution_id": row.id,
        "element_name": row.agent,
        "status": row.status,
        "started_at": rfc3339(row.started_at),
        "steps": row.steps,
        "maxAutonomousSteps": row.max_steps,
        "stepsRemaining": row.max_steps.saturating_sub(row.steps),
    });
    if let Some(at) = row.finished_at {
        state["finished_at"] = rfc3339(at).into();
    }
    if let Some(summary) = &row.summary {
        state["summary"] = summary.clone().into();
    }
    state
}

fn decision_name(directive: &Directive) -> &'static str {
    match (directive.proceed, directive.stopped) {
        (true, _) => "continue",
        (false, true) => "stop",
        (false, false) => "pause",
    }
}

/// The tier names, for introspection.
pub fn tier_names() -> Vec<&'static str> {
    [SafetyTier::Advisory, SafetyTier::Confirm, SafetyTier::Verify, SafetyTier::DangerZone].map(SafetyTier::name).to_vec()
}
