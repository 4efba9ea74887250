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
    envelope::{envelope, is_error},
    registry::{Category, OperationResult, Registry},
    surface::{Endpoint, EndpointMode},
};

const INTROSPECT_HINT: &str =
    r#"Discover all operations (downstream servers' too) and parameters: { operation: "introspect", params: { query: "operations" } }"#;

/// The tools registered in `mode`, described from the registry.
pub fn endpoint_tools(mode: EndpointMode, registry: &Registry) -> Vec<Tool> {
    let schema = Arc::new(input_schema());
    mode.endpoints()
        .into_iter()
        .map(|endpoint| {
            let (read_only, destructive) = match endpoint.category() {
                Some(category) => (category.read_only(), category.destructive()),
                None => (false, true),
            };
            Tool::new(endpoint.tool_name(), describe(endpoint, registry), schema.clone())
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
pub fn call_tool_result(result: &OperationResult, warnings: &[serde_json::Value]) -> CallToolResult {
    let text = envelope(result, warnings).to_string();
    if is_error(result) {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
}
