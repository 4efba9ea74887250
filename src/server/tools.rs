//! The MCP tool definitions of each endpoint, and how an operation's result
//! becomes an MCP `CallToolResult`.
//!
//! Tool descriptions name `introspect` (the bootstrap rule of
//! `mcp-integration.md` 2.1) and the built-in operations of their category,
//! never those of adapters and downstream servers, so what an agent's
//! context holds stays the same size however many tools sit behind;
//! every tool shares the base input schema. Annotations follow 2.3: only
//! `mcp_aql_read` is read-only, and UPDATE, DELETE, EXECUTE and the unified
//! tool are marked destructive.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde_json::json;

use crate::protocol::{
    envelope::Answer,
    error::{AqlError, LimitKind},
    limits::Limits,
    registry::{Category, Registry},
    surface::{Endpoint, Surface},
};

const INTROSPECT_HINT: &str = r#"Discover operations: {operation: "introspect", params: {query: "operations"}}"#;

/// The tools registered in `mode`, described from the registry.
pub fn endpoint_tools(surface: &Surface, registry: &Registry) -> Vec<Tool> {
    let schema = Arc::new(input_schema());
    surface
        .mode
        .endpoints()
        .into_iter()
        .map(|endpoint| {
            let (read_only, destructive) = match endpoint.category() {
                Some(category) => (category.read_only(), category.destructive()),
                None => (false, true),
            };
            Tool::new(surface.tool_name(endpoint), describe(endpoint, registry), schema.clone())
                .with_annotations(ToolAnnotations::new().read_only(read_only).destructive(destructive))
        })
        .collect()
}

fn input_schema() -> JsonObject {
    let schema = json!({
        "type": "object",
        "properties": {
            "operation": { "type": "string", "description": "Operation name" },
            "params": { "type": "object", "description": "Operation parameters" },
            "operations": { "type": "array", "description": "Batch: [{operation, params}], in order" },
        },
        "required": ["operation"],
    });
    match schema {
        serde_json::Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn operation_list(registry: &Registry, category: Option<Category>) -> String {
    let names: Vec<&str> = registry
        .specs()
        .filter(|spec| spec.source.is_none() && category.is_none_or(|c| spec.category == c))
        .map(|spec| spec.name.as_str())
        .collect();
    if names.is_empty() {
        "none registered".into()
    } else {
        names.join(", ")
    }
}

fn describe(endpoint: Endpoint, registry: &Registry) -> String {
    let Some(category) = endpoint.category() else {
        let categories: Vec<String> = Category::ALL
            .iter()
            .map(|&c| format!("{}: {}", c.name(), operation_list(registry, Some(c))))
            .collect();
        return format!(
            "safety-dongle MCP-AQL endpoint: every operation through one tool, routed by its semantic category.\n{}\n{INTROSPECT_HINT}",
            categories.join("\n")
        );
    };
    let purpose = match category {
        Category::Create => "Additive operations: add data without removing or overwriting any.",
        Category::Read => "Safe, read-only operations: never modify state.",
        Category::Update => "Modifying operations that may overwrite existing data.",
        Category::Delete => "Destructive operations that remove data. Use with caution.",
        Category::Execute => "Execution lifecycle and safety-loop operations.",
    };
    format!(
        "{purpose}\nSupported operations: {}\n{INTROSPECT_HINT}",
        operation_list(registry, Some(category))
    )
}

/// One text content holding the JSON envelope (with the call's `warnings`
/// when it succeeded); `isError` for unrecoverable failures only.
///
/// An envelope larger than the response limit (spec 4.7.5) never leaves:
/// the agent gets `VALIDATION_PAYLOAD_TOO_LARGE` instead, whatever produced
/// it (a downstream server, an adapter, introspection). The operation
/// itself has run by then and its outcome is recorded as it was.
pub fn call_tool_result(answer: &Answer, warnings: &[serde_json::Value], limits: &Limits) -> CallToolResult {
    let mut text = answer.envelope(warnings).to_string();
    let mut failed = answer.is_error();
    if text.len() > limits.max_response_size {
        tracing::warn!(bytes = text.len(), limit = limits.max_response_size, "an answer over the response limit was withheld");
        let refusal = Answer::One(Err(AqlError::payload_too_large(LimitKind::ResponseSize, limits.max_response_size, text.len())));
        text = refusal.envelope(&[]).to_string();
        failed = refusal.is_error();
    }
    if failed {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn envelope_of(result: &CallToolResult) -> Value {
        serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap()
    }

    #[test]
    fn an_envelope_over_the_response_limit_is_replaced_by_the_limit_error() {
        let limits = Limits { max_response_size: 1_000, ..Limits::default() };
        let fits = call_tool_result(&Answer::One(Ok(json!({ "text": "x".repeat(900) }))), &[], &limits);
        assert_eq!(envelope_of(&fits)["data"]["text"].as_str().map(str::len), Some(900));

        let over = call_tool_result(&Answer::One(Ok(json!({ "text": "x".repeat(1_000) }))), &[json!({"code": "W"})], &limits);
        let envelope = envelope_of(&over);
        assert_eq!(envelope["error"]["code"], "VALIDATION_PAYLOAD_TOO_LARGE");
        assert_eq!(envelope["error"]["details"]["limit_type"], "response_size");
        assert_eq!(envelope["error"]["details"]["limit_value"], 1_000);
        assert!(envelope["error"]["details"]["actual_value"].as_u64().unwrap() > 1_000);
    }
}
