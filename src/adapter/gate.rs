//! The gate every operation from an outside source passes before anything
//! leaves the dongle: the same policy, blocks, humans and audit as the
//! safety loop, plus the operation's danger level as a baseline risk.
//!
//! The policy sees `<source>__<operation> <canonical JSON arguments>`.
//! Allowed calls go ahead; refused ones never reach the source (a deny
//! rule also hard-blocks the agent, as a step would); calls that need a
//! human get `CONFIRMATION_REQUIRED` with a token, and the human is asked
//! through the verifier at once. Repeating the call with the token waits
//! (bounded) for the human's answer and goes ahead only on Approve.
//!
//! A verify-tier verdict (a dangerous operation, say) refuses the call,
//! audited, without blocking the agent: that tier wants a human's
//! out-of-band code, which one call cannot carry. An adapter that declares
//! a trust level is also held to the danger x trust matrix: a denied cell
//! refuses the call before the policy is asked, a confirm cell needs a
//! human even when the policy would let it pass.

use std::{borrow::Cow, sync::Arc};

use serde_json::{Map, Value};

use crate::{
    protocol::{
        canonical::canonical,
        error::{AqlError, ErrorCode},
        params::{ParamSpec, ParamType},
        registry::CallContext,
    },
    safety::engine::{Checked, SafetyLoop},
    store::{now_ms, rfc3339},
    verify::redact::redact_arguments,
};

use super::{
    danger::DangerLevel,
    tokens::{ConfirmationTokens, Scope},
    trust::{TrustGate, TrustLevel},
};

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
    let mut token = ParamSpec::optional(name, ParamType::String, "Confirmation token from a CONFIRMATION_REQUIRED answer, once a human approved the call");
    if name == TOKEN_PARAM {
        token = token.alias(TOKEN_ALIAS);
    }
    params.push(token);
    name
}

/// Takes the token out of resolved arguments, so it never reaches the
/// source.
pub fn take_token(arguments: &mut Map<String, Value>, name: &str) -> Option<String> {
    match arguments.remove(name) {
        Some(Value::String(token)) => Some(token),
        _ => None,
    }
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

/// Permission for one call, and what its audit rows say.
#[derive(Debug)]
pub struct Admitted {
    pub agent: String,
    pub action: String,
}

pub struct OperationGate {
    safety: Arc<SafetyLoop>,
    tokens: ConfirmationTokens,
}

impl OperationGate {
    pub fn new(safety: Arc<SafetyLoop>) -> Self {
        Self { safety, tokens: ConfirmationTokens::default() }
    }

    pub async fn admit(&self, call: &CallContext, request: GatedCall<'_>) -> Result<Admitted, AqlError> {
        let arguments = canonical(request.arguments);
        let action = match redact_arguments(request.arguments) {
            Cow::Borrowed(_) => format!("{} {arguments}", request.operation),
            // A proxied MCP-AQL server's verify_challenge: the token still
            // binds to the real arguments, the stored action has no code.
            Cow::Owned(redacted) => format!("{} {}", request.operation, canonical(&redacted)),
        };
        let agent = self.safety.acting_agent(call);
        // Hashed only where a token is checked or issued, not on every call.
        let scope = || Scope::new(request.operation, &arguments, request.source);
        let trust = request.trust.map(|level| (level, level.gate(request.danger)));
        if let Some((level, TrustGate::Deny { minimum })) = trust
            && self.safety.refuse_outright(call, &agent, &action, "trust") {
                return Err(AqlError::danger_level_denied(request.operation, request.danger.name(), level.name(), minimum.name()));
            }
        if let Some(token) = request.token {
            let approval_id = self.tokens.check(token, &scope(), now_ms())?;
            let redeemed = self.safety.redeem_approval(call, &agent, &approval_id, &action).await;
            // A human who has not answered yet leaves the token valid.
            if !matches!(&redeemed, Err(error) if error.code == ErrorCode::ConfirmationRequired) {
                self.tokens.spend(token);
            }
            return redeemed.map(|()| Admitted { agent, action });
        }
        let must_ask = match trust {
            Some((level, TrustGate::Confirm)) => Some(format!("adapter trust level '{}' requires a human to confirm {} operations", level.name(), request.danger.name())),
            _ if request.requires_confirmation => Some(format!("'{}' is marked requires_confirmation", request.operation)),
            _ => None,
        };
        match self.safety.check_action(call, &agent, &action, request.danger.risk_floor(), must_ask.as_deref(), true).await {
            Checked::Allowed { .. } => Ok(Admitted { agent, action }),
            Checked::Refused { reason, factors } => Err(AqlError::refused_by_policy(request.operation, &reason, &factors)),
            Checked::AwaitingHuman { approval_id, reason, expires_at, .. } => {
                let now = now_ms();
                let Some((token, token_expiry)) = self.tokens.issue(scope(), &approval_id, now) else {
                    return Err(AqlError::internal("no randomness for a confirmation token"));
                };
                let expiry = rfc3339(token_expiry.min(expires_at));
                Err(AqlError::confirmation_required(request.operation, request.danger.name(), &reason, &token, &approval_id, &expiry))
            }
        }
    }

    /// Records what became of an admitted call.
    pub fn record_outcome(&self, call: &CallContext, admitted: &Admitted, outcome: &'static str) {
        self.safety.record_outcome(call, &admitted.agent, &admitted.action, outcome);
    }
}
