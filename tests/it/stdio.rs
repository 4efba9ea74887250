//! The MCP-AQL surface over stdio, through rmcp's client: tools in each
//! endpoint mode, introspection, and every validation error.

use serde_json::{Value, json};

use super::support::{call, introspect, stdio_client};

const SEMANTIC: [&str; 5] =
    ["mcp_aql_create", "mcp_aql_read", "mcp_aql_update", "mcp_aql_delete", "mcp_aql_execute"];

async fn tool_names(args: &[&str]) -> Vec<String> {
    let client = stdio_client(args).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for tool in &tools {
        let description = tool.description.as_deref().unwrap_or_default();
        assert!(description.contains("introspect"), "{} must advertise introspect", tool.name);
        assert_eq!(tool.input_schema.get("required"), Some(&json!(["operation"])));
    }
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn each_endpoint_mode_exposes_its_tools() {
    assert_eq!(tool_names(&[]).await, SEMANTIC);
    assert_eq!(tool_names(&["serve", "--endpoints", "single"]).await, ["mcp_aql"]);
    let mut all: Vec<&str> = SEMANTIC.to_vec();
    all.push("mcp_aql");
    assert_eq!(tool_names(&["serve", "--endpoints", "all"]).await, all);
}

#[tokio::test]
async fn annotations_follow_each_category() {
    let client = stdio_client(&["serve", "--endpoints", "all"]).await;
    for tool in client.list_all_tools().await.expect("tools/list") {
        let annotations = tool.annotations.expect("annotations");
        let expected = match tool.name.as_ref() {
            "mcp_aql_read" => (true, false),
            "mcp_aql_create" => (false, false),
            _ => (false, true),
        };
        assert_eq!(
            (annotations.read_only_hint, annotations.destructive_hint),
            (Some(expected.0), Some(expected.1)),
            "{}",
            tool.name
        );
    }
}

#[tokio::test]
async fn introspect_lists_operations_with_protocol_metadata() {
    let client = stdio_client(&[]).await;
    let data = &introspect(&client, json!({"query": "operations"})).await["data"];
    let protocol = &data["_protocol"];
    assert_eq!(protocol["version"], "1.0.0-draft");
    assert_eq!(protocol["mode"], "semantic");
    assert_eq!(protocol["limits"]["max_request_size"], 1_048_576);
    assert_eq!(protocol["limits"]["max_nesting_depth"], 32);
    assert!(protocol["capabilities"]["execution_safety_loop"].is_string());
    assert!(protocol["concurrency"].is_string());
    let introspect_info = data["operations"]
        .as_array()
        .expect("operations array")
        .iter()
        .find(|op| op["name"] == "introspect")
        .expect("introspect lists itself");
    assert_eq!(introspect_info["semantic_category"], "READ");
    assert_eq!(introspect_info["endpoint"], "read");
}

#[tokio::test]
async fn introspect_details_match_what_validation_enforces() {
    let client = stdio_client(&[]).await;
    let details = introspect(&client, json!({"query": "operations", "name": "introspect"})).await["data"]["operation"].clone();
    assert_eq!(details["mcpTool"], "mcp_aql_read");
    assert_eq!(details["permissions"], json!({"readOnly": true, "destructive": false}));
    let query = &details["parameters"][0];
    assert_eq!((query["name"].as_str(), query["required"].as_bool()), (Some("query"), Some(true)));
    assert_eq!(query["enum"], json!(["operations", "types"]));
    assert_eq!(details["parameters"][1]["required"], false);
    // Each example introspection gives must itself succeed.
    for example in details["examples"].as_array().expect("examples") {
        let (envelope, _) = call(&client, "mcp_aql_read", example["request"].clone()).await;
        assert_eq!(envelope["success"], true, "example {example} failed: {envelope}");
    }
    let unknown = introspect(&client, json!({"query": "operations", "name": "no_such_op"})).await;
    assert_eq!(unknown["data"], json!({"operation": null}));
}

#[tokio::test]
async fn single_mode_names_the_unified_tool() {
    let client = stdio_client(&["serve", "--endpoints", "single"]).await;
    let (envelope, _) = call(
        &client,
        "mcp_aql",
        json!({"operation": "introspect", "params": {"query": "operations", "name": "introspect"}}),
    )
    .await;
    assert_eq!(envelope["data"]["operation"]["mcpTool"], "mcp_aql");
    let (envelope, _) =
        call(&client, "mcp_aql", json!({"operation": "introspect", "query": "operations"})).await;
    assert_eq!(envelope["data"]["_protocol"]["mode"], "single");
}

#[tokio::test]
async fn introspect_describes_types() {
    let client = stdio_client(&[]).await;
    let list = introspect(&client, json!({"query": "types"})).await;
    let names: Vec<&str> = list["data"]["types"]
        .as_array()
        .expect("types")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for expected in ["SemanticCategory", "OperationInput", "OperationResult", "IntrospectionResult"]
    {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let category = introspect(&client, json!({"query": "types", "name": "SemanticCategory"})).await;
    assert_eq!(
        category["data"]["type"]["values"],
        json!(["CREATE", "READ", "UPDATE", "DELETE", "EXECUTE"])
    );
    let union = introspect(&client, json!({"query": "types", "name": "OperationResult"})).await;
    assert_eq!(union["data"]["type"]["members"], json!(["OperationSuccess", "OperationFailure"]));
    let none = introspect(&client, json!({"query": "types", "name": "Nope"})).await;
    assert_eq!(none["data"], json!({"type": null}));
}

/// One row per validation failure: the tool, the request, the code,
/// `isError`, and details that must be present.
fn error_table() -> Vec<(&'static str, Value, &'static str, bool, Value)> {
    vec![
        (
            "mcp_aql_read",
            json!({"operation": "drop_everything"}),
            "NOT_FOUND_OPERATION",
            false,
            json!({"operation": "drop_everything", "available": ["get_execution_state", "introspect"]}),
        ),
        (
            "mcp_aql_create",
            json!({"operation": "introspect", "params": {"query": "operations"}}),
            "VALIDATION_ENDPOINT_MISMATCH",
            true,
            json!({"operation": "introspect", "expected_endpoint": "mcp_aql_read", "actual_endpoint": "mcp_aql_create"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect"}),
            "VALIDATION_MISSING_PARAM",
            false,
            json!({"param_name": "query", "operation": "introspect"}),
        ),
        (
            "mcp_aql_read",
            json!({"params": {"query": "operations"}}),
            "VALIDATION_MISSING_PARAM",
            false,
            json!({"param_name": "operation"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": 7}),
            "VALIDATION_INVALID_TYPE",
            false,
            json!({"param_name": "operation", "expected_type": "string", "actual_type": "integer"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": {"query": 5}}),
            "VALIDATION_INVALID_TYPE",
            false,
            json!({"param_name": "query", "expected_type": "string", "actual_type": "integer", "value": 5}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": ["query"]}),
            "VALIDATION_INVALID_TYPE",
            false,
            json!({"param_name": "params", "expected_type": "object", "actual_type": "array"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": {"query": "everything"}}),
            "VALIDATION_INVALID_VALUE",
            false,
            json!({"param_name": "query", "allowed_values": ["operations", "types"]}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": {"query": "types", "force": true}, "verbose": 1}),
            "VALIDATION_UNKNOWN_PARAM",
            true,
            json!({"operation": "introspect", "unknown_params": ["force", "verbose"], "valid_params": ["query", "name", "name_pattern", "category", "endpoint", "source", "first", "after", "last", "before", "fields"]}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": {"query": "types", "name": "a\u{0}b"}}),
            "VALIDATION_INVALID_ENCODING",
            true,
            json!({"location": "params.name", "reason": "null byte"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": {"query": "types", "list": vec![0; 10_001]}}),
            "VALIDATION_PAYLOAD_TOO_LARGE",
            true,
            json!({"limit_type": "array_elements", "limit_value": 10_000, "actual_value": 10_001, "unit": "elements"}),
        ),
        (
            "mcp_aql_read",
            json!({"operation": "introspect", "params": nested(31)}),
            "VALIDATION_PAYLOAD_TOO_LARGE",
            true,
            json!({"limit_type": "nesting_depth", "limit_value": 32, "actual_value": 33}),
        ),
    ]
}

/// Objects nested `levels` deep below `params`.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!({}), |inner, _| json!({ "x": inner }))
}

pub async fn assert_error_table(client: &super::support::Client, on_envelope: impl Fn(&Value)) {
    for (tool, request, code, is_error, details) in error_table() {
        let (envelope, flagged) = call(client, tool, request.clone()).await;
        on_envelope(&envelope);
        assert_eq!(envelope["success"], false, "{request} must fail");
        assert_eq!(envelope["error"]["code"], code, "{request}: {envelope}");
        assert_eq!(flagged, is_error, "isError of {code}");
        let message = envelope["error"]["message"].as_str().expect("message");
        assert!(
            !message.is_empty() && !message.contains(".rs") && !message.contains("panicked"),
            "{message}"
        );
        for (key, value) in details.as_object().expect("details object") {
            assert_eq!(
                &envelope["error"]["details"][key], value,
                "{code} details.{key} in {envelope}"
            );
        }
    }
}

#[tokio::test]
async fn every_validation_error_has_its_code_and_details() {
    let client = stdio_client(&[]).await;
    assert_error_table(&client, |_| {}).await;
}

#[tokio::test]
async fn underscore_metadata_is_exempt_and_limits_admit_what_they_allow() {
    let client = stdio_client(&[]).await;
    let (envelope, _) = call(
        &client,
        "mcp_aql_read",
        json!({
            "operation": "introspect", "_request_id": "r1",
            "params": {"query": "types", "_meta": {"trace": "x"}, "_note": nested(20)},
        }),
    )
    .await;
    assert_eq!(envelope["success"], true, "{envelope}");
    // arguments (level 1) > params (2) > 30 more levels = 32, the limit.
    let (envelope, _) = call(
        &client,
        "mcp_aql_read",
        json!({"operation": "introspect", "params": {"query": "types", "_deep": nested(29)}}),
    )
    .await;
    assert_eq!(envelope["success"], true, "32 levels are within the limit: {envelope}");
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_not_a_crash() {
    let client = stdio_client(&[]).await;
    let params =
        rmcp::model::CallToolRequestParams::new("mcp_aql").with_arguments(serde_json::Map::new());
    let error =
        client.call_tool(params).await.expect_err("mcp_aql is not exposed in semantic mode");
    assert!(error.to_string().contains("Unknown tool"), "{error}");
    let (envelope, _) =
        call(&client, "mcp_aql_read", json!({"operation": "introspect", "query": "types"})).await;
    assert_eq!(envelope["success"], true, "the session goes on");
}
