//! MCP-AQL Level 2 through the real binary: batches that halt where a
//! human or the policy says stop (checked against the spec's batch
//! schema), field selection on data, errors and introspection, and the
//! tool prefix that lets two MCP-AQL servers share one client.

use serde_json::{Value, json};

use super::{
    humans::{Answer, Setup, notified_id},
    support::{
        RawStdio, ask, assert_valid, batch_schema, call, execute, introspect, introspection_schema,
        operation_result_schema, stdio_client, stdio_client_with_env,
    },
};

fn step_item(agent: &str, hint: &str) -> Value {
    json!({"operation": "record_execution_step", "params": {"element_name": agent, "nextActionHint": hint}})
}

/// A batch sent through `tool`, answered as an envelope.
async fn batch(raw: &mut RawStdio, id: i64, tool: &str, operations: Value) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {"operations": operations}}});
    ask(raw, message).await
}

#[tokio::test]
async fn a_batch_runs_in_order_continues_past_failures_and_halts_at_a_pause() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    let answer = batch(
        &mut raw,
        2,
        "mcp_aql_create",
        json!([
            step_item("coder", "executing shell command: ls -la"),
            {"operation": "drop_everything", "params": {}},
            step_item("coder", "executing shell command: sudo apt-get install cowsay"),
            step_item("coder", "executing shell command: echo after"),
        ]),
    )
    .await;
    assert_valid(&batch_schema(), &answer);
    assert_eq!(
        (answer["success"].clone(), answer["data"].clone()),
        (json!(true), Value::Null),
        "{answer:#}"
    );
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{answer:#}");
    assert_eq!(
        (results[0]["index"].clone(), results[0]["result"]["data"]["continue"].clone()),
        (json!(0), json!(true))
    );
    assert_eq!(
        results[1]["result"]["error"]["code"], "NOT_FOUND_OPERATION",
        "a failure does not stop the batch"
    );
    let halted = &answer["halted_at"];
    assert_eq!(
        (halted["index"].clone(), halted["operation"].clone()),
        (json!(2), json!("record_execution_step"))
    );
    let directive = &halted["result"]["data"];
    assert_eq!(directive["continue"], false, "{halted}");
    let approval = notified_id(directive, "autonomy_pause", "approvalId");
    assert_eq!(
        answer["pending_operations"],
        json!([{"index": 3, "operation": "record_execution_step", "params": {"element_name": "coder", "nextActionHint": "executing shell command: echo after"}}])
    );
    assert_eq!(
        answer["summary"],
        json!({"total": 4, "succeeded": 1, "failed": 1, "halted": 1, "pending": 1})
    );
    assert_eq!(
        human.shown(&approval)["approval_id"],
        approval.as_str(),
        "the human was asked about the halted item"
    );

    // The step after the halt never ran: the agent's trail has two steps.
    let state = ask(
        &mut raw,
        super::support::tool_call(
            3,
            "mcp_aql_read",
            "get_execution_state",
            json!({"element_name": "coder"}),
        ),
    )
    .await;
    assert_eq!(state["data"]["steps"], 2, "{state}");
}

#[tokio::test]
async fn a_denied_item_stops_the_batch_and_its_block_reaches_the_agent() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start_with_env(&[("MCP_AQL_ENDPOINT_MODE", "all")]).await;
    let answer = batch(
        &mut raw,
        1,
        "mcp_aql",
        json!([
            {"operation": "execute_agent", "params": {"element_name": "tester"}},
            step_item("tester", "executing shell command: git status"),
            step_item("tester", "executing shell command: rm -rf ~"),
            step_item("tester", "executing shell command: ls"),
            {"operation": "complete_execution", "params": {"element_name": "tester"}},
        ]),
    )
    .await;
    assert_valid(&batch_schema(), &answer);
    assert_eq!(
        answer["summary"],
        json!({"total": 5, "succeeded": 2, "failed": 0, "halted": 1, "pending": 2}),
        "{answer:#}"
    );
    let directive = &answer["halted_at"]["result"]["data"];
    assert_eq!(
        (directive["continue"].clone(), directive["stopped"].clone()),
        (json!(false), json!(true)),
        "{directive}"
    );
    let challenge = notified_id(directive, "danger_zone", "verificationId");
    assert!(!human.code_for(&challenge).is_empty(), "a code went to the human, not the agent");
    assert!(
        !answer.to_string().contains(&human.code_for(&challenge)),
        "the code never reaches the agent"
    );
    let pending: Vec<i64> = answer["pending_operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["index"].as_i64().unwrap())
        .collect();
    assert_eq!(pending, [3, 4]);
    // The block holds for what comes next, batch or not.
    let again =
        batch(&mut raw, 2, "mcp_aql", json!([step_item("tester", "executing shell command: ls")]))
            .await;
    assert_eq!(again["halted_at"]["result"]["data"]["continue"], false, "{again}");
}

#[tokio::test]
async fn a_batch_that_is_not_one_runs_nothing() {
    let human = Setup::new(Answer::Approve, 300);
    let mut raw = human.start().await;
    assert_eq!(ask(&mut raw, execute(1, "coder")).await["success"], true);
    let cases = [
        json!({"operations": []}),
        json!({"operations": [step_item("coder", "executing shell command: ls"), {"params": {"element_name": "coder"}}]}),
        json!({"operations": [step_item("coder", "executing shell command: ls"), "record_execution_step"]}),
        json!({"operations": "record_execution_step"}),
        json!({"operations": [step_item("coder", "executing shell command: ls")], "operation": "record_execution_step"}),
        json!({"operations": [step_item("coder", "executing shell command: ls")], "fields": ["continue"]}),
    ];
    for (id, arguments) in (2..).zip(cases) {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "mcp_aql_create", "arguments": arguments}});
        let answer = ask(&mut raw, message).await;
        assert_valid(&batch_schema(), &answer);
        assert_eq!(answer["error"]["code"], "BATCH_VALIDATION_ERROR", "{arguments}: {answer}");
    }
    let state = ask(
        &mut raw,
        super::support::tool_call(
            9,
            "mcp_aql_read",
            "get_execution_state",
            json!({"element_name": "coder"}),
        ),
    )
    .await;
    assert_eq!(state["data"]["steps"], 0, "no item of a refused batch ran: {state}");
}

#[tokio::test]
async fn fields_trim_data_and_introspection_but_never_errors() {
    let client = stdio_client(&[]).await;
    let (started, _) = call(&client, "mcp_aql_execute", json!({"operation": "execute_agent", "params": {"element_name": "coder", "fields": ["status"]}})).await;
    assert_eq!(started["data"], json!({"status": "running"}), "{started}");
    let (directive, _) = call(&client, "mcp_aql_create", json!({"operation": "record_execution_step", "params": {"element_name": "coder", "nextActionHint": "executing shell command: ls"}, "fields": ["continue", "stepsRemaining"]})).await;
    assert_eq!(
        directive["data"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["continue", "stepsRemaining"],
        "{directive}"
    );

    let (failed, _) = call(&client, "mcp_aql_create", json!({"operation": "record_execution_step", "params": {"element_name": "coder", "fields": ["code"]}})).await;
    assert_valid(&operation_result_schema(), &failed);
    assert_eq!(
        (failed["error"]["code"].clone(), failed["error"]["details"]["param_name"].clone()),
        (json!("VALIDATION_MISSING_PARAM"), json!("next_action_hint")),
        "errors stay whole: {failed}"
    );
    assert!(failed["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    let (bad, _) = call(
        &client,
        "mcp_aql_read",
        json!({"operation": "introspect", "params": {"query": "types", "fields": "everything"}}),
    )
    .await;
    assert_eq!(
        (bad["error"]["code"].clone(), bad["error"]["details"]["param_name"].clone()),
        (json!("VALIDATION_INVALID_VALUE"), json!("fields")),
        "{bad}"
    );

    // Introspection keeps what its schema requires of each record, so a
    // selected answer validates like a whole one.
    let names = introspect(&client, json!({"query": "operations", "fields": ["name"]})).await;
    assert_valid(&introspection_schema(), &names);
    let operations = names["data"]["operations"].as_array().unwrap();
    assert!(
        operations.len() > 5
            && operations.iter().all(|op| op.as_object().is_some_and(|op| op.len() == 4
                && ["name", "semantic_category", "endpoint", "description"]
                    .iter()
                    .all(|key| op.contains_key(*key)))),
        "{names}"
    );
    assert_eq!(names["data"]["_protocol"]["version"], "1.0.0-draft", "metadata is never trimmed");
    let minimal = introspect(&client, json!({"query": "operations", "fields": "minimal"})).await;
    assert_eq!(minimal["data"]["operations"], names["data"]["operations"]);
    let full = introspect(&client, json!({"query": "operations", "fields": "full"})).await;
    assert_valid(&introspection_schema(), &full);
    let parameters = introspect(&client, json!({"query": "operations", "name": "record_execution_step", "fields": ["operation.parameters.description"]})).await;
    assert_valid(&introspection_schema(), &parameters);
    let listed: Vec<&str> = parameters["data"]["operation"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&"next_action_hint") && listed.contains(&"fields"),
        "fields is listed where it is accepted: {listed:?}"
    );
    let first = &parameters["data"]["operation"]["parameters"][0];
    assert!(
        first["description"].is_string()
            && first.get("enum").is_none()
            && first["type"] == "string",
        "{parameters}"
    );
    assert!(parameters["data"]["operation"].get("examples").is_none(), "{parameters}");
}

#[tokio::test]
async fn introspection_reports_the_loop_defaults_and_refuses_bad_paging() {
    let client = stdio_client(&[]).await;
    let listing = introspect(
        &client,
        json!({"query": "operations", "source": "builtin", "category": "EXECUTE"}),
    )
    .await;
    assert_valid(&introspection_schema(), &listing);
    let protocol = &listing["data"]["_protocol"];
    assert_eq!(protocol["conformance"], "level-2");
    for capability in
        ["batch", "field_selection", "pagination", "confirmation", "dangerous_operations"]
    {
        assert_eq!(protocol["capabilities"][capability], true, "{capability}");
    }
    let defaults = &protocol["safety_loop"];
    assert_eq!(
        (defaults["mode"].as_str(), defaults["risk_tolerance"].as_str()),
        (Some("enforcing"), Some("moderate")),
        "{defaults}"
    );
    assert!(
        defaults["max_autonomous_steps"].as_u64().is_some_and(|n| n > 0)
            && defaults["policy"].as_str().is_some_and(|h| h.len() == 64),
        "{defaults}"
    );
    let names: Vec<&str> = listing["data"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["abort_execution", "complete_execution", "confirm_operation", "execute_agent"]
    );
    assert_eq!(
        protocol["danger_levels"],
        json!([null, null, null, null]),
        "the loop's own operations have no danger level"
    );
    for (bad, code) in [
        (json!({"query": "operations", "first": 5, "last": 5}), "VALIDATION_INVALID_TYPE"),
        (json!({"query": "operations", "after": "introspect"}), "VALIDATION_INVALID_TYPE"),
        (json!({"query": "operations", "first": 0}), "VALIDATION_INVALID_VALUE"),
        (json!({"query": "operations", "source": "no-such-server"}), "VALIDATION_INVALID_VALUE"),
        (json!({"query": "operations", "name_pattern": "[unclosed"}), "VALIDATION_INVALID_VALUE"),
        (json!({"query": "types", "first": 5}), "VALIDATION_INVALID_VALUE"),
        (json!({"query": "operations", "category": "SOMETHING"}), "VALIDATION_INVALID_VALUE"),
    ] {
        let (answer, _) = call(
            &client,
            "mcp_aql_read",
            json!({"operation": "introspect", "params": bad.clone()}),
        )
        .await;
        assert_eq!(answer["error"]["code"], code, "{bad}: {answer}");
    }
}

#[tokio::test]
async fn a_tool_prefix_renames_every_tool_and_what_names_them() {
    let (first, second) = tokio::join!(
        stdio_client_with_env(
            &["serve", "--endpoints", "all"],
            &[("MCP_AQL_TOOL_PREFIX", "work_")]
        ),
        stdio_client_with_env(&["serve"], &[("MCP_AQL_TOOL_PREFIX", "home_")]),
    );
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools.into_iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
    };
    let work = names(first.list_all_tools().await.unwrap());
    let home = names(second.list_all_tools().await.unwrap());
    assert_eq!(
        work,
        [
            "work_mcp_aql_create",
            "work_mcp_aql_read",
            "work_mcp_aql_update",
            "work_mcp_aql_delete",
            "work_mcp_aql_execute",
            "work_mcp_aql"
        ]
    );
    assert!(
        home.iter().all(|name| name.starts_with("home_mcp_aql_")) && home.len() == 5,
        "{home:?}"
    );
    let instructions =
        first.peer_info().and_then(|info| info.instructions.clone()).unwrap_or_default();
    assert!(
        instructions.contains("(work_mcp_aql_create,") && !instructions.contains(" mcp_aql_"),
        "{instructions}"
    );

    let (details, _) = call(&first, "work_mcp_aql_read", json!({"operation": "introspect", "params": {"query": "operations", "name": "verify_challenge"}})).await;
    assert_eq!(details["data"]["operation"]["mcpTool"], "work_mcp_aql_create", "{details}");
    let (mismatch, _) = call(
        &first,
        "work_mcp_aql_read",
        json!({"operation": "execute_agent", "params": {"element_name": "a"}}),
    )
    .await;
    assert_eq!(
        (
            mismatch["error"]["details"]["expected_endpoint"].as_str(),
            mismatch["error"]["details"]["actual_endpoint"].as_str()
        ),
        (Some("work_mcp_aql_execute"), Some("work_mcp_aql_read")),
        "{mismatch}"
    );
    let arguments =
        json!({"operation": "introspect", "params": {"query": "types"}}).as_object().cloned();
    let unprefixed = first
        .call_tool(
            rmcp::model::CallToolRequestParams::new("mcp_aql_read")
                .with_arguments(arguments.unwrap()),
        )
        .await;
    assert!(
        unprefixed.is_err_and(|e| e.to_string().contains("work_mcp_aql_read")),
        "an unprefixed name is an unknown tool"
    );

    let refused = super::support::dongle_command(&["serve"])
        .env("MCP_AQL_TOOL_PREFIX", "Work-")
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr)
            .contains("MCP_AQL_TOOL_PREFIX: tool prefix 'Work-' must be"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
