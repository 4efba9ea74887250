//! Every introspection answer validates against the spec's
//! `introspection-response.schema.json`, and every envelope, success or
//! error, against `operation-result.schema.json`.

use serde_json::json;

use super::{
    stdio::assert_error_table,
    support::{assert_valid, introspection_schema, operation_result_schema, stdio_client},
};

#[tokio::test]
async fn introspection_answers_validate_against_the_spec_schemas() {
    let introspection = introspection_schema();
    let result = operation_result_schema();
    for mode in ["semantic", "single", "all"] {
        let client = stdio_client(&["serve", "--endpoints", mode]).await;
        let tool = if mode == "single" { "mcp_aql" } else { "mcp_aql_read" };
        let mut answers = Vec::new();
        for params in [
            json!({"query": "operations"}),
            json!({"query": "operations", "name": "introspect"}),
            json!({"query": "operations", "name": "missing"}),
            json!({"query": "types"}),
            json!({"query": "types", "name": "missing"}),
        ] {
            let (envelope, _) = super::support::call(
                &client,
                tool,
                json!({"operation": "introspect", "params": params}),
            )
            .await;
            answers.push(envelope);
        }
        let types = answers[3].clone();
        for info in types["data"]["types"].as_array().expect("types") {
            let request = json!({"operation": "introspect", "params": {"query": "types", "name": info["name"]}});
            answers.push(super::support::call(&client, tool, request).await.0);
        }
        for answer in &answers {
            assert_eq!(answer["success"], true, "{answer}");
            assert_valid(&introspection, answer);
            assert_valid(&result, answer);
        }
    }
}

#[tokio::test]
async fn every_error_envelope_validates_against_the_result_schema() {
    let result = operation_result_schema();
    let client = stdio_client(&[]).await;
    assert_error_table(&client, |envelope| assert_valid(&result, envelope)).await;
}
