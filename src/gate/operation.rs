//! The one gated sequence every upstream kind runs: take the confirmation
//! token out of the arguments, let the upstream prepare the call (so a call
//! that cannot be sent never bothers a human), admit it through the gate,
//! send it with the [`Admission`], and record what became of it.
//!
//! An upstream (an HTTP adapter's operation, a downstream MCP server's
//! tool) implements [`Upstream`]; its `send` cannot be called without an
//! admission, and only the gate makes one.
//!
//! Each call that leaves is logged as runtime seed 004's logging contract
//! names it: its start at `debug`, its end at `debug` when it succeeded and
//! at `error` when it failed (a timeout included), each with the
//! operation, the source, the outcome and the duration in milliseconds.
//! Retries are logged at `warn` where they happen (`adapter::retry`).
//! Never an argument value, nor an error's message (which may quote one):
//! the error's code only.

use crate::{names::named_enum, store::audit::AuditDecision};
use std::{future::Future, pin::Pin, sync::Arc, time::Instant};

use serde_json::{Map, Value};

use crate::protocol::{
    error::AqlError,
    registry::{CallContext, Operation, OperationFuture, OperationSpec},
    request::Params,
    router::Router,
};

use super::{
    Admission, Gate, GatedCall, add_token_param, danger::DangerLevel, take_token, trust::TrustLevel,
};

/// How the gate judges an upstream's calls.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The adapter's or server's name.
    pub source: String,
    pub danger: DangerLevel,
    /// The adapter's declared trust level; `None`: no trust gating.
    pub trust: Option<TrustLevel>,
    /// The operation asks a human to approve every call.
    pub requires_confirmation: bool,
}

/// A call made ready to send, and the arguments the gate judges.
pub struct Prepared<T> {
    pub call: T,
    pub judged_arguments: Value,
}

/// What an upstream answered, and the outcome its audit row records.
pub struct Sent {
    pub result: Result<Value, AqlError>,
    pub outcome: Outcome,
}

named_enum! {
    /// What became of a call that left.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Outcome {
        /// It answered, and the answer is the result.
        Ok => "ok",
        /// The downstream tool answered with `isError`.
        ToolError => "tool_error",
        /// The answer did not match the schema its upstream declared.
        AnswerMismatch => "answer_mismatch",
        /// No usable answer: the transport failed, or the upstream refused.
        Failed => "failed",
    }
}

impl From<Outcome> for AuditDecision {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Ok => Self::Ok,
            Outcome::ToolError => Self::ToolError,
            Outcome::AnswerMismatch => Self::AnswerMismatch,
            Outcome::Failed => Self::Failed,
        }
    }
}

pub type SendFuture<'a> = Pin<Box<dyn Future<Output = Sent> + Send + 'a>>;

/// Something outside the dongle that gated calls go to.
pub trait Upstream: Send + Sync + 'static {
    /// A call ready to send.
    type Call: Send;

    /// Checks and builds a call from its arguments (the token already
    /// taken out); refusing here bothers nobody.
    fn prepare(
        &self,
        spec: &OperationSpec,
        arguments: Map<String, Value>,
    ) -> Result<Prepared<Self::Call>, AqlError>;

    /// Sends an admitted call.
    fn send<'a>(
        &'a self,
        admission: &'a Admission,
        call: Self::Call,
        context: &'a CallContext,
    ) -> SendFuture<'a>;
}

/// An MCP-AQL operation whose every call passes the gate.
pub struct GatedOperation<U> {
    spec: OperationSpec,
    judged: Judged,
    token_param: &'static str,
    upstream: U,
    gate: Arc<Gate>,
}

impl<U: Upstream> GatedOperation<U> {
    /// The operation; `spec` gains the confirmation-token parameter.
    pub fn new(mut spec: OperationSpec, judged: Judged, upstream: U, gate: Arc<Gate>) -> Self {
        let token_param = add_token_param(&mut spec.params);
        spec.danger_level = Some(judged.danger.name());
        Self { spec, judged, token_param, upstream, gate }
    }

    async fn call(&self, context: &CallContext, params: Params) -> Result<Value, AqlError> {
        let mut arguments = params.into_map();
        let token = take_token(&mut arguments, self.token_param);
        let prepared = self.upstream.prepare(&self.spec, arguments)?;
        let request = GatedCall {
            operation: &self.spec.name,
            source: &self.judged.source,
            danger: self.judged.danger,
            arguments: &prepared.judged_arguments,
            token: token.as_deref(),
            trust: self.judged.trust,
            requires_confirmation: self.judged.requires_confirmation,
        };
        let admission = self.gate.admit(context, request).await?;
        let (operation, source) = (self.spec.name.as_str(), self.judged.source.as_str());
        tracing::debug!(operation, source, "upstream call started");
        let started = Instant::now();
        let sent = self.upstream.send(&admission, prepared.call, context).await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let outcome = sent.outcome.name();
        match &sent.result {
            Ok(_) => {
                tracing::debug!(operation, source, outcome, duration_ms, "upstream call ended")
            }
            Err(error) => tracing::error!(
                operation,
                source,
                outcome,
                code = error.code.as_str(),
                duration_ms,
                "upstream call failed"
            ),
        }
        self.gate.record_outcome(admission, sent.outcome);
        sent.result
    }
}

impl<U: Upstream> Operation for GatedOperation<U> {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(
        &'a self,
        _router: &'a Router,
        call: &'a CallContext,
        params: Params,
    ) -> OperationFuture<'a> {
        Box::pin(self.call(call, params))
    }
}
