//! Request handling shared by every operation: limits, operation lookup,
//! endpoint routing, parameter validation, then the operation's handler.
//!
//! The order is fixed and fail-closed: nothing reaches a handler unless the
//! request passed every check before it.
//!
//! Operations live in an [`OperationIndex`] that run-time sources (adapters,
//! downstream servers) update; a request that names an operation not yet
//! known, or asks `introspect`, first lets every source finish starting.

use std::{panic::AssertUnwindSafe, sync::Arc};

use futures::FutureExt;
use serde_json::{Map, Value};

use super::{
    batch::{self, OPERATIONS_KEY},
    envelope::Answer,
    error::AqlError,
    limits::Limits,
    registry::{
        CallContext, OperationIndex, OperationResult, OperationSource, OwnFailures, Registry,
        ServerFacts, SessionEnds,
    },
    request::{operation_name, resolve_params},
    selection::take_selection,
    surface::{Endpoint, EndpointMode, Surface},
};

/// The MCP-AQL version this server implements.
pub const PROTOCOL_VERSION: &str = "1.0.0-draft";

/// The conformance level this server claims (`conformance-testing.md` 2).
const CONFORMANCE: &str = "level-2";

/// Routes MCP-AQL requests to operations; shared by every session.
pub struct Router {
    index: Arc<OperationIndex>,
    sources: Vec<Arc<dyn OperationSource>>,
    surface: Surface,
    limits: Limits,
    capabilities: Map<String, Value>,
    session_ends: Vec<Arc<dyn SessionEnds>>,
    facts: Vec<Arc<dyn ServerFacts>>,
    own_failures: Vec<Arc<dyn OwnFailures>>,
}

impl Router {
    pub fn new(
        registry: Registry,
        surface: Surface,
        limits: Limits,
        capabilities: Map<String, Value>,
    ) -> Self {
        Self {
            index: Arc::new(OperationIndex::new(registry)),
            sources: Vec::new(),
            surface,
            limits,
            capabilities,
            session_ends: Vec::new(),
            facts: Vec::new(),
            own_failures: Vec::new(),
        }
    }

    /// A router that tells `recorder` of each request it refused because
    /// answering it panicked.
    pub fn with_own_failures(mut self, recorder: Arc<dyn OwnFailures>) -> Self {
        self.own_failures.push(recorder);
        self
    }

    /// A router whose introspection reports `facts` in `_protocol`.
    pub fn with_facts(mut self, facts: Arc<dyn ServerFacts>) -> Self {
        self.facts.push(facts);
        self
    }

    /// What the server says about itself beside the protocol's facts,
    /// read now.
    pub fn server_facts(&self) -> Map<String, Value> {
        self.facts.iter().flat_map(|facts| facts.protocol_facts()).collect()
    }

    /// A router that tells `holder` when a session ends.
    pub fn with_session_ends(mut self, holder: Arc<dyn SessionEnds>) -> Self {
        self.session_ends.push(holder);
        self
    }

    /// Tells every holder of per-session state that `session` ended
    /// (`None`: every session; the process is exiting). Writes the state
    /// store: call it off the async worker threads.
    pub fn end_session(&self, session: Option<&str>) {
        for holder in &self.session_ends {
            holder.session_ended(session);
        }
    }

    /// A router over a shared index that `sources` add operations to.
    pub fn with_sources(
        mut self,
        index: Arc<OperationIndex>,
        sources: Vec<Arc<dyn OperationSource>>,
    ) -> Self {
        self.index = index;
        self.sources = sources;
        self
    }

    /// The operations in force now.
    pub fn registry(&self) -> Arc<Registry> {
        self.index.snapshot()
    }

    /// Sees each change of which operations exist (what the endpoint
    /// tools describe), from now on.
    pub fn operation_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.index.changes()
    }

    /// Waits until every run-time source has provided its operations (or
    /// failed its first attempt).
    pub async fn sources_ready(&self) {
        for source in &self.sources {
            source.ready().await;
        }
    }

    pub fn mode(&self) -> EndpointMode {
        self.surface.mode
    }

    /// The tools this router answers through.
    pub fn surface(&self) -> &Surface {
        &self.surface
    }

    /// The conformance level `_protocol` claims: level 2 (batch, field
    /// selection, endpoint modes) is what this router implements.
    pub fn conformance(&self) -> &'static str {
        CONFORMANCE
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn capabilities(&self) -> &Map<String, Value> {
        &self.capabilities
    }

    /// Answers one request that arrived through `endpoint`: a batch when
    /// it carries `operations`, one operation otherwise. A panic while
    /// answering is a failure of the server's own: the request is refused
    /// with `INTERNAL_ERROR` (fail closed: the agent does not proceed), the
    /// refusal recorded, and every other request served as before.
    pub async fn answer(
        &self,
        call: &CallContext,
        endpoint: Endpoint,
        arguments: &Map<String, Value>,
    ) -> Answer {
        let answering = AssertUnwindSafe(self.answer_unguarded(call, endpoint, arguments));
        match answering.catch_unwind().await {
            Ok(answer) => answer,
            Err(_) => {
                let operation = match arguments.get("operation") {
                    Some(Value::String(name)) => name.as_str(),
                    _ if arguments.contains_key(OPERATIONS_KEY) => "batch",
                    _ => "unnamed",
                };
                tracing::error!(operation, "answering a request panicked; it is refused");
                for recorder in &self.own_failures {
                    recorder.request_failed(call, operation);
                }
                Answer::One(Err(AqlError::internal(
                    "the server failed while answering this request, so it is refused",
                )))
            }
        }
    }

    async fn answer_unguarded(
        &self,
        call: &CallContext,
        endpoint: Endpoint,
        arguments: &Map<String, Value>,
    ) -> Answer {
        if !arguments.contains_key(OPERATIONS_KEY) {
            return Answer::One(self.handle(call, endpoint, arguments).await);
        }
        if arguments.contains_key("operation") {
            return Answer::One(Err(AqlError::batch_invalid(
                "A request is one operation or a batch of 'operations', not both",
            )));
        }
        batch::run(self, call, endpoint, arguments).await.into()
    }

    /// Handles one operation request that arrived through `endpoint`.
    pub async fn handle(
        &self,
        call: &CallContext,
        endpoint: Endpoint,
        arguments: &Map<String, Value>,
    ) -> OperationResult {
        self.limits.check_arguments(arguments)?;
        self.handle_checked(call, endpoint, arguments).await
    }

    /// Handles one operation request whose payload limits were checked
    /// (alone or as part of its batch): lookup, routing, field selection,
    /// validation, the operation, then the selection of its data.
    pub async fn handle_checked(
        &self,
        call: &CallContext,
        endpoint: Endpoint,
        arguments: &Map<String, Value>,
    ) -> OperationResult {
        let name = operation_name(arguments)?;
        let mut registry = self.registry();
        if name == "introspect" || registry.get(name).is_none() {
            self.sources_ready().await;
            registry = self.registry();
        }
        let Some(operation) = registry.get(name) else {
            let available = registry.names_in(endpoint.category());
            return Err(AqlError::unknown_operation(name, &available));
        };
        let spec = operation.spec();
        if !endpoint.accepts(spec.category) {
            let expected = self.surface.home_tool(spec.category);
            return Err(AqlError::endpoint_mismatch(
                name,
                &expected,
                &self.surface.tool_name(endpoint),
            ));
        }
        let (arguments, selection) = take_selection(spec, arguments)?;
        let params = resolve_params(spec, &arguments)?;
        let data = operation.invoke(self, call, params).await?;
        Ok(match selection {
            Some(selection) => selection.apply(data),
            None => data,
        })
    }
}
