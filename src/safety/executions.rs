//! Executions (spec 8.4-8.7): `execute_agent`, `record_execution_step`,
//! `complete_execution`, `abort_execution` and `get_execution_state`.
//!
//! Each operation is one write transaction over the agent's block,
//! execution and step budget in the shared state. A step is the loop's
//! one decision ([`LoopCore::decide`], `safety::decision`), told as an
//! `AutonomyDirective`: said in monitoring mode as advice, and saying so
//! when no channel could show a human the request it made.

use std::sync::Arc;

use serde::Serialize;

use crate::{
    protocol::registry::CallContext,
    store::{
        audit::{AuditDecision, AuditEntry, AuditEvent, AuditStage},
        now_ms,
        records::{self, ExecutionRow},
        rfc3339,
    },
};

use super::{
    core::LoopCore,
    decision::{Attempt, Decision, Details, Door, Refusal, StateFailure},
    directive::{Directive, DirectiveVerdict, SafetyTier},
    error::SafetyError,
    evaluator::Outcome,
    lifecycle::{AnyExecution, Execution, NewExecution},
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
                        session_id: Some(&call.session_id),
                        stage: Some(AuditStage::Block),
                        ..AuditEntry::of(agent, AuditEvent::Execute, AuditDecision::Refused)
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
                    execution_id: Some(&execution.row().id),
                    session_id: Some(&call.session_id),
                    ..AuditEntry::of(agent, AuditEvent::Execute, AuditDecision::Started)
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

    /// `record_execution_step`: the loop's decision on the reported
    /// action, told as an `AutonomyDirective`. Store failures answer with
    /// a refusal, never with permission to go on.
    pub async fn step(&self, call: &CallContext, request: StepRequest) -> Directive {
        let attempt = Attempt {
            call,
            agent: &request.agent,
            action: &request.hint,
            door: Door::Step { outcome: request.outcome, agent_risk: request.agent_risk },
        };
        directive(&request.agent, self.core.decide(attempt).await)
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
                        session_id: Some(&call.session_id),
                        stage: Some(AuditStage::Block),
                        ..AuditEntry::of(agent, event, AuditDecision::Refused)
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
                Err(error) => {
                    return Ok(Err(SafetyError::Lifecycle { operation: event.name(), error }));
                }
            };
            records::update_execution(tx, &row)?;
            core.audit(
                tx,
                AuditEntry {
                    execution_id: Some(&row.id),
                    session_id: Some(&call.session_id),
                    ..AuditEntry::of(agent, event, row.status.into())
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
    fn event(self) -> AuditEvent {
        match self {
            Self::Complete => AuditEvent::Complete,
            Self::Abort => AuditEvent::Abort,
        }
    }
}

/// The directive that tells an agent the loop's `decision` on its step.
fn directive(agent: &str, decision: Decision) -> Directive {
    let unshown = &decision.details().unshown;
    let unshown = (!unshown.is_empty()).then(|| {
        let way_out = match &decision {
            Decision::Blocked { block, .. } => format!(
                " The operator can lift the block with `safety-dongle unblock {}` at a terminal.",
                block.agent
            ),
            _ => String::new(),
        };
        format!("No channel could show the request to a human ({}).{way_out}", unshown.join("; "))
    });
    let mut directive = match decision {
        Decision::Continue { advice, details } => {
            let mut directive = told(DirectiveVerdict::Continue, details);
            if let Some(would) = advice {
                let would = would.name();
                // Monitoring mode never holds an agent back; it says what
                // it would do.
                directive.reason = Some(format!(
                    "monitoring mode (advisory): would {would}: {}",
                    directive.reason.unwrap_or_default()
                ));
                directive.factors.push(format!(
                    "monitoring mode: directive is advisory, the agent may proceed (would {would})"
                ));
            }
            directive
        }
        Decision::AwaitingHuman { details, .. }
        | Decision::Refused {
            refusal:
                Refusal::FailClosed | Refusal::NeedsCode | Refusal::Untrusted | Refusal::Unshown(_),
            details,
        } => told(DirectiveVerdict::Hold, details),
        Decision::Refused { refusal: Refusal::Paused(pause), details } => Directive {
            steps_remaining: details.steps_remaining,
            notifications: details.notifications,
            ..Directive::refuse(
                pause.describe(),
                format!(
                    "{} {} is still waiting for a human",
                    pause.challenge_kind.name(),
                    pause.challenge_id
                ),
            )
        },
        Decision::Refused { refusal: Refusal::NoExecution, .. } => Directive::refuse(
            format!("Agent '{agent}' has no running execution: call execute_agent first"),
            "no running execution for this agent",
        ),
        Decision::Refused { refusal: Refusal::Unanalysed(why), .. } => Directive::refuse(
            format!("Action not evaluated: {why}; refusing (fail closed)"),
            format!("{why}; fail closed"),
        ),
        Decision::Refused { refusal: Refusal::StateUnavailable(failure), .. } => Directive::refuse(
            "Safety state unavailable: refusing to continue",
            match failure {
                StateFailure::Unrecorded => {
                    "the safety state store could not record this step; fail closed"
                }
                StateFailure::NotDurable => "the block could not be made durable; fail closed",
            },
        ),
        Decision::Blocked { raised: true, details, .. } => told(DirectiveVerdict::Stop, details),
        Decision::Blocked { block, raised: false, details } => Directive {
            verdict: DirectiveVerdict::Stop,
            notifications: details.notifications,
            ..Directive::refuse(
                format!(
                    "Agent '{}' is hard-blocked: {}. Wait for a human to complete challenge {}",
                    block.agent, block.reason, block.challenge_id
                ),
                format!(
                    "agent '{}' is hard-blocked until a human completes challenge {}",
                    block.agent, block.challenge_id
                ),
            )
        },
    };
    if let Some(unshown) = unshown {
        directive.factors.push(unshown.clone());
        directive.reason = Some(match directive.reason.take() {
            Some(reason) => format!("{reason}. {unshown}"),
            None => unshown,
        });
    }
    directive
}

/// A directive that tells `details` as the decision has them.
fn told(verdict: DirectiveVerdict, details: Details) -> Directive {
    Directive {
        verdict,
        factors: details.factors,
        reason: details.reason,
        steps_remaining: details.steps_remaining,
        next_step_risk: details.risk,
        notifications: details.notifications,
    }
}

/// The tier names, for introspection.
pub fn tier_names() -> Vec<&'static str> {
    [SafetyTier::Advisory, SafetyTier::Confirm, SafetyTier::Verify, SafetyTier::DangerZone]
        .map(SafetyTier::name)
        .to_vec()
}
