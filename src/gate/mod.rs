//! The one gate every action outside `record_execution_step` passes: a
//! hooked tool call (`decide`), and every call to an outside source, an
//! HTTP adapter's or a downstream MCP server's (`admit`), with the same
//! policy, blocks, pauses, step budget, humans and audit as a step.
//!
//! An action is refused while its agent is blocked or paused, spends one
//! step of the agent's budget (so `maxAutonomousSteps` holds across steps,
//! hooked and proxied calls), and is then evaluated like a step. A deny or
//! danger-zone verdict hard-blocks the agent, durably, before the refusal
//! is told. A verdict that wants a human opens an approval request for the
//! call (an exhausted step budget also holds the agent paused while it
//! waits): the hook waits (bounded) for the answer; a proxied call gets
//! `CONFIRMATION_REQUIRED` with a token bound to the call, its session and
//! its agent, and repeating the call with the token collects the answer.
//! A verify-tier verdict on a proxied call is refused, audited, without
//! blocking: that tier wants an out-of-band code one call cannot carry.
//! An adapter that declares a trust level is held to the danger x trust
//! matrix first.
//!
//! What passes is an [`Admission`]: private fields, made only here, and
//! required by every upstream's send, so a call that did not pass the gate
//! cannot leave. [`operation::GatedOperation`] is the one sequence (take the
//! token, admit, send, record the outcome) every upstream kind runs.

pub mod approval_view;
pub mod danger;
pub mod operation;
pub mod tokens;
pub mod trust;

use std::{borrow::Cow, sync::Arc};

use serde_json::{Map, Value};

use crate::{
    analysis::{FileWrite, OnDisk},
    protocol::{
        canonical::canonical,
        error::{AqlError, ErrorCode},
        params::{ParamSpec, ParamType},
        registry::{CallContext, SessionEnds},
    },
    safety::{
        analysing::{self, Analysed},
        core::LoopCore,
        directive::NotificationKind,
        evaluator::{PauseKind, StepFacts, Verdict, evaluate_analysed},
    },
    store::{
        StoreError,
        audit::AuditEntry,
        now_ms,
        records::{self, ChallengeKind, ChallengeStatus},
        rfc3339,
    },
    verify::{
        approvals::Collector,
        humans::{Raised, approved},
    },
};

use crate::redact::{redact_arguments, redact_text};
use approval_view::approval_view;
use danger::DangerLevel;
use tokens::{ConfirmationTokens, Scope};
use trust::{TrustGate, TrustLevel};

/// Where a confirmation token comes back (`params._confirmation` is
/// accepted too, as DESIGN.md 3 says).
const TOKEN_PARAM: &str = "confirmation_token";
const TOKEN_ALIAS: &str = "_confirmation";

/// Adds the confirmation-token parameter to an operation's parameters and
/// returns the name it goes by: `confirmation_token` (also accepted as
/// `_confirmation`), or `_confirmation` alone when the operation has a
/// `confirmation_token` of its own.
pub fn add_token_param(params: &mut Vec<ParamSpec>) -> &'static str {
    let name = if params.iter().any(|p| p.name == TOKEN_PARAM) { TOKEN_ALIAS } else { TOKEN_PARAM };
    let mut token = ParamSpec::optional(
        name,
        ParamType::String,
        "Confirmation token from a CONFIRMATION_REQUIRED answer, once a human approved the call",
    );
    if name == TOKEN_PARAM {
        token = token.alias(TOKEN_ALIAS);
    }
    params.push(token);
    name
}

/// Takes the token out of resolved arguments, so it never reaches the
/// source.
fn take_token(arguments: &mut Map<String, Value>, name: &str) -> Option<String> {
    match arguments.remove(name) {
        Some(Value::String(token)) => Some(token),
        _ => None,
    }
}

/// The gate's answer on a hooked action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GateDecision {
    /// The policy lets it through.
    Continue { factors: Vec<String> },
    /// A human approved it through the verifier.
    HumanApproved(HumanApproval),
    /// Refused (a deny, a block, a pause, a human's no, or fail-closed).
    Deny { reason: String, factors: Vec<String> },
}

/// Proof that a human approved one action: made only by the gate, from the
/// verifier's Approve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HumanApproval {
    approval_id: String,
}

impl HumanApproval {
    pub fn approval_id(&self) -> &str {
        &self.approval_id
    }

    #[cfg(test)]
    pub(crate) fn for_tests() -> Self {
        Self { approval_id: "test".into() }
    }
}

/// Permission for one call to an outside source: made only by
/// [`Gate::admit`], required by every upstream's send, and spent by
/// recording what became of the call.
#[derive(Debug)]
pub struct Admission {
    agent: String,
    action: String,
    session_id: String,
}

/// One call to judge.
pub struct GatedCall<'a> {
    /// The full operation name, `<source>__<name>`.
    pub operation: &'a str,
    pub source: &'a str,
    pub danger: DangerLevel,
    /// The arguments as they would be sent.
    pub arguments: &'a Value,
    /// A confirmation token presented with the call.
    pub token: Option<&'a str>,
    /// The adapter's declared trust level; `None`: no trust gating.
    pub trust: Option<TrustLevel>,
    /// The operation asks a human to approve every call.
    pub requires_confirmation: bool,
}

/// What an action carries beyond its text.
#[derive(Debug, Clone, Copy, Default)]
struct Checks<'a> {
    /// A baseline risk score whatever the text (a proxied operation's
    /// danger level); it can raise the computed score, never lower it.
    risk_floor: Option<u8>,
    /// Why a human must approve even when the policy would let it through.
    must_ask: Option<&'a str>,
    /// A verify-tier verdict refuses instead of asking for an approval.
    verify_refuses: bool,
    /// The file the action writes, when its content is known (a hooked
    /// `Write` or `Edit`).
    write: Option<&'a FileWrite>,
}

/// The gate's answer before anyone waits for a human.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Checked {
    Allowed {
        factors: Vec<String>,
    },
    /// Refused; a deny also blocked the agent.
    Refused {
        reason: String,
        factors: Vec<String>,
    },
    /// A human was shown approval request `approval_id`, open until
    /// `expires_at` (ms).
    AwaitingHuman {
        approval_id: String,
        reason: String,
        factors: Vec<String>,
        expires_at: i64,
    },
}

pub struct Gate {
    core: Arc<LoopCore>,
    tokens: ConfirmationTokens,
}

impl Gate {
    pub fn new(core: Arc<LoopCore>) -> Self {
        Self { core, tokens: ConfirmationTokens::default() }
    }

    /// A hooked action: decided now, waiting (bounded) for a human when
    /// one must approve. `write` is the file it writes, when the hook
    /// knows the content: the content is judged, the text is what is
    /// audited and shown.
    pub async fn decide(
        &self,
        call: &CallContext,
        agent: &str,
        action: &str,
        write: Option<&FileWrite>,
    ) -> GateDecision {
        let action = &*redact_text(action);
        match self.check(call, agent, action, Checks { write, ..Checks::default() }).await {
            Checked::Allowed { factors } => GateDecision::Continue { factors },
            Checked::Refused { reason, factors } => GateDecision::Deny { reason, factors },
            Checked::AwaitingHuman { approval_id, reason, factors, .. } => {
                match self.redeem(call, agent, &approval_id, action).await {
                    Ok(()) => GateDecision::HumanApproved(HumanApproval { approval_id }),
                    Err(_) => GateDecision::Deny {
                        reason: format!("{reason}; the human did not approve"),
                        factors,
                    },
                }
            }
        }
    }

    /// A call to an outside source.
    pub async fn admit(
        &self,
        call: &CallContext,
        request: GatedCall<'_>,
    ) -> Result<Admission, AqlError> {
        let arguments = canonical(request.arguments);
        let action = match redact_arguments(request.arguments) {
            Cow::Borrowed(_) => format!("{} {arguments}", request.operation),
            // A proxied MCP-AQL server's verify_challenge: the token still
            // binds to the real arguments, the stored action has no code.
            Cow::Owned(redacted) => format!("{} {}", request.operation, canonical(&redacted)),
        };
        let agent = self.core.acting_agent(call);
        let admission = |agent: String, action: String| Admission {
            agent,
            action,
            session_id: call.session_id.clone(),
        };
        // Hashed only where a token is checked or issued, not on every call.
        let scope =
            || Scope::new(request.operation, &arguments, request.source, &call.session_id, &agent);
        let trust = request.trust.map(|level| (level, level.gate(request.danger)));
        if let Some((level, TrustGate::Deny { minimum })) = trust
            && self.refuse_outright(
                call,
                &agent,
                &action,
                "trust",
                &format!(
                    "adapter trust level '{}' does not allow {} operations",
                    level.name(),
                    request.danger.name()
                ),
            )
        {
            return Err(AqlError::danger_level_denied(
                request.operation,
                request.danger.name(),
                level.name(),
                minimum.name(),
            ));
        }
        if let Some(token) = request.token {
            let approval_id = self.tokens.check(token, &scope(), now_ms())?;
            let redeemed = self
                .redeem(call, &agent, &approval_id, &action)
                .await
                .map_err(|error| error.to_repeat(request.operation, request.danger.name(), token));
            // A human who has not answered yet leaves the token valid.
            if !matches!(&redeemed, Err(error) if error.code == ErrorCode::ConfirmationRequired) {
                self.tokens.spend(token);
            }
            return redeemed.map(|()| admission(agent, action));
        }
        let must_ask = match trust {
            Some((level, TrustGate::Confirm)) => Some(format!(
                "adapter trust level '{}' requires a human to confirm {} operations",
                level.name(),
                request.danger.name()
            )),
            _ if request.requires_confirmation => {
                Some(format!("'{}' is marked requires_confirmation", request.operation))
            }
            _ => None,
        };
        let checks = Checks {
            risk_floor: request.danger.risk_floor(),
            must_ask: must_ask.as_deref(),
            verify_refuses: true,
            write: None,
        };
        match self.check(call, &agent, &action, checks).await {
            Checked::Allowed { .. } => Ok(admission(agent, action)),
            Checked::Refused { reason, factors } => {
                Err(AqlError::refused_by_policy(request.operation, &reason, &factors))
            }
            Checked::AwaitingHuman { approval_id, reason, expires_at, .. } => {
                let now = now_ms();
                let Some((token, token_expiry)) = self.tokens.issue(scope(), &approval_id, now)
                else {
                    return Err(AqlError::internal("no randomness for a confirmation token"));
                };
                let expiry = rfc3339(token_expiry.min(expires_at));
                Err(AqlError::confirmation_required(
                    request.operation,
                    request.danger.name(),
                    &reason,
                    &token,
                    &approval_id,
                    &expiry,
                ))
            }
        }
    }

    /// Records what became of an admitted call, spending its admission.
    /// The decision's own row was committed before the call left; this one
    /// is written off the answer's path.
    pub fn record_outcome(&self, admission: Admission, outcome: operation::Outcome) {
        let core = self.core.clone();
        let write = move || {
            let Admission { agent, action, session_id } = admission;
            let written = core.store.write(|tx| {
                core.audit(
                    tx,
                    AuditEntry {
                        agent: &agent,
                        session_id: Some(&session_id),
                        event: "call",
                        hint: Some(&action),
                        decision: outcome.name(),
                        ..Default::default()
                    },
                )
            });
            if let Err(error) = written {
                tracing::error!(%error, "the outcome of a gated call could not be audited");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(write)),
            Err(_) => write(),
        }
    }

    /// Records a call refused before the policy was asked (an adapter's
    /// trust level does not allow the operation's danger level), and says
    /// whether the refusal stands: only an enforcing loop refuses; the
    /// other modes record what would have happened and let it pass.
    fn refuse_outright(
        &self,
        call: &CallContext,
        agent: &str,
        action: &str,
        stage: &str,
        reason: &str,
    ) -> bool {
        let enforcing = self.core.enforcing();
        let decision = if enforcing { "stop" } else { "would_stop" };
        let written = self.core.store.write(|tx| {
            if enforcing {
                permission_pending(tx, agent, action, reason, None, now_ms())?;
            }
            self.core.audit(
                tx,
                AuditEntry {
                    agent,
                    session_id: Some(&call.session_id),
                    event: "gate",
                    hint: Some(action),
                    decision,
                    stage: Some(stage),
                    ..Default::default()
                },
            )
        });
        if let Err(error) = written {
            tracing::error!(%error, "a refused call could not be audited; refusing (fail closed)");
            self.core.audit_later(AuditEntry {
                agent,
                session_id: Some(&call.session_id),
                event: "gate",
                hint: Some(action),
                decision: "stop",
                stage: Some(stage),
                ..Default::default()
            });
            return true;
        }
        enforcing
    }

    /// Decides on one action. A deny or danger-zone verdict hard-blocks the
    /// agent (durably, before this returns); a pause shows an approval
    /// request to a human and returns its id without waiting.
    async fn check(
        &self,
        call: &CallContext,
        agent: &str,
        action: &str,
        checks: Checks<'_>,
    ) -> Checked {
        // Evaluated, audited and shown to a human without any code in it.
        let action = &*redact_text(action);
        let core = &self.core;
        let session = Some(call.session_id.as_str());
        // Read before the state is locked: another agent's decision need
        // not wait for this text to be understood.
        let analysis = match analysing::analyse(action, &call.working_folder, checks.write).await {
            Analysed::Ready(analysis) => analysis,
            Analysed::Missing(why) => {
                tracing::error!(agent, why, "a gated call is refused without a verdict");
                let entry = AuditEntry {
                    agent,
                    session_id: session,
                    event: "gate",
                    hint: Some(action),
                    decision: "refused",
                    stage: Some("analysis"),
                    ..Default::default()
                };
                core.audit_now_or_later(entry);
                return Checked::Refused {
                    reason: format!("{why}; refusing (fail closed)"),
                    factors: vec![],
                };
            }
        };
        let now = now_ms();
        let enforcing = core.enforcing();
        let decided = core.store.write(|tx| {
            if let Some(mut block) = core.block_for(tx, &call.session_id, agent)? {
                let ask = core.reissue_if_expired(tx, &call.session_id, &mut block, now)?;
                core.audit(tx, AuditEntry { agent, session_id: session, event: "gate", hint: Some(action), decision: "refused", stage: Some("block"), ..Default::default() })?;
                let reason = format!("agent '{}' is hard-blocked ({}); a human must complete challenge {}", block.agent, block.reason, block.challenge_id);
                return Ok((Checked::Refused { reason, factors: vec![] }, ask, None));
            }
            if enforcing && let Some(pause) = core.pause_of(tx, agent, now)? {
                core.audit(tx, AuditEntry { agent, session_id: session, event: "gate", hint: Some(action), decision: "pause", stage: Some("pending"), ..Default::default() })?;
                let reason = format!("agent '{agent}' is paused. {}", pause.describe());
                return Ok((Checked::Refused { reason, factors: vec![format!("{} {} is still waiting for a human", pause.challenge_kind.name(), pause.challenge_id)] }, None, None));
            }
            let mut execution = core.running_execution(tx, agent, now)?;
            let policy = core.deciding_policy(tx)?;
            let spent = core.spend_step(tx, &policy, agent, execution.as_mut())?;
            if let Some(execution) = &execution {
                records::update_execution(tx, execution.row())?;
            }
            let files = OnDisk::in_folder(&call.working_folder);
            let facts = StepFacts { agent, hint: action, outcome: None, step: spent.step, max_steps: spent.max_steps, agent_risk: checks.risk_floor, folder: &call.working_folder, write: checks.write, files: &files };
            let evaluation = evaluate_analysed(&policy, &facts, analysis);
            let rule = evaluation.rule.map(|i| policy.rule(i).describe());
            let mut stage = format!("stage {}", evaluation.stage.number());
            let mut factors = evaluation.factors.clone();
            let mut reason = evaluation.reason.clone().unwrap_or_default();
            let mut verdict = evaluation.verdict;
            match (verdict, checks.must_ask) {
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
            let raised = Raised { session_id: &call.session_id, agent, action };
            let mut taint = None;
            let (checked, ask) = match (verdict, enforcing) {
                (Verdict::Continue, _) | (_, false) => (Checked::Allowed { factors }, None),
                (Verdict::Stop, true) => {
                    let ask = core.hard_block(tx, raised, &evaluation, rule.as_deref(), now)?;
                    let reason = format!("{reason}; agent '{agent}' is hard-blocked until a human completes challenge {}", ask.id);
                    taint = Some(now);
                    (Checked::Refused { reason, factors }, Some(ask))
                }
                (Verdict::Pause(PauseKind::FailClosed), true) => {
                    permission_pending(tx, agent, action, &reason, None, now)?;
                    (Checked::Refused { reason, factors }, None)
                }
                (Verdict::Pause(PauseKind::Verification), true) if checks.verify_refuses => {
                    let reason = format!("{reason}; the verify tier needs a human's out-of-band code, so this call is refused (a policy autoApprove rule or the operation's declared danger level can allow it)");
                    permission_pending(tx, agent, action, &reason, None, now)?;
                    (Checked::Refused { reason, factors }, None)
                }
                (Verdict::Pause(kind), true) => {
                    // The person sees every rule that asked and what the
                    // action will run, not only its name.
                    let view = approval_view(action, &reason, &factors, evaluation.analysis.as_ref());
                    let ask = core.humans.new_ask(ChallengeKind::Approval, Raised { action: &view.action, ..raised }, view.reason, now);
                    // An exhausted step budget holds the agent until a
                    // human grants a new one; any other approval holds
                    // only this call.
                    let pause = (kind == PauseKind::StepLimit).then_some(kind);
                    core.humans.record_gate_approval(tx, &ask, pause, now)?;
                    permission_pending(tx, agent, action, &reason, Some(&ask.id), now)?;
                    let checked = Checked::AwaitingHuman { approval_id: ask.id.clone(), reason, factors, expires_at: ask.expires_at };
                    (checked, Some(ask))
                }
            };
            let decision = match (&checked, core.mode) {
                (Checked::Refused { .. }, _) => "stop",
                (Checked::AwaitingHuman { .. }, _) => "pause",
                (_, crate::config::LoopMode::Enforcing | crate::config::LoopMode::Monitoring) => "continue",
                (_, mode) => mode.name(),
            };
            core.audit(tx, AuditEntry {
                agent,
                execution_id: execution.as_ref().map(|execution| execution.row().id.as_str()),
                session_id: session,
                event: "gate",
                hint: Some(action),
                decision,
                stage: Some(&stage),
                rule: rule.as_deref(),
                policy_hash: policy.hash(),
            })?;
            Ok((checked, ask, taint))
        });
        let fail_closed = || Checked::Refused {
            reason: "safety state unavailable: refusing (fail closed)".into(),
            factors: vec![],
        };
        let (checked, ask, taint) = match decided {
            Ok(decided) => decided,
            Err(error) => {
                tracing::error!(%error, "safety state store failed at the gate");
                core.audit_later(AuditEntry {
                    agent,
                    session_id: session,
                    event: "gate",
                    hint: Some(action),
                    decision: "refused",
                    stage: Some("state"),
                    ..Default::default()
                });
                return fail_closed();
            }
        };
        if ask.is_some() && core.store.sync_barrier_async().await.is_err() {
            return fail_closed();
        }
        if let Some(blocked_at) = taint {
            core.sessions.taint(&call.session_id, agent, blocked_at);
        }
        let Some(ask) = ask else { return checked };
        let shown = core.humans.ask(&ask).await;
        match (checked, shown) {
            (Checked::AwaitingHuman { approval_id, reason, factors, .. }, Err(failures)) => {
                // Nobody saw it: the request must not hold the agent.
                let _ = core.store.write(|tx| {
                    records::set_challenge_status(tx, &approval_id, ChallengeStatus::Cancelled)
                });
                Checked::Refused {
                    reason: format!(
                        "{reason}; no channel could ask a human ({})",
                        failures.join("; ")
                    ),
                    factors,
                }
            }
            // A block's challenge that could not be shown leaves the block
            // in place: the refusal stands either way.
            (checked, _) => checked,
        }
    }

    /// Waits (bounded) for the human's answer to an approval request the
    /// gate opened for `action`, and spends it; a step-limit approval grants
    /// a fresh step budget. The agent's block, or another pause, if one
    /// arrived meanwhile, still refuses.
    async fn redeem(
        &self,
        call: &CallContext,
        agent: &str,
        approval_id: &str,
        action: &str,
    ) -> Result<(), AqlError> {
        let core = &self.core;
        let now = now_ms();
        let standing = core.store.write(|tx| {
            Ok((core.block_for(tx, &call.session_id, agent)?, core.pause_of(tx, agent, now)?))
        });
        let (block, pause) = standing?;
        if let Some(block) = block {
            return Err(AqlError::agent_blocked(&block.agent, &block.challenge_id, &block.reason));
        }
        if let Some(pause) = pause.filter(|pause| pause.challenge_id != approval_id) {
            return Err(AqlError::refused_by_policy(
                action,
                &format!("agent '{agent}' is paused. {}", pause.describe()),
                &[],
            ));
        }
        let settled = core.humans.wait(approval_id, call, Collector::GatedCall).await;
        let (approved, collection) =
            approved(approval_id, settled, &core.store, Collector::GatedCall)?;
        let (core, session, agent, action) =
            (core.clone(), call.session_id.clone(), agent.to_owned(), action.to_owned());
        core.clone()
            .store
            .write_durable_async(move |tx| {
                core.spend_approval(tx, &approved, &agent, &session, "gate", Some(&action))
            })
            .await?;
        // The call runs on it: never told twice.
        collection.finish(None);
        Ok(())
    }
}

/// Tells the agent, in its next directive, that the gate held back one of
/// its calls (gatekeeper 7.1, spec 8.7.3 `permission_pending`): what, why,
/// and the approval request a human was shown, if one was. A hard block
/// is told by its danger-zone broadcast instead.
#[expect(
    clippy::indexing_slicing,
    reason = "metadata is a JSON object built here: indexing it inserts a key"
)]
fn permission_pending(
    tx: &crate::store::Tx<'_>,
    agent: &str,
    action: &str,
    reason: &str,
    approval_id: Option<&str>,
    now: i64,
) -> Result<(), StoreError> {
    let waiting =
        if approval_id.is_some() { "waits for a human's approval" } else { "was refused" };
    let mut metadata = serde_json::json!({ "operation": action, "reason": reason, "agent": agent });
    if let Some(id) = approval_id {
        metadata["approvalId"] = id.into();
    }
    records::insert_event(
        tx,
        &records::EventRow {
            id: 0,
            agent: Some(agent.to_owned()),
            kind: NotificationKind::PermissionPending,
            message: format!("The gate held back '{action}': it {waiting} ({reason})"),
            metadata: metadata.to_string(),
            created_at: now,
        },
    )?;
    Ok(())
}

impl SessionEnds for Gate {
    /// The session ended: its confirmation tokens are revoked, its
    /// executions cancelled and its requests for a human withdrawn; `None`
    /// ends every session (the process is exiting).
    fn session_ended(&self, session: Option<&str>) {
        match session {
            Some(session) => self.tokens.revoke_session(session),
            None => self.tokens.revoke_all(),
        }
        if let Err(error) = self.core.end_session(session, now_ms()) {
            tracing::error!(%error, "the end of a session could not be recorded");
        }
    }
}
