//! The MCP tool definitions of each endpoint, and how an operation's result
//! becomes an MCP `CallToolResult`.
//!
//! Tool descriptions name `introspect` (the bootstrap rule of
//! `mcp-integration.md` 2.1) and the operations registered now in their
//! category (2.1.1's "Supported operations"): every built-in one by name,
//! and those of adapters and downstream servers by source, the name when
//! a source has one there, else the glob of its names and how many
//! (`github_api__* (1223)`). So a description never says an operation is
//! missing that can be called, and what an agent's context holds grows
//! with the sources behind the dongle, not with their operations. They are described from
//! the registry each time tools are listed; the handler tells clients
//! when that changes. Every tool shares the base input schema.
//! Annotations follow 2.3: only `mcp_aql_read` is read-only, and UPDATE,
//! DELETE, EXECUTE and the unified tool are marked destructive.

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

const INTROSPECT_HINT: &str =
    r#"Discover operations: {operation: "introspect", params: {query: "operations"}}"#;

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
                .with_annotations(
                    ToolAnnotations::new().read_only(read_only).destructive(destructive),
                )
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

/// The operations of `category` registered now: each built-in one by
/// name, then those of adapters and downstream servers by source: the
/// name when a source has one, else its names' glob and how many
/// (`github_api__* (12)`, which `name_pattern` takes as it is).
fn operation_list(registry: &Registry, category: Category) -> String {
    let mut own: Vec<&str> = Vec::new();
    // Names of one source share its prefix, so they are neighbours in the
    // registry's name order.
    let mut loaded: Vec<(&str, Vec<&str>)> = Vec::new();
    for spec in registry.specs().filter(|spec| spec.category == category) {
        let name = spec.name.as_str();
        if spec.source.is_none() {
            own.push(name);
            continue;
        }
        let prefix = name.split_once("__").map_or(name, |(prefix, _)| prefix);
        match loaded.last_mut() {
            Some((last, names)) if *last == prefix => names.push(name),
            _ => loaded.push((prefix, vec![name])),
        }
    }
    let sources = loaded.iter().map(|(prefix, names)| match names.as_slice() {
        [one] => (*one).to_owned(),
        names => format!("{prefix}__* ({})", names.len()),
    });
    let listed: Vec<String> = own.iter().map(|name| (*name).to_owned()).chain(sources).collect();
    if listed.is_empty() { "none registered".to_owned() } else { listed.join(", ") }
}

fn describe(endpoint: Endpoint, registry: &Registry) -> String {
    let Some(category) = endpoint.category() else {
        let categories: Vec<String> = Category::ALL
            .iter()
            .map(|&c| format!("{}: {}", c.name(), operation_list(registry, c)))
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
        operation_list(registry, category)
    )
}

/// One text content holding the JSON envelope (with the call's `warnings`
/// when it succeeded); `isError` for unrecoverable failures only.
///
/// An envelope larger than the response limit (spec 4.7.5) never leaves:
/// the agent gets `VALIDATION_PAYLOAD_TOO_LARGE` instead, whatever produced
/// it (a downstream server, an adapter, introspection). The operation
/// itself has run by then and its outcome is recorded as it was.
pub fn call_tool_result(
    answer: &Answer,
    warnings: &[serde_json::Value],
    limits: &Limits,
) -> CallToolResult {
    let mut text = answer.envelope(warnings).to_string();
    let mut failed = answer.is_error();
    if text.len() > limits.max_response_size {
        tracing::warn!(
            bytes = text.len(),
            limit = limits.max_response_size,
            "an answer over the response limit was withheld"
        );
        let refusal = Answer::One(Err(AqlError::payload_too_large(
            LimitKind::ResponseSize,
            limits.max_response_size,
            text.len(),
        )));
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
    use crate::protocol::{registry::testing::inert, surface::EndpointMode};

    #[test]
    fn descriptions_list_what_is_registered_by_source() {
        let mut registry = Registry::default();
        registry.register(inert("introspect", Category::Read, None)).unwrap();
        let delete = |registry: &Registry| describe(Endpoint::Semantic(Category::Delete), registry);
        let listed = |text: String| {
            text.lines()
                .find_map(|line| line.strip_prefix("Supported operations: ").map(str::to_owned))
                .unwrap()
        };
        assert_eq!(listed(delete(&registry)), "none registered");
        registry
            .register(inert("tracker__delete_issue", Category::Delete, Some("tracker")))
            .unwrap();
        assert_eq!(listed(delete(&registry)), "tracker__delete_issue");
        for i in 0..30 {
            registry
                .register(inert(&format!("zfs__delete_{i:02}"), Category::Delete, Some("zfs")))
                .unwrap();
        }
        registry.register(inert("a_b__drop", Category::Delete, Some("a-b"))).unwrap();
        registry.register(inert("a_b__purge", Category::Delete, Some("a-b"))).unwrap();
        assert_eq!(listed(delete(&registry)), "a_b__* (2), tracker__delete_issue, zfs__* (30)");
        assert_eq!(listed(describe(Endpoint::Semantic(Category::Read), &registry)), "introspect");

        let unified = describe(Endpoint::Unified, &registry);
        assert!(
            unified.contains("READ: introspect\n")
                && unified.contains("DELETE: a_b__* (2), tracker__delete_issue, zfs__* (30)\n"),
            "{unified}"
        );
        assert_eq!(
            endpoint_tools(&Surface::new(EndpointMode::All, Default::default()), &registry).len(),
            6
        );
    }

    fn envelope_of(result: &CallToolResult) -> Value {
        serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap()
    }

    #[test]
    fn an_envelope_over_the_response_limit_is_replaced_by_the_limit_error() {
        let limits = Limits { max_response_size: 1_000, ..Limits::default() };
        let fits =
            call_tool_result(&Answer::One(Ok(json!({ "text": "x".repeat(900) }))), &[], &limits);
        assert_eq!(envelope_of(&fits)["data"]["text"].as_str().map(str::len), Some(900));

        let over = call_tool_result(
            &Answer::One(Ok(json!({ "text": "x".repeat(1_000) }))),
            &[json!({"code": "W"})],
            &limits,
        );
        let envelope = envelope_of(&over);
        assert_eq!(envelope["error"]["code"], "VALIDATION_PAYLOAD_TOO_LARGE");
        assert_eq!(envelope["error"]["details"]["limit_type"], "response_size");
        assert_eq!(envelope["error"]["details"]["limit_value"], 1_000);
        assert!(envelope["error"]["details"]["actual_value"].as_u64().unwrap() > 1_000);
    }
}
