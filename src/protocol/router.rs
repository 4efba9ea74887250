//! Request handling shared by every operation: limits, operation lookup,
//! endpoint routing, parameter validation, then the operation's handler.
//!
//! The order is fixed and fail-closed: nothing reaches a handler unless the
//! request passed every check before it.

use serde_json::{Map, Value};

use super::{
    error::AqlError,
    limits::Limits,
    registry::{CallContext, OperationResult, Registry},
    request::{operation_name, resolve_params},
    surface::{Endpoint, EndpointMode},
};

/// The MCP-AQL version this server implements.
pub const PROTOCOL_VERSION: &str = "1.0.0-draft";

/// Routes MCP-AQL requests to operations. Immutable once built, so it is
/// shared by every session without locking.
pub struct Router {
    registry: Registry,
    mode: EndpointMode,
    limits: Limits,
    capabilities: Map<String, Value>,
}

impl Router {
    pub fn new(
        registry: Registry,
        mode: EndpointMode,
        limits: Limits,
        capabilities: Map<String, Value>,
    ) -> Self {
        Self { registry, mode, limits, capabilities }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
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
        let Some(operation) = self.registry.get(name) else {
            let available = self.registry.names_in(endpoint.category());
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
