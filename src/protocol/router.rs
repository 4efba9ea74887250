//! Request handling shared by every operation: limits, operation lookup,
//! endpoint routing, parameter validation, then the operation's handler.
//!
//! The order is fixed and fail-closed: nothing reaches a handler unless the
//! request passed every check before it.
//!
//! Operations live in an [`OperationIndex`] that run-time sources (adapters,
//! downstream servers) update; a request that names an operation not yet
//! known, or asks `introspect`, first lets every source finish starting.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{
    error::AqlError,
    limits::Limits,
    registry::{CallContext, OperationIndex, OperationResult, OperationSource, Registry, SessionEnds},
    request::{operation_name, resolve_params},
    surface::{Endpoint, EndpointMode},
};

/// The MCP-AQL version this server implements.
pub const PROTOCOL_VERSION: &str = "1.0.0-draft";

/// Routes MCP-AQL requests to operations; shared by every session.
pub struct Router {
    index: Arc<OperationIndex>,
    sources: Vec<Arc<dyn OperationSource>>,
    mode: EndpointMode,
    limits: Limits,
    capabilities: Map<String, Value>,
    session_ends: Vec<Arc<dyn SessionEnds>>,
}

impl Router {
    pub fn new(
        registry: Registry,
        mode: EndpointMode,
        limits: Limits,
        capabilities: Map<String, Value>,
    ) -> Self {
        Self { index: Arc::new(OperationIndex::new(registry)), sources: Vec::new(), mode, limits, capabilities, session_ends: Vec::new() }
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
    pub fn with_sources(mut self, index: Arc<OperationIndex>, sources: Vec<Arc<dyn OperationSource>>) -> Self {
        self.index = index;
        self.sources = sources;
        self
    }

    /// The operations in force now.
    pub fn registry(&self) -> Arc<Registry> {
        self.index.snapshot()
    }

    /// Waits until every run-time source has provided its operations (or
    /// failed its first attempt).
    pub async fn sources_ready(&self) {
        for source in &self.sources {
            source.ready().await;
        }
    }

    pub fn mode(&self) -> EndpointMode {
        self.mode
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn capabilities(&self) -> &Map<String, Value> {
        &self.capabilities
    }

    /// Handles one request that arrived through `endpoint`.
    pub async fn handle(
        &self,
        call: &CallContext,
        endpoint: Endpoint,
        arguments: &Map<String, Value>,
    ) -> OperationResult {
        self.limits.check_arguments(arguments)?;
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
            let expected = self.mode.home_endpoint(spec.category).tool_name();
            return Err(AqlError::endpoint_mismatch(name, expected, endpoint.tool_name()));
        }
        let params = resolve_params(spec, arguments)?;
        operation.invoke(self, call, params).await
    }
}
