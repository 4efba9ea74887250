//! Executions (spec 8.4-8.7): `execute_agent`, `record_execution_step`,
//! `complete_execution`, `abort_execution` and `get_execution_state`
//! around the pure evaluator.
//!
//! Each operation is one write transaction: the agent's block, pause,
//! execution and step budget are read from the shared state, the step is
//! evaluated, and its effects and audit row are committed together. When a step creates a
//! block or a challenge, a `synchronous=FULL` barrier follows the commit
//! before the directive is returned, so nothing is announced that a power
//! cut could undo. After the commit the human is asked; the step waits only
//! until the request is shown, and says so in the directive if no channel
//! could show it.

use std::sync::Arc;

use crate::store::Tx;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::{
    analysis::{Analysis, OnDisk},
    config::LoopMode,
    protocol::registry::CallContext,
    store::{
        StoreError,
        audit::AuditEntry,
        now_ms,
        records::{self, ChallengeKind, ExecutionRow},
        rfc3339,
    },
    verify::humans::{Ask, Raised},
};

use super::{
    analysing::{self, Analysed},
    core::{LoopCore, Spent, notification},
    directive::{Directive, Notification, NotificationKind, SafetyTier},
    error::SafetyError,
    evaluator::{Outcome, PauseKind, StepFacts, Verdict, evaluate_analysed},
    lifecycle::{AnyExecution, Execution, NewExecution, state::Running},
};

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

pub struct FinishRequest {
    pub agent: String,
    pub outcome: Option<Outcome>,
    pub text: Option<String>,
}

/// Spec 8.4.3's state format, plus step counts, the loop's settings at the
/// start, and (from `get_execution_state`) the block and pause.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionState {
    pub execution_id: String,
    pub element_name: String,
    pub status: String,
    pub started_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub steps: u32,
    #[serde(rename = "maxAutonomousSteps")]
    pub max_steps: u32,
    #[serde(rename = "stepsRemaining")]
    pub steps_remaining: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(rename = "riskTolerance", skip_serializing_if = "Option::is_none")]
    pub risk_tolerance: Option<&'static str>,
    #[serde(rename = "safetyLoop", skip_serializing_if = "Option::is_none")]
    pub safety_loop: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked: Option<bool>,
    #[serde(rename = "verificationId", skip_serializing_if = "Option::is_none")]
    pub verification_id: Option<String>,
    #[serde(rename = "blockReason", skip_serializing_if = "Option::is_none")]
    pub block_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingHuman>,
}

/// A request waiting for a human that holds the agent.
#[derive(Debug, Clone, Serialize)]
pub struct PendingHuman {
    pub kind: &'static str,
    #[serde(rename = "verificationId", skip_serializing_if = "Option::is_none")]
    pub verification_id: Option<String>,
    #[serde(rename = "approvalId", skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    pub reason: String,
}

impl ExecutionState {
    /// The state of `row`, whose agent has `steps_remaining` of its budget.
    fn of(row: &ExecutionRow, steps_remaining: u32) -> Self {
        Self {
            execution_id: row.id.clone(),
            element_name: row.agent.clone(),
            status: row.status.name().to_owned(),
            started_at: rfc3339(row.started_at),
            finished_at: row.finished_at.map(rfc3339),
            steps: row.steps,
            max_steps: row.max_steps,
            steps_remaining,
            summary: row.summary.clone(),
            risk_tolerance: None,
            safety_loop: None,
            blocked: None,
            verification_id: None,
            block_reason: None,
            pending: None,
        }
    }
}

/// What a step's transaction decided, and what must follow its commit.
struct StepResult {
    directive: Directive,
    needs_sync: bool,
    /// The block this step created, as `blocked_at`.
    taints_session: Option<i64>,
    ask: Option<Ask>,
}

impl StepResult {
    fn plain(directive: Directive) -> Self {
        Self { directive, needs_sync: false, taints_session: None, ask: None }
    }
}

pub struct SafetyLoop {
    core: Arc<LoopCore>,
}

impl SafetyLoop {
    pub fn new(core: Arc<LoopCore>) -> Self {
        Self { core }
    }

    pub fn core(&self) -> &Arc<LoopCore> {
        &self.core
    }

    /// `execute_agent`: starts a monitored execution.
    pub async fn execute(
        &self,
        call: &CallContext,
        request: ExecuteRequest,
    ) -> Result<ExecutionState, SafetyError> {
        let core = &self.core;
        let now = now_ms();
        let agent = request.agent.as_str();
        let mut ask = None;
        let result = core.store.write(|tx| {
            let settings = core.deciding_policy(tx)?.settings_for(agent);
            let max_steps =
                request.max_steps.map_or(settings.max_steps, |asked| asked.min(settings.max_steps));
            if let Some(mut block) = core.block_for(tx, &call.session_id, agent)? {
                ask = core.reissue_if_expired(tx, &call.session_id, &mut block, now)?;
                core.audit(
                    tx,
                    AuditEntry {
                        agent,
                        session_id: Some(&call.session_id),
                        event: "execute",
                        decision: "refused",
                        stage: Some("block"),
                        ..Default::default()
                    },
                )?;
                return Ok(Err(SafetyError::Blocked(block)));
            }
            if let Some(active) = core.active_execution(tx, agent, now)? {
                return Ok(Err(SafetyError::ExecutionExists {
                    agent: agent.to_owned(),
                    execution_id: active.id,
                }));
            }
            let execution = Execution::new(NewExecution {
                id: uuid::Uuid::new_v4().to_string(),
                agent: agent.to_owned(),
                max_steps,
                started_at: now,
                owner: core.owner().clone(),
                session_id: call.session_id.clone(),
                event_cursor: records::last_event_id(tx)?,
                goal: request.goal.clone(),
            })
            .start();
            records::insert_execution(tx, execution.row())?;
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    execution_id: Some(&execution.row().id),
                    session_id: Some(&call.session_id),
                    event: "execute",
                    decision: "started",
                    ..Default::default()
                },
            )?;
            let mut state =
                ExecutionState::of(execution.row(), core.steps_remaining(tx, agent, max_steps)?);
            state.risk_tolerance = Some(settings.tolerance.name());
            state.safety_loop = Some(core.mode.name());
            Ok(Ok(state))
        })?;
        if let Some(ask) = ask {
            let _ = core.humans.sync_and_ask(&ask).await;
        }
        if result.is_ok() {
            core.sessions.set_agent(&call.session_id, &request.agent);
        }
        result
    }

    /// `record_execution_step`: evaluates the reported action and answers
    /// with an `AutonomyDirective`. Store failures answer with a refusal,
    /// never with permission to go on.
    pub async fn step(&self, call: &CallContext, request: StepRequest) -> Directive {
        let core = &self.core;
        // Read before the state is locked: another agent's decision need
        // not wait for this text to be understood.
        let analysis = match core.mode {
            LoopMode::Logging | LoopMode::Disabled => None,
            LoopMode::Enforcing | LoopMode::Monitoring => {
                match analysing::analyse(&request.hint, &call.working_folder, None).await {
                    Analysed::Ready(analysis) => Some(analysis),
                    Analysed::Missing(why) => return self.unanalysed(call, &request, why),
                }
            }
        };
        let now = now_ms();
        let result = match core.store.write(|tx| self.step_in(tx, call, &request, analysis, now)) {
            Ok(result) => result,
            Err(error) => {
                tracing::error!(%error, "safety state store failed during a step");
                core.audit_later(AuditEntry {
                    agent: &request.agent,
                    session_id: Some(&call.session_id),
                    event: "step",
                    hint: Some(&request.hint),
                    decision: "stop",
                    stage: Some("state"),
                    ..Default::default()
                });
                return Directive::refuse(
                    "Safety state unavailable: refusing to continue",
                    "the safety state store could not record this step; fail closed",
                );
            }
        };
        if result.needs_sync
            && let Err(error) = core.store.sync_barrier_async().await
        {
            tracing::error!(%error, "could not make a block or challenge durable");
            return Directive::refuse(
                "Safety state unavailable: refusing to continue",
                "the block could not be made durable; fail closed",
            );
        }
        if let Some(blocked_at) = result.taints_session {
            core.sessions.taint(&call.session_id, &request.agent, blocked_at);
        }
        let mut directive = result.directive;
        if let Some(ask) = result.ask
            && let Err(failures) = core.humans.ask(&ask).await
        {
            let way_out = match ask.kind {
                ChallengeKind::DangerZone => format!(
                    " The operator can lift the block with `safety-dongle unblock {}` at a terminal.",
                    ask.agent
                ),
                _ => String::new(),
            };
            let unshown = format!(
                "No channel could show the request to a human ({}).{way_out}",
                failures.join("; ")
            );
            directive.factors.push(unshown.clone());
            directive.reason = Some(match directive.reason.take() {
                Some(reason) => format!("{reason}. {unshown}"),
                None => unshown,
            });
        }
        directive
    }

    /// A step whose action could not be analysed: refused, and audited.
    fn unanalysed(&self, call: &CallContext, request: &StepRequest, why: &str) -> Directive {
        let core = &self.core;
        tracing::error!(agent = %request.agent, why, "a step is refused without a verdict");
        let directive = self.apply_mode(Directive::refuse(
            format!("Action not evaluated: {why}; refusing (fail closed)"),
            format!("{why}; fail closed"),
        ));
        let entry = AuditEntry {
            agent: &request.agent,
            session_id: Some(&call.session_id),
            event: "step",
            hint: Some(&request.hint),
            decision: decision_name(&directive),
            stage: Some("analysis"),
            ..Default::default()
        };
        core.audit_now_or_later(entry);
        directive
    }

    /// The step's decision in one transaction. `analysis` is the action's
    /// (made before the transaction; `None` in the modes that do not
    /// evaluate), `Some(None)` when it is too long to analyse.
    fn step_in(
        &self,
        tx: &Tx<'_>,
        call: &CallContext,
        request: &StepRequest,
        analysis: Option<Option<Analysis>>,
        now: i64,
    ) -> Result<StepResult, StoreError> {
        let core = &self.core;
        let agent = request.agent.as_str();
        let hint = Some(request.hint.as_str());
        let session = Some(call.session_id.as_str());
        let enforcing = core.enforcing();

        if let Some(mut block) = core.block_for(tx, &call.session_id, agent)? {
            let ask = core.reissue_if_expired(tx, &call.session_id, &mut block, now)?;
            let mut directive = Directive::refuse(
                format!(
                    "Agent '{}' is hard-blocked: {}. Wait for a human to complete challenge {}",
                    block.agent, block.reason, block.challenge_id
                ),
                format!(
                    "agent '{}' is hard-blocked until a human completes challenge {}",
                    block.agent, block.challenge_id
                ),
            );
            directive.stopped = true;
            directive.notifications.push(notification(
                NotificationKind::DangerZone,
                &block.reason,
                [("verificationId", block.challenge_id.as_str()), ("agent", block.agent.as_str())],
                now,
            ));
            let directive = self.apply_mode(directive);
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    session_id: session,
                    event: "step",
                    hint,
                    decision: decision_name(&directive),
                    stage: Some("block"),
                    ..Default::default()
                },
            )?;
            return Ok(StepResult { ask, ..StepResult::plain(directive) });
        }

        let Some(row) = core.active_execution(tx, agent, now)? else {
            let directive = Directive::refuse(
                format!("Agent '{agent}' has no running execution: call execute_agent first"),
                "no running execution for this agent",
            );
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    session_id: session,
                    event: "step",
                    hint,
                    decision: "refused",
                    stage: Some("lifecycle"),
                    ..Default::default()
                },
            )?;
            return Ok(StepResult::plain(directive));
        };
        let execution_id = row.id.clone();
        let mut execution = match AnyExecution::from_row(row)?.running("stepped") {
            Ok(execution) => execution,
            Err(_) => return Err(StoreError::Inconsistent("an active execution is not running")),
        };
        let policy = core.deciding_policy(tx)?;
        let Spent { step, max_steps } =
            core.spend_step(tx, &policy, agent, Some(&mut execution))?;
        let notifications = self.deliver_events(tx, &mut execution, agent, now)?;

        if matches!(core.mode, LoopMode::Logging | LoopMode::Disabled) {
            let factor = match core.mode {
                LoopMode::Logging => "logging mode: action recorded, not evaluated",
                _ => "safety loop disabled: action not evaluated",
            };
            let directive = Directive {
                proceed: true,
                factors: vec![factor.into()],
                stopped: false,
                reason: None,
                steps_remaining: None,
                next_step_risk: None,
                notifications,
            };
            records::update_execution(tx, execution.row())?;
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    execution_id: Some(&execution_id),
                    session_id: session,
                    event: "step",
                    hint,
                    decision: core.mode.name(),
                    ..Default::default()
                },
            )?;
            return Ok(StepResult::plain(directive));
        }

        if enforcing && let Some(pause) = core.pause_of(tx, agent, now)? {
            let mut directive = Directive::refuse(
                pause.describe(),
                format!(
                    "{} {} is still waiting for a human",
                    pause.challenge_kind.name(),
                    pause.challenge_id
                ),
            );
            directive.steps_remaining = Some(max_steps.saturating_sub(step));
            directive.notifications = notifications;
            directive.notifications.push(core.pause_notification(&pause, now));
            records::update_execution(tx, execution.row())?;
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    execution_id: Some(&execution_id),
                    session_id: session,
                    event: "step",
                    hint,
                    decision: "pause",
                    stage: Some("pending"),
                    ..Default::default()
                },
            )?;
            return Ok(StepResult::plain(directive));
        }

        let files = OnDisk::in_folder(&call.working_folder);
        let facts = StepFacts {
            agent,
            hint: &request.hint,
            outcome: request.outcome,
            step,
            max_steps,
            agent_risk: request.agent_risk,
            folder: &call.working_folder,
            write: None,
            files: &files,
        };
        let evaluation = evaluate_analysed(&policy, &facts, analysis.flatten());
        let mut directive = Directive {
            proceed: evaluation.verdict == Verdict::Continue,
            factors: evaluation.factors.clone(),
            stopped: evaluation.verdict == Verdict::Stop,
            reason: evaluation.reason.clone(),
            steps_remaining: Some(max_steps.saturating_sub(step)),
            next_step_risk: Some(evaluation.tier),
            notifications,
        };
        let rule = evaluation.rule.map(|i| policy.rule(i).describe());
        let stage = format!("stage {}", evaluation.stage.number());
        let raised = Raised { session_id: &call.session_id, agent, action: &request.hint };

        let (mut taints_session, mut ask) = (None, None);
        if enforcing {
            match evaluation.verdict {
                Verdict::Continue | Verdict::Pause(PauseKind::FailClosed) => {}
                Verdict::Stop => {
                    let block = core.hard_block(tx, raised, &evaluation, rule.as_deref(), now)?;
                    execution.advance_cursor(records::last_event_id(tx)?);
                    directive.notifications.push(notification(
                        NotificationKind::DangerZone,
                        &block.reason,
                        [("verificationId", block.id.as_str()), ("agent", agent)],
                        now,
                    ));
                    taints_session = Some(now);
                    ask = Some(block);
                }
                Verdict::Pause(kind) => {
                    let (pause, pause_ask) = core.open_pause(
                        tx,
                        raised,
                        kind,
                        evaluation.reason.clone().unwrap_or_default(),
                        now,
                    )?;
                    directive.notifications.push(core.pause_notification(&pause, now));
                    ask = Some(pause_ask);
                }
            }
        }
        let directive = self.apply_mode(directive);
        records::update_execution(tx, execution.row())?;
        core.audit(
            tx,
            AuditEntry {
                agent,
                execution_id: Some(&execution_id),
                session_id: session,
                event: "step",
                hint,
                decision: decision_name(&directive),
                stage: Some(&stage),
                rule: rule.as_deref(),
                policy_hash: policy.hash(),
            },
        )?;
        Ok(StepResult { directive, needs_sync: ask.is_some(), taints_session, ask })
    }

    /// Pull-based notifications (spec 8.7.3): events since the execution's
    /// cursor, addressed to this agent or broadcast.
    fn deliver_events(
        &self,
        tx: &Tx<'_>,
        execution: &mut Execution<Running>,
        agent: &str,
        now: i64,
    ) -> Result<Vec<Notification>, StoreError> {
        let events = records::events_after(tx, execution.row().event_cursor, agent)?;
        let mut notifications = Vec::with_capacity(events.len());
        for event in events {
            execution.advance_cursor(event.id);
            let metadata = match serde_json::from_str::<Value>(&event.metadata) {
                Ok(Value::Object(map)) => map,
                _ => Map::new(),
            };
            notifications.push(Notification {
                kind: event.kind,
                message: event.message,
                metadata,
                timestamp: rfc3339(event.created_at.min(now)),
            });
        }
        Ok(notifications)
    }

    /// Monitoring mode never holds an agent back; it says what it would do.
    fn apply_mode(&self, mut directive: Directive) -> Directive {
        if self.core.mode != LoopMode::Monitoring || directive.proceed {
            return directive;
        }
        let would = if directive.stopped { "stop" } else { "pause" };
        directive.reason = Some(format!(
            "monitoring mode (advisory): would {would}: {}",
            directive.reason.unwrap_or_default()
        ));
        directive.factors.push(format!(
            "monitoring mode: directive is advisory, the agent may proceed (would {would})"
        ));
        directive.proceed = true;
        directive.stopped = false;
        directive
    }

    /// `complete_execution` (or `failed` when the outcome is a failure).
    pub fn complete(
        &self,
        call: &CallContext,
        request: FinishRequest,
    ) -> Result<ExecutionState, SafetyError> {
        self.finish(call, request, Finish::Complete)
    }

    /// `abort_execution`.
    pub fn abort(
        &self,
        call: &CallContext,
        request: FinishRequest,
    ) -> Result<ExecutionState, SafetyError> {
        self.finish(call, request, Finish::Abort)
    }

    fn finish(
        &self,
        call: &CallContext,
        request: FinishRequest,
        how: Finish,
    ) -> Result<ExecutionState, SafetyError> {
        let core = &self.core;
        let now = now_ms();
        let agent = request.agent.as_str();
        let event = how.event();
        let finished = core.store.write(|tx| {
            if let Some(block) = core.block_for(tx, &call.session_id, agent)? {
                core.audit(
                    tx,
                    AuditEntry {
                        agent,
                        session_id: Some(&call.session_id),
                        event,
                        decision: "refused",
                        stage: Some("block"),
                        ..Default::default()
                    },
                )?;
                return Ok(Err(SafetyError::Blocked(block)));
            }
            let Some(row) = core.active_execution(tx, agent, now)? else {
                return Ok(Err(SafetyError::NoActiveExecution(agent.to_owned())));
            };
            let execution = AnyExecution::from_row(row)?;
            let finished = match (how, request.outcome) {
                (Finish::Abort, _) => {
                    execution.cancel(now, request.text.clone()).map(Execution::into_row)
                }
                (_, Some(Outcome::Failure)) => execution
                    .running("failed")
                    .map(|e| e.fail(now, request.text.clone()).into_row()),
                _ => execution
                    .running("completed")
                    .map(|e| e.complete(now, request.text.clone()).into_row()),
            };
            let row = match finished {
                Ok(row) => row,
                Err(error) => return Ok(Err(SafetyError::Lifecycle { operation: event, error })),
            };
            records::update_execution(tx, &row)?;
            core.audit(
                tx,
                AuditEntry {
                    agent,
                    execution_id: Some(&row.id),
                    session_id: Some(&call.session_id),
                    event,
                    decision: row.status.name(),
                    ..Default::default()
                },
            )?;
            Ok(Ok(ExecutionState::of(&row, core.steps_remaining(tx, agent, row.max_steps)?)))
        })??;
        core.sessions.clear_agent(&call.session_id, agent);
        Ok(finished)
    }

    /// `get_execution_state`: the agent's latest execution, its block and
    /// any pause waiting for a human. Reading is allowed while blocked.
    pub fn state(&self, agent: &str) -> Result<ExecutionState, SafetyError> {
        let core = &self.core;
        let now = now_ms();
        let (row, block, pause) = core.store.write(|tx| {
            let row = match records::latest_execution(tx, agent)? {
                Some(row) => Some((core.steps_remaining(tx, agent, row.max_steps)?, row)),
                None => None,
            };
            Ok((row, records::block_of(tx, agent)?, core.pause_of(tx, agent, now)?))
        })?;
        let Some((steps_remaining, row)) = row else {
            return Err(SafetyError::NoActiveExecution(agent.to_owned()));
        };
        let mut state = ExecutionState::of(&row, steps_remaining);
        state.blocked = Some(block.is_some());
        if let Some(block) = block {
            state.verification_id = Some(block.challenge_id);
            state.block_reason = Some(block.reason);
        }
        state.pending = pause.map(|pause| {
            let code = pause.challenge_kind.wants_code();
            PendingHuman {
                kind: pause.challenge_kind.name(),
                verification_id: code.then(|| pause.challenge_id.clone()),
                approval_id: (!code).then(|| pause.challenge_id.clone()),
                reason: pause.reason,
            }
        });
        Ok(state)
    }
}

#[derive(Debug, Clone, Copy)]
enum Finish {
    Complete,
    Abort,
}

impl Finish {
    fn event(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Abort => "abort",
        }
    }
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
    [SafetyTier::Advisory, SafetyTier::Confirm, SafetyTier::Verify, SafetyTier::DangerZone]
        .map(SafetyTier::name)
        .to_vec()
}
