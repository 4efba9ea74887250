//! The one gate every action outside `record_execution_step` passes: a
//! hooked tool call (`decide`), and every call to an outside source, an
//! HTTP adapter's or a downstream MCP server's (`admit`), with the same
//! policy, blocks, pauses, step budget, humans and audit as a step: each
//! is an attempt the loop's one decision judges
//! (`LoopCore::decide`, `safety::decision`),
//! and the gate turns the decision into its answer.
//!
//! A verdict that wants a human opens an approval request for the call
//! (an exhausted step budget also holds the agent paused while it waits):
//! the hook waits (bounded) for the answer; a proxied call gets
//! `CONFIRMATION_REQUIRED` with a token bound to the call, its session and
//! its agent, and repeating the call with the token collects the answer.
//! A verify-tier verdict on a proxied call is refused, audited, without
//! blocking: that tier wants an out-of-band code one call cannot carry.
//! An adapter that declares a trust level is held to the danger x trust
//! matrix first (`PERMISSION_DANGER_LEVEL_DENIED`), and no confirmation
//! token stands for a call the matrix refuses.
//!
//! What passes is an [`Admission`]: private fields, made only here, and
//! required by every upstream's send, so a call that did not pass the gate
//! cannot leave. [`operation::GatedOperation`] is the one sequence (take the
//! token, admit, send, record the outcome) every upstream kind runs.

pub mod danger;
pub mod operation;
pub mod tokens;
pub mod trust;

use std::{borrow::Cow, sync::Arc};

use serde_json::{Map, Value};

use crate::{
    analysis::FileWrite,
    protocol::{
        canonical::canonical,
        error::{AqlError, ErrorCode},
        params::{ParamSpec, ParamType},
        registry::{CallContext, SessionEnds},
    },
    safety::{
        core::LoopCore,
        decision::{Attempt, Checks, Decision, Door, Refusal},
    },
    store::{
        audit::{AuditEntry, AuditEvent},
        now_ms, rfc3339,
    },
    verify::{approvals::Collector, humans::approved},
};

use crate::redact::{redact_arguments, redact_text};
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
    /// Refused before the policy was asked: the adapter's trust level
    /// does not allow the call.
    Untrusted {
        reason: String,
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
    /// one must approve. `writes` are the files it writes, when the hook
    /// knows their content: the content is judged, the text is what is
    /// audited and shown.
    pub async fn decide(
        &self,
        call: &CallContext,
        agent: &str,
        action: &str,
        writes: &[FileWrite],
    ) -> GateDecision {
        let action = &*redact_text(action);
        match self.check(call, agent, action, Checks { writes, ..Checks::default() }).await {
            Checked::Allowed { factors } => GateDecision::Continue { factors },
            Checked::Refused { reason, factors } => GateDecision::Deny { reason, factors },
            Checked::Untrusted { reason } => GateDecision::Deny { reason, factors: vec![] },
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
        let untrusted = match trust {
            Some((level, TrustGate::Deny { minimum })) => Some((
                format!(
                    "adapter trust level '{}' does not allow {} operations",
                    level.name(),
                    request.danger.name()
                ),
                level,
                minimum,
            )),
            _ => None,
        };
        // No token stands for a call its adapter's trust level refuses.
        if let Some(token) = request.token.filter(|_| untrusted.is_none()) {
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
            writes: &[],
            untrusted: untrusted.as_ref().map(|(why, ..)| why.as_str()),
        };
        match self.check(call, &agent, &action, checks).await {
            Checked::Allowed { .. } => Ok(admission(agent, action)),
            Checked::Refused { reason, factors } => {
                Err(AqlError::refused_by_policy(request.operation, &reason, &factors))
            }
            Checked::Untrusted { reason } => Err(match untrusted {
                Some((_, level, minimum)) => AqlError::danger_level_denied(
                    request.operation,
                    request.danger.name(),
                    level.name(),
                    minimum.name(),
                ),
                None => AqlError::refused_by_policy(request.operation, &reason, &[]),
            }),
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
                        session_id: Some(&session_id),
                        hint: Some(&action),
                        ..AuditEntry::of(&agent, AuditEvent::Call, outcome.into())
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

    /// Decides on one action through the loop's one decision, and says
    /// it as the gate answers: a hard block, durable before this returns,
    /// refuses; a request for a human was shown and is not waited for.
    async fn check(
        &self,
        call: &CallContext,
        agent: &str,
        action: &str,
        checks: Checks<'_>,
    ) -> Checked {
        // Evaluated, audited and shown to a human without any code in it.
        let action = &*redact_text(action);
        let attempt = Attempt { call, agent, action, door: Door::Gate(checks) };
        match self.core.decide(attempt).await {
            Decision::Continue { details, .. } => Checked::Allowed { factors: details.factors },
            Decision::AwaitingHuman { id, expires_at, details } => Checked::AwaitingHuman {
                approval_id: id,
                reason: details.reason.unwrap_or_default(),
                factors: details.factors,
                expires_at,
            },
            Decision::Blocked { block, raised: true, details } => Checked::Refused {
                reason: format!(
                    "{}; agent '{agent}' is hard-blocked until a human completes challenge {}",
                    details.reason.unwrap_or_default(),
                    block.challenge_id
                ),
                factors: details.factors,
            },
            Decision::Blocked { block, raised: false, .. } => Checked::Refused {
                reason: format!(
                    "agent '{}' is hard-blocked ({}); a human must complete challenge {}",
                    block.agent, block.reason, block.challenge_id
                ),
                factors: vec![],
            },
            Decision::Refused { refusal: Refusal::Untrusted, details } => {
                Checked::Untrusted { reason: details.reason.unwrap_or_default() }
            }
            Decision::Refused { refusal, details } => {
                let (reason, factors) = match refusal {
                    Refusal::Paused(pause) => (
                        format!("agent '{agent}' is paused. {}", pause.describe()),
                        vec![format!(
                            "{} {} is still waiting for a human",
                            pause.challenge_kind.name(),
                            pause.challenge_id
                        )],
                    ),
                    Refusal::Unanalysed(why) => (format!("{why}; refusing (fail closed)"), vec![]),
                    Refusal::StateUnavailable(_) => {
                        ("safety state unavailable: refusing (fail closed)".into(), vec![])
                    }
                    Refusal::NoExecution => ("no running execution".into(), vec![]),
                    Refusal::Unshown(failures) => (
                        format!(
                            "{}; no channel could ask a human ({})",
                            details.reason.unwrap_or_default(),
                            failures.join("; ")
                        ),
                        details.factors,
                    ),
                    Refusal::Untrusted | Refusal::FailClosed | Refusal::NeedsCode => {
                        (details.reason.unwrap_or_default(), details.factors)
                    }
                };
                Checked::Refused { reason, factors }
            }
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
                core.spend_approval(
                    tx,
                    &approved,
                    &agent,
                    &session,
                    AuditEvent::Gate,
                    Some(&action),
                )
            })
            .await?;
        // The call runs on it: never told twice.
        collection.finish(None);
        Ok(())
    }
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
