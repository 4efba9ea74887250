//! What every path that acts shares, and the agent's standing in it: the
//! state store, the compiled policy, the loop's mode, this process's
//! sessions and the humans. Steps, hooked calls and proxied calls all read
//! an agent's block, pause and step budget here, from the shared state,
//! so the hook (one process per tool call) and several dongles sharing
//! one data folder see the same loop.
//!
//! Hard blocks are per agent and durable, and taint the session that
//! raised them. Pauses are per agent too: a challenge that holds one names
//! its kind, and the pause lasts while the challenge waits for a human (or
//! waits to be collected after an Approve), until it expires (approval
//! and verification), or until the process that asked is gone (nobody is
//! left to hear the answer). Every action spends one step of the agent's
//! budget, counted per agent across its executions (a new execution does
//! not refill it), limited by its running execution's `max_steps` or the
//! policy's; only a human's Approve on a step-limit pause grants a new
//! one.
//!
//! Each decision takes its policy in its own transaction
//! ([`LoopCore::deciding_policy`]): the policy in force, after taking up
//! a newer central policy version from the shared state if one was
//! pushed.

use std::sync::{Arc, Mutex};

use crate::store::{Tx, central, owner::Owner};
use serde_json::{Value, json};

use crate::{
    config::LoopMode,
    diagnostics::Diagnostic,
    policy::{CompiledPolicy, central::Central, live::LivePolicy},
    protocol::registry::CallContext,
    store::{
        Store, StoreError,
        audit::{self, AuditDecision, AuditEntry, AuditEvent, AuditStage},
        records::{self, BlockRow, ChallengeKind, ChallengeStatus, EventRow, ExecutionRow},
        rfc3339,
    },
    verify::{
        humans::{Ask, Humans, Raised},
        link::Approved,
    },
};

use super::{
    directive::{Notification, NotificationKind},
    evaluator::{Evaluation, PauseKind},
    lifecycle::{AnyExecution, Execution, state::Running},
    sessions::Sessions,
};

/// At most this many fresh codes for one blocked agent per window.
const REISSUES_PER_WINDOW: u32 = 3;
const REISSUE_WINDOW_MS: i64 = 5 * 60 * 1000;

pub struct LoopCore {
    pub store: Arc<Store>,
    /// Read with [`LoopCore::policy`]: one snapshot per decision.
    policy: LivePolicy,
    pub mode: LoopMode,
    pub humans: Humans,
    pub sessions: Sessions,
    owner: Owner,
    /// The central version this process could not use, and why: asked
    /// again only once a newer one is pushed.
    refused_central: Mutex<Option<(i64, String)>>,
}

/// A pause holding an agent: its challenge waits for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    pub kind: PauseKind,
    pub challenge_id: String,
    pub challenge_kind: ChallengeKind,
    pub reason: String,
}

impl Pause {
    /// The key a client finds this pause's challenge id under.
    pub fn id_key(&self) -> &'static str {
        if self.challenge_kind == ChallengeKind::Verify { "verificationId" } else { "approvalId" }
    }

    /// What an agent is told while it waits.
    pub fn describe(&self) -> String {
        format!(
            "Waiting for a human: {} {} ({})",
            self.challenge_kind.name(),
            self.challenge_id,
            self.reason
        )
    }
}

/// The step an action spends: the agent's count since a human last
/// granted a budget, and its limit.
#[derive(Debug, Clone, Copy)]
pub struct Spent {
    pub step: u32,
    pub max_steps: u32,
}

impl LoopCore {
    pub fn new(
        store: Arc<Store>,
        policy: Arc<CompiledPolicy>,
        mode: LoopMode,
        humans: Humans,
    ) -> Self {
        Self::with_policy(store, LivePolicy::new(policy), mode, humans)
    }

    /// A core whose policy is still being compiled: decisions wait for it
    /// (it is put in force with [`LoopCore::replace_policy`]).
    pub fn compiling(store: Arc<Store>, mode: LoopMode, humans: Humans) -> Self {
        Self::with_policy(store, LivePolicy::compiling(), mode, humans)
    }

    fn with_policy(store: Arc<Store>, policy: LivePolicy, mode: LoopMode, humans: Humans) -> Self {
        Self {
            store,
            policy,
            mode,
            humans,
            sessions: Sessions::default(),
            owner: Owner::current(),
            refused_central: Mutex::default(),
        }
    }

    /// This process, as the rows it writes name it.
    pub fn owner(&self) -> &Owner {
        &self.owner
    }

    pub fn enforcing(&self) -> bool {
        self.mode == LoopMode::Enforcing
    }

    /// The policy in force now; a decision takes it once and judges, and
    /// names itself in its audit row, with that one version.
    pub fn policy(&self) -> Arc<CompiledPolicy> {
        self.policy.current()
    }

    /// The policy a decision judges by, in the decision's transaction: the
    /// one in force, once it is layered on the newest central version the
    /// state holds (`safety-dongle policy push`). A newer version is taken
    /// up here, so no decision is judged by a version older than the
    /// newest pushed before it began. One that cannot be used here
    /// refuses the decision (fail closed) rather than let the older
    /// version decide.
    pub fn deciding_policy(&self, tx: &Tx<'_>) -> Result<Arc<CompiledPolicy>, StoreError> {
        let policy = self.policy();
        let latest = central::latest_version(tx)?;
        if latest == policy.central_version() {
            return Ok(policy);
        }
        let mut refused =
            self.refused_central.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let (Some(version), Some((refused_version, why))) = (latest, refused.as_ref())
            && version == *refused_version
        {
            return Err(StoreError::CentralPolicy { version, why: why.clone() });
        }
        match self.take_up_central(tx, &policy) {
            Err(StoreError::CentralPolicy { version, why }) => {
                *refused = Some((version, why.clone()));
                Err(StoreError::CentralPolicy { version, why })
            }
            taken => taken,
        }
    }

    /// Puts this process's local policy files, layered on the newest
    /// central version, in force, and audits the change.
    fn take_up_central(
        &self,
        tx: &Tx<'_>,
        policy: &CompiledPolicy,
    ) -> Result<Arc<CompiledPolicy>, StoreError> {
        let central = Central::latest(tx)?;
        let version = central.as_ref().map_or(0, |central| central.version);
        let taken = policy.with_central(central.as_ref()).map_err(|diagnostics| {
            StoreError::CentralPolicy { version, why: Diagnostic::one_line(&diagnostics) }
        })?;
        let taken = Arc::new(taken);
        audit::remember_policy(tx, taken.hash(), &taken.stored_sources())?;
        let message = match &central {
            Some(central) => format!(
                "central policy version {} (sha256 {}) taken up: deciding by {}",
                central.version,
                central.hash.get(..16).unwrap_or_default(),
                taken.hash().get(..16).unwrap_or_default()
            ),
            None => {
                format!(
                    "no central policy: deciding by the local policy {}",
                    taken.hash().get(..16).unwrap_or_default()
                )
            }
        };
        tracing::info!("{message}");
        self.audit(
            tx,
            AuditEntry {
                hint: Some(&message),
                stage: Some(AuditStage::Central),
                policy_hash: taken.hash(),
                ..AuditEntry::of("", AuditEvent::Policy, AuditDecision::Loaded)
            },
        )?;
        self.replace_policy(taken.clone());
        Ok(taken)
    }

    /// For the compiler of the first policy: returns once a decision
    /// waits for it, or after `grace`.
    pub fn wait_until_policy_wanted(&self, grace: std::time::Duration) {
        self.policy.wait_until_wanted(grace);
    }

    /// Puts a compiled or reloaded policy in force; returns the one it
    /// replaces, if any.
    pub fn replace_policy(&self, policy: Arc<CompiledPolicy>) -> Option<Arc<CompiledPolicy>> {
        self.policy.replace(policy)
    }

    /// Appends an audit row naming the policy that decided: the entry's
    /// own when it names one (the snapshot its decision was judged by),
    /// else the policy in force.
    pub fn audit(&self, tx: &Tx<'_>, entry: AuditEntry<'_>) -> Result<i64, StoreError> {
        self.naming_the_policy(entry, |entry| audit::append(tx, entry))
    }

    /// Appends `entry` in a transaction of its own, or keeps it for later
    /// when the state store does not answer: the row of a decision refused
    /// before it could take the state's lock.
    pub fn audit_now_or_later(&self, entry: AuditEntry<'_>) {
        if self.store.write(|tx| self.audit(tx, entry)).is_err() {
            self.audit_later(entry);
        }
    }

    /// Audits a refusal the dongle made because its own code failed while
    /// deciding (a panic caught at the hook's or the server's boundary):
    /// the action did not run, and the log says why.
    pub fn audit_own_failure(
        &self,
        agent: &str,
        session: Option<&str>,
        event: AuditEvent,
        hint: &str,
    ) {
        self.audit_now_or_later(AuditEntry {
            session_id: session,
            hint: Some(hint),
            stage: Some(AuditStage::Panic),
            ..AuditEntry::of(agent, event, AuditDecision::Refused)
        });
    }

    /// Keeps the audit row of a decision refused because the state store
    /// failed, to be appended when it answers again (see `store::spool`).
    pub fn audit_later(&self, entry: AuditEntry<'_>) {
        if let Err(error) = self.naming_the_policy(entry, |entry| self.store.keep_for_later(entry))
        {
            tracing::error!(%error, "the audit row of a refused decision could not be kept");
        }
    }

    /// `record`s `entry` with the policy that decided: its own when it
    /// names one, else the policy in force.
    fn naming_the_policy<R>(
        &self,
        entry: AuditEntry<'_>,
        record: impl FnOnce(&AuditEntry<'_>) -> R,
    ) -> R {
        if !entry.policy_hash.is_empty() {
            return record(&entry);
        }
        let policy = self.policy();
        record(&AuditEntry { policy_hash: policy.hash(), ..entry })
    }

    /// Who a call outside `record_execution_step` acts for: the agent
    /// running an execution in this session, else the client by the name
    /// it gave at `initialize`. Blocks and audit rows use this name.
    pub fn acting_agent(&self, call: &CallContext) -> String {
        self.sessions
            .agent_of(&call.session_id)
            .or_else(|| call.client.clone())
            .unwrap_or_else(|| "mcp-client".to_owned())
    }

    /// The block that applies to `agent` in this session: its own, or that
    /// of the agent whose block tainted the session.
    pub fn block_for(
        &self,
        tx: &Tx<'_>,
        session: &str,
        agent: &str,
    ) -> Result<Option<BlockRow>, StoreError> {
        if let Some(block) = records::block_of(tx, agent)? {
            return Ok(Some(block));
        }
        if let Some((other, blocked_at)) = self.sessions.taint_of(session) {
            match records::block_of(tx, &other)? {
                Some(block) if block.blocked_at == blocked_at => return Ok(Some(block)),
                _ => self.sessions.clear_taint(session),
            }
        }
        Ok(None)
    }

    /// The agent's non-terminal execution; one left by a process that died
    /// (or by a dongle on another machine silent for a minute,
    /// `records::may_be_serving`) is failed on the way, as its session is
    /// over (spec 2.3.3).
    pub fn active_execution(
        &self,
        tx: &Tx<'_>,
        agent: &str,
        now: i64,
    ) -> Result<Option<ExecutionRow>, StoreError> {
        let Some(row) = records::active_execution(tx, agent)? else { return Ok(None) };
        if records::may_be_serving(tx, &row.owner)? {
            return Ok(Some(row));
        }
        if let Ok(running) = AnyExecution::from_row(row.clone())?.running("failed") {
            let failed = running.fail(now, Some("the safety-dongle process serving it exited, or fell silent on another machine".into()));
            records::update_execution(tx, failed.row())?;
            self.audit(
                tx,
                AuditEntry {
                    execution_id: Some(&row.id),
                    ..AuditEntry::of(agent, AuditEvent::Abandon, AuditDecision::Failed)
                },
            )?;
        }
        Ok(None)
    }

    /// The pause holding `agent`, if one does. A pause whose challenge
    /// expired, or whose asking process is gone, ends here (recorded).
    pub fn pause_of(
        &self,
        tx: &Tx<'_>,
        agent: &str,
        now: i64,
    ) -> Result<Option<Pause>, StoreError> {
        let Some(challenge) = records::pausing_challenge(tx, agent)? else { return Ok(None) };
        let Some(kind) = challenge.pause else { return Ok(None) };
        let ended = if challenge.expires_at <= now {
            Some(ChallengeStatus::Expired)
        } else if !challenge.owner.may_be_running() {
            Some(ChallengeStatus::Cancelled)
        } else {
            None
        };
        if let Some(status) = ended {
            records::set_challenge_status(tx, &challenge.id, status)?;
            self.audit(
                tx,
                AuditEntry {
                    hint: Some(&challenge.id),
                    stage: Some(kind.into()),
                    ..AuditEntry::of(agent, AuditEvent::Pause, status.into())
                },
            )?;
            return Ok(None);
        }
        Ok(Some(Pause {
            kind,
            challenge_id: challenge.id,
            challenge_kind: challenge.kind,
            reason: challenge.reason,
        }))
    }

    /// Spends one step of the agent's budget, counting it on its running
    /// execution too (the caller writes the execution back), under
    /// [`LoopCore::step_limit`].
    pub fn spend_step(
        &self,
        tx: &Tx<'_>,
        policy: &CompiledPolicy,
        agent: &str,
        mut execution: Option<&mut Execution<Running>>,
    ) -> Result<Spent, StoreError> {
        let step = records::agent_steps(tx, agent)?.saturating_add(1);
        records::set_agent_steps(tx, agent, step)?;
        if let Some(execution) = &mut execution {
            execution.record_step();
        }
        Ok(Spent { step, max_steps: self.step_limit(policy, agent, execution.as_deref()) })
    }

    /// The agent's step limit: `policy`'s for it, or its running
    /// execution's `max_steps` when that is lower (a policy that lowers it
    /// applies to running executions).
    pub fn step_limit(
        &self,
        policy: &CompiledPolicy,
        agent: &str,
        execution: Option<&Execution<Running>>,
    ) -> u32 {
        let limit = policy.settings_for(agent).max_steps;
        execution.map_or(limit, |execution| limit.min(execution.row().max_steps))
    }

    /// The agent's running execution, ready to count a step on.
    pub fn running_execution(
        &self,
        tx: &Tx<'_>,
        agent: &str,
        now: i64,
    ) -> Result<Option<Execution<Running>>, StoreError> {
        let Some(row) = self.active_execution(tx, agent, now)? else { return Ok(None) };
        AnyExecution::from_row(row)?
            .running("stepped")
            .map(Some)
            .map_err(|_| StoreError::Inconsistent("an active execution is not running"))
    }

    /// Steps the agent has left of its budget under `max_steps`.
    pub fn steps_remaining(
        &self,
        tx: &Tx<'_>,
        agent: &str,
        max_steps: u32,
    ) -> Result<u32, StoreError> {
        Ok(max_steps.saturating_sub(records::agent_steps(tx, agent)?))
    }

    /// A human's Approve on a step-limit pause: a fresh budget, for the
    /// running execution and for actions outside executions.
    fn grant_budget(&self, tx: &Tx<'_>, agent: &str) -> Result<(), StoreError> {
        if let Some(row) = records::active_execution(tx, agent)? {
            records::update_execution(tx, &ExecutionRow { steps: 0, ..row })?;
        }
        records::set_agent_steps(tx, agent, 0)
    }

    /// Spends a human's Approve: its request is used, and a step-limit
    /// pause's grants a fresh step budget; audited as `event` (the
    /// Approve itself has its own row, written when it came).
    pub fn spend_approval(
        &self,
        tx: &Tx<'_>,
        approved: &Approved,
        agent: &str,
        session: &str,
        event: AuditEvent,
        hint: Option<&str>,
    ) -> Result<(), StoreError> {
        let id = approved.approval_id();
        let step_limit = records::challenge(tx, id)?
            .is_some_and(|(challenge, _)| challenge.pause == Some(PauseKind::StepLimit));
        records::set_challenge_status(tx, id, ChallengeStatus::Used)?;
        if step_limit {
            self.grant_budget(tx, agent)?;
        }
        self.audit(
            tx,
            AuditEntry {
                session_id: Some(session),
                hint,
                stage: Some(AuditStage::Human),
                ..AuditEntry::of(agent, event, AuditDecision::Used)
            },
        )?;
        Ok(())
    }

    /// Records a hard block: a durable challenge, the block itself, and the
    /// danger-zone broadcast. Returns the request for the human.
    pub fn hard_block(
        &self,
        tx: &Tx<'_>,
        raised: Raised<'_>,
        evaluation: &Evaluation,
        rule: Option<&str>,
        now: i64,
    ) -> Result<Ask, StoreError> {
        let agent = raised.agent;
        let reason = evaluation.reason.clone().unwrap_or_else(|| "hard block".into());
        let ask = self.humans.new_ask(ChallengeKind::DangerZone, raised, reason, now);
        self.humans.record(tx, &ask, ask.expires_at, None, now)?;
        records::insert_block(
            tx,
            &BlockRow {
                agent: agent.to_owned(),
                challenge_id: ask.id.clone(),
                reason: ask.reason.clone(),
                rule: rule.map(str::to_owned),
                blocked_at: now,
            },
        )?;
        records::insert_event(
            tx,
            &EventRow {
                id: 0,
                agent: None,
                kind: NotificationKind::DangerZone,
                message: format!("Agent '{agent}' was hard-blocked: {}", ask.reason),
                metadata: json!({ "verificationId": ask.id, "agent": agent, "reason": ask.reason })
                    .to_string(),
                created_at: now,
            },
        )?;
        Ok(ask)
    }

    /// A blocked agent whose challenge expired gets a fresh one, at most
    /// [`REISSUES_PER_WINDOW`] per [`REISSUE_WINDOW_MS`]; only an
    /// enforcing loop asks.
    pub fn reissue_if_expired(
        &self,
        tx: &Tx<'_>,
        session: &str,
        block: &mut BlockRow,
        now: i64,
    ) -> Result<Option<Ask>, StoreError> {
        if block.agent.is_empty() || !self.enforcing() {
            return Ok(None);
        }
        let expired = match records::challenge(tx, &block.challenge_id)? {
            Some((challenge, _)) => {
                challenge.expires_at <= now || challenge.status != ChallengeStatus::Pending
            }
            None => true,
        };
        if !expired
            || records::challenges_since(
                tx,
                &block.agent,
                ChallengeKind::DangerZone,
                now - REISSUE_WINDOW_MS,
            )? >= REISSUES_PER_WINDOW
        {
            return Ok(None);
        }
        records::set_challenge_status(tx, &block.challenge_id, ChallengeStatus::Expired)?;
        let raised = Raised {
            session_id: session,
            agent: &block.agent,
            action: "re-issued for an expired challenge",
        };
        let ask = self.humans.new_ask(ChallengeKind::DangerZone, raised, block.reason.clone(), now);
        self.humans.record(tx, &ask, ask.expires_at, None, now)?;
        records::set_block_challenge(tx, &block.agent, &ask.id)?;
        self.audit(
            tx,
            AuditEntry {
                stage: Some(AuditStage::Block),
                ..AuditEntry::of(&block.agent, AuditEvent::Reissue, AuditDecision::NewChallenge)
            },
        )?;
        block.challenge_id = ask.id.clone();
        Ok(Some(ask))
    }

    /// Records the challenge behind a pause a step opened; returns the
    /// pause and the request for the human. A step-limit pause ends only
    /// when a human answers.
    pub fn open_pause(
        &self,
        tx: &Tx<'_>,
        raised: Raised<'_>,
        kind: PauseKind,
        reason: String,
        now: i64,
    ) -> Result<(Pause, Ask), StoreError> {
        let challenge_kind = if kind == PauseKind::Verification {
            ChallengeKind::Verify
        } else {
            ChallengeKind::Approval
        };
        let ask = self.humans.new_ask(challenge_kind, raised, reason, now);
        let expiry = if kind == PauseKind::StepLimit { i64::MAX } else { ask.expires_at };
        self.humans.record(tx, &ask, expiry, Some(kind), now)?;
        let pause = Pause {
            kind,
            challenge_id: ask.id.clone(),
            challenge_kind,
            reason: ask.reason.clone(),
        };
        Ok((pause, ask))
    }

    pub fn pause_notification(&self, pause: &Pause, now: i64) -> Notification {
        let level = match pause.kind {
            PauseKind::StepLimit => "step_limit",
            PauseKind::PreviousFailure => "previous_failure",
            PauseKind::Verification => "verify",
            PauseKind::Approval | PauseKind::FailClosed => "confirm",
        };
        notification(
            NotificationKind::AutonomyPause,
            &pause.reason,
            [(pause.id_key(), pause.challenge_id.as_str()), ("level", level)],
            now,
        )
    }

    /// The session ended (spec 2.3.3): its executions are cancelled and
    /// its requests for a human withdrawn, audited; `None` ends every
    /// session of this process (it is exiting). Blocks stay: they belong
    /// to the agent.
    pub fn end_session(&self, session: Option<&str>, now: i64) -> Result<(), StoreError> {
        if let Some(session) = session {
            self.sessions.end(session);
        }
        let ended = self.store.write_durable(|tx| {
            for row in records::active_executions_of(tx, &self.owner, session)? {
                let cancelled = AnyExecution::from_row(row.clone())?
                    .cancel(now, Some("its MCP session ended".into()));
                if let Ok(cancelled) = cancelled {
                    records::update_execution(tx, cancelled.row())?;
                    self.audit(
                        tx,
                        AuditEntry {
                            execution_id: Some(&row.id),
                            session_id: Some(&row.session_id),
                            ..AuditEntry::of(
                                &row.agent,
                                AuditEvent::SessionEnd,
                                AuditDecision::Cancelled,
                            )
                        },
                    )?;
                }
            }
            records::cancel_challenges_of(tx, &self.owner, session)?;
            Ok(())
        });
        // After the store says so: whoever waits for such a request finds
        // it cancelled.
        self.humans.session_ended(session);
        ended
    }
}

/// A notification stamped `now`.
pub fn notification<const N: usize>(
    kind: NotificationKind,
    message: &str,
    metadata: [(&str, &str); N],
    now: i64,
) -> Notification {
    Notification {
        kind,
        message: message.to_owned(),
        metadata: metadata.into_iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect(),
        timestamp: rfc3339(now),
    }
}
