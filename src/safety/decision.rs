//! The one decision every door takes (DESIGN.md 4): a reported step
//! (`record_execution_step`), a hooked tool call and a proxied or adapter
//! call are each an [`Attempt`]; [`LoopCore::decide`] judges it in one
//! write transaction, applies its effects, writes its audit row, and
//! returns a [`Decision`] that the door turns into its own answer (a
//! directive, a hook's deny, an MCP-AQL error or an admission).
//!
//! The order, the same for every door and mode:
//! 1. an adapter whose trust level does not allow the call refuses it
//!    (enforcing; the other modes record `would_refuse` and go on);
//! 2. a hard block, the agent's own or the one that tainted its session,
//!    refuses in every mode: monitoring makes the policy's verdicts
//!    advisory, it does not lift a block only a human may lift;
//! 3. a step needs a running execution (a gated call counts on the one
//!    its agent runs, if any), and a step is given its pull-based
//!    notifications;
//! 4. a pause waiting for a human refuses (enforcing), spending nothing;
//! 5. one step of the agent's budget is spent;
//! 6. logging and disabled modes record the action and let it through;
//! 7. the policy judges the analysed action: enforcing applies the verdict
//!    (a stop hard-blocks, a pause asks a human, or refuses when nobody
//!    can be asked), monitoring records what it would have done and lets
//!    the action through.
//!
//! An action whose analysis failed or came late, and a state store that
//! fails, refuse in every mode that evaluates (fail closed). A block or a
//! request for a human is made durable (`synchronous=FULL`) before the
//! decision is returned, and the human is asked after that.
//!
//! The audit row's decision names the situation, whatever the door
//! ([`Decision::recorded`]): `continue`; `pause` (the policy held the
//! action back without blocking: a human is asked, or nobody can be;
//! also a pause already waiting, stage `pending`); `stop` (the policy
//! hard-blocked the agent); `refused` (decided before the policy was
//! asked: stage `block`, `lifecycle`, `analysis`, `state` or `trust`);
//! `would_stop`, `would_pause`, `would_refuse` (monitoring, and the trust
//! check outside enforcing); `logging` or `disabled`.

use serde_json::{Map, Value};

use crate::{
    analysis::{Analysis, FileWrite, OnDisk},
    config::LoopMode,
    protocol::registry::CallContext,
    store::{
        StoreError, Tx,
        audit::{AuditDecision, AuditEntry, AuditEvent, AuditStage},
        now_ms,
        records::{self, BlockRow, ChallengeKind, ChallengeStatus, EventRow},
        rfc3339,
    },
    verify::humans::{Ask, Raised},
};

use super::{
    analysing::{self, Analysed},
    approval_view::approval_view,
    core::{LoopCore, Pause, Spent, notification},
    directive::{Notification, NotificationKind, SafetyTier},
    evaluator::{Outcome, PauseKind, StepFacts, Verdict, evaluate_analysed},
    lifecycle::{Execution, state::Running},
};

/// One action to judge.
#[derive(Clone, Copy)]
pub struct Attempt<'a> {
    pub call: &'a CallContext,
    pub agent: &'a str,
    /// The action as it is evaluated, audited and shown: codes redacted.
    pub action: &'a str,
    pub door: Door<'a>,
}

/// Where an attempt comes in, and what it carries beyond its text.
#[derive(Debug, Clone, Copy)]
pub enum Door<'a> {
    /// `record_execution_step`: needs a running execution; a pause it
    /// opens holds the agent until a human answers.
    Step { outcome: Option<Outcome>, agent_risk: Option<u8> },
    /// A hooked, proxied or adapter call: an approval it asks for holds
    /// this call only (and the agent only for a step limit).
    Gate(Checks<'a>),
}

impl Door<'_> {
    /// The audit row's event.
    fn event(self) -> AuditEvent {
        match self {
            Self::Step { .. } => AuditEvent::Step,
            Self::Gate(_) => AuditEvent::Gate,
        }
    }
}

/// What a gated call carries beyond its text.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checks<'a> {
    /// A baseline risk score whatever the text (a proxied operation's
    /// danger level); it can raise the computed score, never lower it.
    pub risk_floor: Option<u8>,
    /// Why a human must approve even when the policy would let it through.
    pub must_ask: Option<&'a str>,
    /// A verify-tier verdict refuses instead of asking for an approval.
    pub verify_refuses: bool,
    /// The files the action writes, when their content is known (a hooked
    /// `Write` or `Edit`, each file of a patch).
    pub writes: &'a [FileWrite],
    /// Why the adapter's trust level does not allow this call at all.
    pub untrusted: Option<&'a str>,
}

/// What the loop decided, its effects applied and its audit row written.
#[must_use]
#[derive(Debug)]
pub enum Decision {
    /// Go ahead; `advice` is what an enforcing loop would have done
    /// (monitoring mode).
    Continue { advice: Option<Would>, details: Details },
    /// Held back, the agent not blocked.
    Refused { refusal: Refusal, details: Details },
    /// A human was asked (request `id`, open until `expires_at`, ms).
    AwaitingHuman { id: String, expires_at: i64, details: Details },
    /// The agent is hard-blocked: by this attempt (`raised`), or before.
    Blocked { block: BlockNotice, raised: bool, details: Details },
}

/// What an enforcing loop would have done with an action monitoring let
/// through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Would {
    Stop,
    Pause,
}

impl Would {
    pub fn name(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Pause => "pause",
        }
    }
}

/// Why an action was held back without blocking its agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The adapter's trust level does not allow the call.
    Untrusted,
    /// A request for a human holds the agent.
    Paused(Pause),
    /// A step without a running execution.
    NoExecution,
    /// The action's analysis failed or came late.
    Unanalysed(&'static str),
    StateUnavailable(StateFailure),
    /// The evaluator could not judge the action.
    FailClosed,
    /// The verify tier wants a code a single call cannot carry.
    NeedsCode,
    /// Nobody could be shown the request for approval (each channel's
    /// failure).
    Unshown(Vec<String>),
}

/// How the state store failed a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFailure {
    /// The decision could not be recorded.
    Unrecorded,
    /// A block or a request for a human could not be made durable.
    NotDurable,
}

/// The block holding an agent, as it is announced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockNotice {
    /// The blocked agent: the one that acted, or the one whose block
    /// tainted its session.
    pub agent: String,
    pub reason: String,
    pub challenge_id: String,
}

impl BlockNotice {
    fn of(block: BlockRow) -> Self {
        Self { agent: block.agent, reason: block.reason, challenge_id: block.challenge_id }
    }
}

/// What every decision carries for the door to tell.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    pub reason: Option<String>,
    pub factors: Vec<String>,
    pub steps_remaining: Option<u32>,
    pub risk: Option<SafetyTier>,
    pub notifications: Vec<Notification>,
    /// Why no channel could show a human the request this decision made
    /// (one entry per channel); empty when it was shown or none was made.
    pub unshown: Vec<String>,
}

impl Decision {
    /// The audit row's decision: the situation's one word, whatever the
    /// door (module docs).
    pub fn recorded(&self, mode: LoopMode) -> AuditDecision {
        match self {
            Self::Continue { advice: Some(Would::Stop), .. } => AuditDecision::WouldStop,
            Self::Continue { advice: Some(Would::Pause), .. } => AuditDecision::WouldPause,
            Self::Continue { advice: None, .. } => match mode {
                LoopMode::Enforcing | LoopMode::Monitoring => AuditDecision::Continue,
                LoopMode::Logging => AuditDecision::Logging,
                LoopMode::Disabled => AuditDecision::Disabled,
            },
            Self::Refused {
                refusal: Refusal::Paused(_) | Refusal::FailClosed | Refusal::NeedsCode,
                ..
            }
            | Self::AwaitingHuman { .. } => AuditDecision::Pause,
            Self::Refused { .. } | Self::Blocked { raised: false, .. } => AuditDecision::Refused,
            Self::Blocked { raised: true, .. } => AuditDecision::Stop,
        }
    }

    pub fn details(&self) -> &Details {
        match self {
            Self::Continue { details, .. }
            | Self::Refused { details, .. }
            | Self::AwaitingHuman { details, .. }
            | Self::Blocked { details, .. } => details,
        }
    }

    fn details_mut(&mut self) -> &mut Details {
        match self {
            Self::Continue { details, .. }
            | Self::Refused { details, .. }
            | Self::AwaitingHuman { details, .. }
            | Self::Blocked { details, .. } => details,
        }
    }

    fn refused(refusal: Refusal) -> Self {
        Self::Refused { refusal, details: Details::default() }
    }
}

/// A decision as its transaction leaves it: what must follow the commit.
struct Committed {
    decision: Decision,
    /// The request for a human to make durable and show.
    ask: Option<Ask>,
    /// The block this decision raised, as `blocked_at`.
    taints_session: Option<i64>,
}

impl Committed {
    fn plain(decision: Decision) -> Self {
        Self { decision, ask: None, taints_session: None }
    }
}

impl LoopCore {
    /// Decides on `attempt`: judged, its effects applied and durable, its
    /// audit row written, and the human asked when one must answer. Store
    /// failures refuse, never let the action through.
    pub async fn decide(&self, attempt: Attempt<'_>) -> Decision {
        let evaluates = matches!(self.mode, LoopMode::Enforcing | LoopMode::Monitoring);
        // Read before the state is locked: another agent's decision need
        // not wait for this text to be understood.
        let analysis = if evaluates {
            let writes = match attempt.door {
                Door::Gate(checks) => checks.writes,
                Door::Step { .. } => &[],
            };
            match analysing::analyse(attempt.action, &attempt.call.working_folder, writes).await {
                Analysed::Ready(analysis) => Some(analysis),
                Analysed::Missing(why) => return self.unanalysed(attempt, why),
            }
        } else {
            None
        };
        let now = now_ms();
        let committed = match self.store.write(|tx| self.decide_in(tx, attempt, analysis, now)) {
            Ok(committed) => committed,
            Err(error) => {
                tracing::error!(%error, "safety state store failed during a decision");
                self.audit_later(entry(attempt, AuditDecision::Refused, Some(AuditStage::State)));
                return Decision::refused(Refusal::StateUnavailable(StateFailure::Unrecorded));
            }
        };
        let Committed { decision, ask, taints_session } = committed;
        if ask.is_some()
            && let Err(error) = self.store.sync_barrier_async().await
        {
            tracing::error!(%error, "could not make a block or a request for a human durable");
            return Decision::refused(Refusal::StateUnavailable(StateFailure::NotDurable));
        }
        if let Some(blocked_at) = taints_session {
            self.sessions.taint(&attempt.call.session_id, attempt.agent, blocked_at);
        }
        let Some(ask) = ask else { return decision };
        let Err(failures) = self.humans.ask(&ask).await else { return decision };
        match (decision, attempt.door) {
            // A gated call's request that nobody saw must not hold the
            // agent: it is withdrawn and the call refused.
            (Decision::AwaitingHuman { id, details, .. }, Door::Gate(_)) => {
                let _ = self
                    .store
                    .write(|tx| records::set_challenge_status(tx, &id, ChallengeStatus::Cancelled));
                Decision::Refused { refusal: Refusal::Unshown(failures), details }
            }
            // A block, or a step's pause, stands whether or not it was
            // shown; the door says nobody saw it.
            (mut standing, _) => {
                standing.details_mut().unshown = failures;
                standing
            }
        }
    }

    /// An attempt whose action could not be analysed: refused, audited.
    fn unanalysed(&self, attempt: Attempt<'_>, why: &'static str) -> Decision {
        tracing::error!(agent = %attempt.agent, why, "an action is refused without a verdict");
        self.audit_now_or_later(entry(attempt, AuditDecision::Refused, Some(AuditStage::Analysis)));
        Decision::refused(Refusal::Unanalysed(why))
    }

    /// The decision in its transaction. `analysis` is the action's (made
    /// before the transaction; `None` in the modes that do not evaluate),
    /// `Some(None)` when it is too long to analyse.
    fn decide_in(
        &self,
        tx: &Tx<'_>,
        attempt: Attempt<'_>,
        analysis: Option<Option<Analysis>>,
        now: i64,
    ) -> Result<Committed, StoreError> {
        let Attempt { call, agent, action, door } = attempt;
        let session = call.session_id.as_str();
        let enforcing = self.enforcing();
        let checks = match door {
            Door::Gate(checks) => Some(checks),
            Door::Step { .. } => None,
        };

        if let Some(why) = checks.and_then(|checks| checks.untrusted) {
            let word = if enforcing { AuditDecision::Refused } else { AuditDecision::WouldRefuse };
            self.audit(tx, entry(attempt, word, Some(AuditStage::Trust)))?;
            if enforcing {
                permission_pending(tx, agent, action, why, None, now)?;
                let details = Details { reason: Some(why.to_owned()), ..Details::default() };
                let refused = Decision::Refused { refusal: Refusal::Untrusted, details };
                return Ok(Committed::plain(refused));
            }
        }

        if let Some(mut block) = self.block_for(tx, session, agent)? {
            let ask = self.reissue_if_expired(tx, session, &mut block, now)?;
            let announced = notification(
                NotificationKind::DangerZone,
                &block.reason,
                [("verificationId", block.challenge_id.as_str()), ("agent", block.agent.as_str())],
                now,
            );
            let decision = Decision::Blocked {
                block: BlockNotice::of(block),
                raised: false,
                details: Details { notifications: vec![announced], ..Details::default() },
            };
            self.audit(tx, entry(attempt, decision.recorded(self.mode), Some(AuditStage::Block)))?;
            return Ok(Committed { ask, ..Committed::plain(decision) });
        }

        let mut execution = self.running_execution(tx, agent, now)?;
        let mut notifications = Vec::new();
        match (door, &mut execution) {
            (Door::Step { .. }, None) => {
                self.audit(
                    tx,
                    entry(attempt, AuditDecision::Refused, Some(AuditStage::Lifecycle)),
                )?;
                return Ok(Committed::plain(Decision::refused(Refusal::NoExecution)));
            }
            (Door::Step { .. }, Some(running)) => {
                notifications = self.deliver_events(tx, running, agent, now)?;
            }
            (Door::Gate(_), _) => {}
        }
        let execution_id = execution.as_ref().map(|running| running.row().id.clone());
        let row = |decision, stage| AuditEntry {
            execution_id: execution_id.as_deref(),
            ..entry(attempt, decision, stage)
        };
        let policy = self.deciding_policy(tx)?;

        if enforcing && let Some(pause) = self.pause_of(tx, agent, now)? {
            save(tx, execution.as_ref())?;
            notifications.push(self.pause_notification(&pause, now));
            let limit = self.step_limit(&policy, agent, execution.as_ref());
            let details = Details {
                steps_remaining: Some(self.steps_remaining(tx, agent, limit)?),
                notifications,
                ..Details::default()
            };
            let decision = Decision::Refused { refusal: Refusal::Paused(pause), details };
            self.audit(tx, row(decision.recorded(self.mode), Some(AuditStage::Pending)))?;
            return Ok(Committed::plain(decision));
        }

        let Spent { step, max_steps } = self.spend_step(tx, &policy, agent, execution.as_mut())?;

        if !matches!(self.mode, LoopMode::Enforcing | LoopMode::Monitoring) {
            save(tx, execution.as_ref())?;
            let factor = match self.mode {
                LoopMode::Logging => "logging mode: action recorded, not evaluated",
                _ => "safety loop disabled: action not evaluated",
            };
            let details =
                Details { factors: vec![factor.into()], notifications, ..Details::default() };
            let decision = Decision::Continue { advice: None, details };
            self.audit(tx, row(decision.recorded(self.mode), None))?;
            return Ok(Committed::plain(decision));
        }

        let files = OnDisk::in_folder(&call.working_folder);
        let (outcome, agent_risk) = match door {
            Door::Step { outcome, agent_risk } => (outcome, agent_risk),
            Door::Gate(checks) => (None, checks.risk_floor),
        };
        let facts = StepFacts {
            agent,
            hint: action,
            outcome,
            step,
            max_steps,
            agent_risk,
            folder: &call.working_folder,
            writes: checks.map_or(&[], |checks| checks.writes),
            files: &files,
        };
        let evaluation = evaluate_analysed(&policy, &facts, analysis.flatten());
        let rule = evaluation.rule.map(|i| policy.rule(i).describe());
        let mut stage = AuditStage::from(evaluation.stage);
        let mut verdict = evaluation.verdict;
        let mut details = Details {
            reason: evaluation.reason.clone(),
            factors: evaluation.factors.clone(),
            steps_remaining: Some(max_steps.saturating_sub(step)),
            risk: Some(evaluation.tier),
            notifications,
            unshown: Vec::new(),
        };
        if let Some(why) = checks.and_then(|checks| checks.must_ask) {
            match verdict {
                Verdict::Continue => {
                    verdict = Verdict::Pause(PauseKind::Approval);
                    details.reason = Some(why.to_owned());
                    stage = AuditStage::Operation;
                    details.factors.push(format!("operation: {why}"));
                }
                Verdict::Pause(PauseKind::Approval | PauseKind::Verification) => {
                    let reason = details.reason.take().unwrap_or_default();
                    details.reason = Some(format!("{reason}; {why}"));
                    details.factors.push(format!("operation: {why}"));
                }
                Verdict::Pause(_) | Verdict::Stop => {}
            }
        }
        let raised = Raised { session_id: session, agent, action };

        let (mut ask, mut taints_session) = (None, None);
        let decision = match (verdict, enforcing) {
            (Verdict::Continue, _) => Decision::Continue { advice: None, details },
            (Verdict::Stop, false) => Decision::Continue { advice: Some(Would::Stop), details },
            (Verdict::Pause(_), false) => {
                Decision::Continue { advice: Some(Would::Pause), details }
            }
            (Verdict::Stop, true) => {
                let block = self.hard_block(tx, raised, &evaluation, rule.as_deref(), now)?;
                if let (Door::Step { .. }, Some(running)) = (door, &mut execution) {
                    // The agent is told of its own block in this answer.
                    running.advance_cursor(records::last_event_id(tx)?);
                }
                details.notifications.push(notification(
                    NotificationKind::DangerZone,
                    &block.reason,
                    [("verificationId", block.id.as_str()), ("agent", agent)],
                    now,
                ));
                let notice = BlockNotice {
                    agent: agent.to_owned(),
                    reason: block.reason.clone(),
                    challenge_id: block.id.clone(),
                };
                taints_session = Some(now);
                ask = Some(block);
                Decision::Blocked { block: notice, raised: true, details }
            }
            (Verdict::Pause(kind), true) => {
                let refusal = match (kind, checks) {
                    (PauseKind::FailClosed, _) => Some(Refusal::FailClosed),
                    (PauseKind::Verification, Some(checks)) if checks.verify_refuses => {
                        let reason = details.reason.take().unwrap_or_default();
                        details.reason = Some(format!(
                            "{reason}; the verify tier needs a human's out-of-band code, so this call is refused (a policy autoApprove rule or the operation's declared danger level can allow it)"
                        ));
                        Some(Refusal::NeedsCode)
                    }
                    _ => None,
                };
                let reason = details.reason.clone().unwrap_or_default();
                match (refusal, door) {
                    (Some(refusal), Door::Step { .. }) => Decision::Refused { refusal, details },
                    (Some(refusal), Door::Gate(_)) => {
                        permission_pending(tx, agent, action, &reason, None, now)?;
                        Decision::Refused { refusal, details }
                    }
                    (None, Door::Step { .. }) => {
                        let (pause, pause_ask) = self.open_pause(tx, raised, kind, reason, now)?;
                        details.notifications.push(self.pause_notification(&pause, now));
                        let (id, expires_at) = (pause_ask.id.clone(), pause_ask.expires_at);
                        ask = Some(pause_ask);
                        Decision::AwaitingHuman { id, expires_at, details }
                    }
                    (None, Door::Gate(_)) => {
                        // The person sees every rule that asked and what
                        // the action will run, not only its name.
                        let view = approval_view(
                            action,
                            &reason,
                            &details.factors,
                            evaluation.analysis.as_ref(),
                        );
                        let approval = self.humans.new_ask(
                            ChallengeKind::Approval,
                            Raised { action: &view.action, ..raised },
                            view.reason,
                            now,
                        );
                        // An exhausted step budget holds the agent until a
                        // human grants a new one; any other approval holds
                        // only this call.
                        let pause = (kind == PauseKind::StepLimit).then_some(kind);
                        self.humans.record_gate_approval(tx, &approval, pause, now)?;
                        permission_pending(tx, agent, action, &reason, Some(&approval.id), now)?;
                        let (id, expires_at) = (approval.id.clone(), approval.expires_at);
                        ask = Some(approval);
                        Decision::AwaitingHuman { id, expires_at, details }
                    }
                }
            }
        };
        save(tx, execution.as_ref())?;
        self.audit(
            tx,
            AuditEntry {
                stage: Some(stage),
                rule: rule.as_deref(),
                policy_hash: policy.hash(),
                ..row(decision.recorded(self.mode), None)
            },
        )?;
        Ok(Committed { decision, ask, taints_session })
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
}

/// The attempt's audit row, deciding as `decision` at `stage`.
fn entry<'a>(
    attempt: Attempt<'a>,
    decision: AuditDecision,
    stage: Option<AuditStage>,
) -> AuditEntry<'a> {
    AuditEntry {
        session_id: Some(&attempt.call.session_id),
        hint: Some(attempt.action),
        stage,
        ..AuditEntry::of(attempt.agent, attempt.door.event(), decision)
    }
}

/// Writes back the execution a decision counted a step or moved the
/// event cursor on.
fn save(tx: &Tx<'_>, execution: Option<&Execution<Running>>) -> Result<(), StoreError> {
    match execution {
        Some(execution) => records::update_execution(tx, execution.row()),
        None => Ok(()),
    }
}

/// Tells the agent, in its next directive, that the gate held back one of
/// its calls (gatekeeper 7.1, spec 8.7.3 `permission_pending`): what, why,
/// and the approval request a human was shown, if one was. A hard block
/// is told by its danger-zone broadcast instead.
fn permission_pending(
    tx: &Tx<'_>,
    agent: &str,
    action: &str,
    reason: &str,
    approval_id: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    let waiting =
        if approval_id.is_some() { "waits for a human's approval" } else { "was refused" };
    let mut metadata = serde_json::Map::new();
    metadata.insert("operation".into(), action.into());
    metadata.insert("reason".into(), reason.into());
    metadata.insert("agent".into(), agent.into());
    if let Some(id) = approval_id {
        metadata.insert("approvalId".into(), id.into());
    }
    records::insert_event(
        tx,
        &EventRow {
            id: 0,
            agent: Some(agent.to_owned()),
            kind: NotificationKind::PermissionPending,
            message: format!("The gate held back '{action}': it {waiting} ({reason})"),
            metadata: serde_json::Value::Object(metadata).to_string(),
            created_at: now,
        },
    )?;
    Ok(())
}
