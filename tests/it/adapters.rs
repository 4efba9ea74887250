//! Adapter files end to end: the real binary loads `*-adapter.md` files
//! from its adapters folder and calls a real HTTP API started here on
//! 127.0.0.1 (`upstream`), with the real verifier and a scripted human for
//! approvals. Every row of the status mapping, the malformed answers of
//! seed 000 7.3, path encoding, auth, retries, timeouts, the size limit,
//! pagination, rate limits, the trust matrix and the gate.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use super::{
    humans::{Answer, Setup},
    support::{
        Client, assert_valid, call, introspect, introspection_schema, stdio_client_with_env,
    },
    upstream::Upstream,
};

fn test_adapter(base_url: &str, extra_target: &str, header: &str) -> String {
    format!(
        r#"---
name: test-api
type: adapter
version: "1.0.0"
description: "The upstream these tests start"
{header}
target:
  base_url: "{base_url}"
  transport: http
  protocol: rest
  serialization: json
  timeout_secs: 1
  max_retries: 2
  retry_base_ms: 50
  max_response_bytes: 1048576
{extra_target}
operations:
  read:
    - name: get_status
      maps_to: "GET /status/{{code}}"
      params:
        code: {{type: integer, required: true}}
    - {{name: get_html, maps_to: "GET /html"}}
    - {{name: get_truncated, maps_to: "GET /truncated"}}
    - {{name: get_bom, maps_to: "GET /bom"}}
    - {{name: get_empty, maps_to: "GET /empty"}}
    - {{name: get_binary, maps_to: "GET /binary"}}
    - {{name: get_big, maps_to: "GET /big"}}
    - {{name: get_slow, maps_to: "GET /slow"}}
    - name: get_flaky
      maps_to: "GET /flaky/{{id}}"
      params:
        id: {{type: string, required: true}}
        fail: {{type: integer}}
        retry_after: {{type: string}}
    - name: echo_path
      maps_to: "GET /echo/{{value}}"
      description: "Echoes the request"
      params:
        value: {{type: any, required: true, description: "Goes into the path"}}
        filter: {{type: string, enum: [open, closed], default: open}}
        page_size: {{type: integer, wire_name: pageSize}}
        trace: {{type: string, in: header, wire_name: X-Trace}}
    - name: list_linked
      maps_to: "GET /pages/link"
      pagination: {{style: link_header}}
    - name: list_elsewhere
      maps_to: "GET /pages/elsewhere"
      pagination: {{style: link_header}}
    - name: list_cursor
      maps_to: "GET /pages/cursor"
      pagination: {{style: cursor, cursor_param: cursor, next_cursor_field: meta.next, items_field: data}}
    - name: list_offset
      maps_to: "GET /pages/offset"
      params:
        limit: {{type: integer, default: 2}}
      pagination: {{style: offset, items_field: items, max_pages: 5}}
  create:
    - name: create_item
      maps_to: "POST /items"
      params:
        title: {{type: string, required: true}}
        tags: {{type: array}}
        dry_run: {{type: boolean, in: query}}
    - name: post_flaky
      maps_to: "POST /flaky/{{id}}"
      params:
        id: {{type: string, required: true}}
  execute:
    - {{name: force_sync, maps_to: "POST /sync?force=true"}}
    - {{name: force_refresh, maps_to: "POST /refresh", danger: {{level: safe, reasons: ["only skips a cache"]}}}}
  delete:
    - name: delete_item
      maps_to: "DELETE /items/{{id}}"
      params:
        id: {{type: string, required: true}}
---

# Test API

Documentation body.
"#
    )
}

fn auth_adapter(name: &str, base_url: &str, auth: &str) -> String {
    format!(
        "---\nname: {name}\ntype: adapter\nversion: \"1.0.0\"\ndescription: \"auth test\"\ntarget:\n  base_url: \"{base_url}\"\n  transport: http\n  protocol: rest\n  serialization: json\nauth:\n{auth}\noperations:\n  read:\n    - {{name: whoami, maps_to: \"GET /whoami\"}}\n---\n"
    )
}

struct Harness {
    setup: Setup,
    upstream: Upstream,
    client: Client,
}

/// A dongle with `adapters` (file name, text) in its adapters folder,
/// `policy_lines` prepended to its config.
async fn start(
    answer: Answer,
    adapters: &[(&str, String)],
    policy_lines: &str,
    env: &[(&str, &str)],
) -> Harness {
    let upstream = Upstream::start().await;
    let setup = Setup::new(answer, 300);
    configure(&setup, &upstream, adapters, policy_lines);
    let client =
        stdio_client_with_env(&["serve", "--config", setup.config.to_str().unwrap()], env).await;
    Harness { setup, upstream, client }
}

/// Writes `adapters` (their `BASE_URL` the upstream's) into the setup's
/// adapters folder and names it in its config.
fn configure(setup: &Setup, upstream: &Upstream, adapters: &[(&str, String)], policy_lines: &str) {
    let folder = setup.dir.join("adapters");
    std::fs::create_dir_all(&folder).unwrap();
    for (file, text) in adapters {
        std::fs::write(folder.join(file), text.replace("BASE_URL", &upstream.base_url())).unwrap();
    }
    let base = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(
        &setup.config,
        format!("adapters = [\"{}\"]\n{policy_lines}{base}", folder.display()),
    )
    .unwrap();
}

/// The test adapter, declaring an API limit well above what a test sends.
async fn standard(answer: Answer) -> Harness {
    start(
        answer,
        &[(
            "test-api-adapter.md",
            test_adapter("BASE_URL", "", "rate_limits:\n  requests_per_minute: 1000"),
        )],
        "",
        &[],
    )
    .await
}

async fn op(client: &Client, tool: &str, name: &str, params: Value) -> Value {
    call(client, tool, json!({ "operation": name, "params": params })).await.0
}

async fn read(h: &Harness, name: &str, params: Value) -> Value {
    op(&h.client, "mcp_aql_read", name, params).await
}

fn code(envelope: &Value) -> &str {
    envelope["error"]["code"].as_str().unwrap_or("(success)")
}

#[tokio::test]
async fn every_row_of_the_status_mapping() {
    let h = standard(Answer::Approve).await;
    let rows = [
        (400, "VALIDATION_INVALID_TYPE", "Invalid request"),
        (401, "PERMISSION_DENIED", "Authentication required"),
        (403, "PERMISSION_DENIED", "Permission denied"),
        (404, "NOT_FOUND_RESOURCE", "Not found"),
        (409, "CONFLICT_ALREADY_EXISTS", "Conflict"),
        (422, "VALIDATION_INVALID_TYPE", "Validation failed"),
        (429, "RATE_LIMIT_EXCEEDED", "Rate limit exceeded"),
        (500, "INTERNAL_ERROR", "Server error"),
        (502, "INTERNAL_ERROR", "Bad gateway"),
        (503, "INTERNAL_ERROR", "Service unavailable"),
        (504, "INTERNAL_ERROR", "Gateway timeout"),
    ];
    for (status, expected, label) in rows {
        let answer = read(&h, "test_api__get_status", json!({"code": status})).await;
        assert_eq!(code(&answer), expected, "HTTP {status}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(label) && message.contains(&format!("upstream says {status}")),
            "HTTP {status}: {message}"
        );
        let details = &answer["error"]["details"];
        assert_eq!(
            (&details["http_status"], &details["upstream_error"]),
            (&json!(status), &json!(format!("upstream says {status}"))),
            "{answer}"
        );
        if status == 429 {
            // The upstream's Retry-After, and the adapter's declared limit.
            assert_eq!(
                (
                    &details["limit"],
                    &details["window"],
                    &details["remaining"],
                    &details["retry_after_seconds"]
                ),
                (&json!(1000), &json!("minute"), &json!(0), &json!(0)),
                "{answer}"
            );
        }
    }
    // 429 and 502-504 are retried (GET is idempotent): 1 + 2 retries each.
    let attempts = |status: u16| {
        h.upstream.seen().iter().filter(|s| s.path == format!("/v1/status/{status}")).count()
    };
    assert_eq!((attempts(404), attempts(500), attempts(429), attempts(503)), (1, 1, 3, 3));
    let ok = read(&h, "test_api__get_status", json!({"code": 200})).await;
    assert_eq!(ok, json!({"success": true, "data": {"message": "upstream says 200"}}));
}

#[tokio::test]
async fn malformed_answers_become_parse_errors_with_a_preview() {
    let h = standard(Answer::Approve).await;
    let html = read(&h, "test_api__get_html", json!({})).await;
    assert_eq!(code(&html), "SERIALIZATION_PARSE_ERROR", "{html}");
    assert!(
        html["error"]["message"].as_str().unwrap().contains("HTML instead of JSON (HTTP 502)"),
        "{html}"
    );
    let preview = html["error"]["details"]["body_preview"].as_str().unwrap();
    assert!(
        preview.starts_with("<html><head><title>502 Bad Gateway") && preview.chars().count() == 200,
        "{preview}"
    );

    let truncated = read(&h, "test_api__get_truncated", json!({})).await;
    assert_eq!(code(&truncated), "SERIALIZATION_PARSE_ERROR");
    assert_eq!(truncated["error"]["details"]["body_preview"], "{\"items\": [1, 2");

    let binary = read(&h, "test_api__get_binary", json!({})).await;
    assert_eq!(code(&binary), "SERIALIZATION_PARSE_ERROR");
    assert!(
        binary["error"]["message"].as_str().unwrap().contains("application/octet-stream"),
        "{binary}"
    );

    assert_eq!(
        read(&h, "test_api__get_bom", json!({})).await,
        json!({"success": true, "data": {"ok": true}})
    );
    assert_eq!(
        read(&h, "test_api__get_empty", json!({})).await,
        json!({"success": true, "data": null})
    );
}

#[tokio::test]
async fn path_values_are_encoded_once_and_the_rest_goes_where_declared() {
    let h = standard(Answer::Approve).await;
    let rows = [
        (json!("hello world"), "/v1/echo/hello%20world"),
        (json!("user@example.com"), "/v1/echo/user%40example.com"),
        (json!("path/to/file"), "/v1/echo/path%2Fto%2Ffile"),
        (json!("名前"), "/v1/echo/%E5%90%8D%E5%89%8D"),
        (json!("hello%20world"), "/v1/echo/hello%20world"),
        (json!("100%"), "/v1/echo/100%25"),
        (json!([1, 2, 3]), "/v1/echo/1%2C2%2C3"),
        (json!(42), "/v1/echo/42"),
        (json!(""), "/v1/echo/"),
    ];
    for (value, expected) in rows {
        let answer = read(&h, "test_api__echo_path", json!({"value": value})).await;
        assert_eq!(answer["data"]["path"], expected, "{value}: {answer}");
    }
    // Leftovers go to the query under their wire names; defaults apply;
    // headers carry their wire names.
    let answer =
        read(&h, "test_api__echo_path", json!({"value": "x", "page_size": 5, "trace": "t-1"}))
            .await;
    assert_eq!(answer["data"]["query"], "filter=open&pageSize=5", "{answer}");
    assert_eq!(h.upstream.seen().last().unwrap().header("x-trace").as_deref(), Some("t-1"));

    // Null bytes and header line breaks are refused before anything leaves.
    let before = h.upstream.seen().len();
    let nul = read(&h, "test_api__echo_path", json!({"value": "a\u{0}b"})).await;
    assert_eq!(code(&nul), "VALIDATION_INVALID_ENCODING", "{nul}");
    let split =
        read(&h, "test_api__echo_path", json!({"value": "a", "trace": "x\r\nX-Injected: 1"})).await;
    assert_eq!(code(&split), "VALIDATION_INVALID_VALUE", "{split}");
    let object = read(&h, "test_api__echo_path", json!({"value": {"a": 1}})).await;
    assert_eq!(code(&object), "VALIDATION_INVALID_VALUE", "{object}");
    // Dot segments would move the request to another resource with the
    // adapter's credentials: refused however they are written.
    for dotted in ["..", ".", "../../../etc/passwd", "%2e%2e", ".%2E", "..%2Fadmin", "a/../b"] {
        let answer = read(&h, "test_api__echo_path", json!({"value": dotted})).await;
        assert_eq!(code(&answer), "VALIDATION_INVALID_VALUE", "{dotted}: {answer}");
    }
    assert_eq!(h.upstream.seen().len(), before, "no refused request reached the server");
    for (plain, expected) in
        [("v1.2", "/v1/echo/v1.2"), ("a..b", "/v1/echo/a..b"), (".hidden", "/v1/echo/.hidden")]
    {
        let answer = read(&h, "test_api__echo_path", json!({"value": plain})).await;
        assert_eq!(answer["data"]["path"], expected, "{plain}: {answer}");
    }
}

#[tokio::test]
async fn auth_comes_from_the_environment_and_is_never_echoed() {
    let adapters = [
        (
            "bearer-api-adapter.md",
            auth_adapter(
                "bearer-api",
                "BASE_URL",
                "  type: bearer\n  token_env: TEST_BEARER_TOKEN",
            ),
        ),
        (
            "key-api-adapter.md",
            auth_adapter(
                "key-api",
                "BASE_URL",
                "  type: api_key\n  header_name: X-API-Key\n  key_env: TEST_API_KEY",
            ),
        ),
        (
            "query-api-adapter.md",
            auth_adapter(
                "query-api",
                "BASE_URL",
                "  type: api_key\n  query_param: api_key\n  key_env: TEST_API_KEY",
            ),
        ),
        (
            "basic-api-adapter.md",
            auth_adapter(
                "basic-api",
                "BASE_URL",
                "  type: basic\n  username_env: TEST_USER\n  password_env: TEST_PASSWORD",
            ),
        ),
        (
            "missing-api-adapter.md",
            auth_adapter("missing-api", "BASE_URL", "  type: bearer\n  token_env: TEST_NOT_SET"),
        ),
    ];
    let env = [
        ("TEST_BEARER_TOKEN", "bearer-s3cret"),
        ("TEST_API_KEY", "key-s3cret"),
        ("TEST_USER", "alice"),
        ("TEST_PASSWORD", "pw-s3cret"),
    ];
    let h = start(Answer::Approve, &adapters, "", &env).await;
    let mut answers = String::new();
    for operation in
        ["bearer_api__whoami", "key_api__whoami", "query_api__whoami", "basic_api__whoami"]
    {
        let answer = read(&h, operation, json!({})).await;
        assert_eq!(answer["success"], true, "{operation}: {answer}");
        answers.push_str(&answer.to_string());
    }
    let seen = h.upstream.seen();
    assert_eq!(seen[0].header("authorization").as_deref(), Some("Bearer bearer-s3cret"));
    assert_eq!(seen[1].header("x-api-key").as_deref(), Some("key-s3cret"));
    assert_eq!(seen[2].query.as_deref(), Some("api_key=key-s3cret"));
    assert_eq!(seen[3].header("authorization").as_deref(), Some("Basic YWxpY2U6cHctczNjcmV0"));

    let missing = read(&h, "missing_api__whoami", json!({})).await;
    assert_eq!(code(&missing), "AUTH_CREDENTIAL_MISSING", "{missing}");
    assert!(missing["error"]["message"].as_str().unwrap().contains("TEST_NOT_SET"));
    assert_eq!(h.upstream.seen().len(), 4, "no request without its credential");

    // The echo of the query-key call carries the query the server saw; the
    // dongle's own words (errors included) never carry a secret.
    let error_text = missing.to_string();
    for secret in ["bearer-s3cret", "pw-s3cret"] {
        assert!(!answers.contains(secret) && !error_text.contains(secret), "{secret} leaked");
    }
}

#[tokio::test]
async fn idempotent_calls_are_retried_with_backoff_and_retry_after() {
    let h = standard(Answer::Approve).await;
    let started = Instant::now();
    let answer = read(&h, "test_api__get_flaky", json!({"id": "a", "fail": 2})).await;
    assert_eq!(answer["data"]["attempts"], 3, "{answer}");
    // Backoff 50 ms then 100 ms, each scaled by a jitter in [0.5, 1].
    assert!(started.elapsed() >= Duration::from_millis(75), "{:?}", started.elapsed());

    let started = Instant::now();
    let answer =
        read(&h, "test_api__get_flaky", json!({"id": "b", "fail": 1, "retry_after": "1"})).await;
    assert_eq!(answer["data"]["attempts"], 2, "{answer}");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After: 1 was honoured ({:?})",
        started.elapsed()
    );

    let exhausted = read(&h, "test_api__get_flaky", json!({"id": "c", "fail": 5})).await;
    assert_eq!(code(&exhausted), "INTERNAL_ERROR");
    assert_eq!(h.upstream.count("/v1/flaky/c"), 3, "one try and max_retries = 2");

    // POST is not idempotent: one attempt, whatever the answer.
    let posted = op(&h.client, "mcp_aql_create", "test_api__post_flaky", json!({"id": "d"})).await;
    assert_eq!(code(&posted), "INTERNAL_ERROR", "{posted}");
    assert_eq!(h.upstream.count("/v1/flaky/d"), 1);
}

#[tokio::test]
async fn timeouts_refused_connections_and_oversized_answers() {
    let h = standard(Answer::Approve).await;
    let slow = read(&h, "test_api__get_slow", json!({})).await;
    assert_eq!(code(&slow), "TRANSPORT_TIMEOUT", "{slow}");
    assert!(
        slow["error"]["message"].as_str().unwrap().contains("timed out after 1000ms"),
        "{slow}"
    );

    let big = read(&h, "test_api__get_big", json!({})).await;
    assert_eq!(code(&big), "VALIDATION_PAYLOAD_TOO_LARGE", "{big}");
    let details = &big["error"]["details"];
    assert_eq!(
        (&details["limit_type"], &details["limit_value"], &details["unit"], &details["adapter"]),
        (&json!("response_size"), &json!(1_048_576), &json!("bytes"), &json!("test-api")),
        "{big}"
    );
    assert!(details["actual_value"].as_u64().unwrap() > 1_048_576, "{big}");

    // Nothing listens on the port of a server that was never started.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let refused_adapter = test_adapter(&format!("http://127.0.0.1:{port}"), "", "")
        .replace("name: test-api", "name: gone-api");
    let g = start(Answer::Approve, &[("gone-api-adapter.md", refused_adapter)], "", &[]).await;
    let refused = read(&g, "gone_api__get_bom", json!({})).await;
    assert_eq!(code(&refused), "TRANSPORT_CONNECTION_REFUSED", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains(&format!("127.0.0.1:{port}")));
}

/// A client that cancels a call makes the dongle drop the request: the
/// upstream sees its connection go before it answers (after 3 s), though
/// the adapter's timeout is far later, so only the cancel can have
/// dropped it; no retry follows.
#[tokio::test]
async fn a_cancelled_call_is_dropped_upstream_and_not_retried() {
    use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
    use rmcp::service::PeerRequestOptions;
    let patient =
        test_adapter("BASE_URL", "", "").replace("timeout_secs: 1\n", "timeout_secs: 60\n");
    let h = start(Answer::Approve, &[("test-api-adapter.md", patient)], "", &[]).await;
    let Value::Object(arguments) = json!({"operation": "test_api__get_slow", "params": {}}) else {
        unreachable!()
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("mcp_aql_read").with_arguments(arguments),
    ));
    let handle =
        h.client.send_request_with_option(request, PeerRequestOptions::no_options()).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while h.upstream.count("/v1/slow") == 0 {
        assert!(Instant::now() < deadline, "the request never reached the upstream");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    handle.cancel(Some("the test gave up".into())).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let lifetimes = loop {
        let lifetimes = h.upstream.slow_lifetimes();
        if !lifetimes.is_empty() || Instant::now() > deadline {
            break lifetimes;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(lifetimes.len(), 1, "{lifetimes:?}");
    assert!(!lifetimes[0].1, "dropped by the cancel, before the upstream answered: {lifetimes:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(h.upstream.count("/v1/slow"), 1, "a cancelled call is not retried");
    // The dongle goes on serving.
    assert_eq!(read(&h, "test_api__get_bom", json!({})).await["success"], true);
}

#[tokio::test]
async fn pagination_by_link_header_cursor_and_offset() {
    let h = standard(Answer::Approve).await;
    let first = read(&h, "test_api__list_linked", json!({})).await;
    assert_eq!(
        first["data"],
        json!(["item-1a", "item-1b"]),
        "without all_pages one page comes back as it is"
    );
    let all = read(&h, "test_api__list_linked", json!({"all_pages": true})).await;
    assert_eq!(
        all["data"],
        json!({"items": ["item-1a", "item-1b", "item-2a", "item-2b", "item-3a", "item-3b"], "pages": 3, "complete": true})
    );
    let capped =
        read(&h, "test_api__list_linked", json!({"all_pages": true, "page_limit": 2})).await;
    assert_eq!(capped["data"]["complete"], false);
    assert_eq!(capped["warnings"][0]["code"], "PAGINATION_INCOMPLETE", "{capped}");

    let cursor = read(&h, "test_api__list_cursor", json!({"all_pages": true})).await;
    assert_eq!(cursor["data"], json!({"items": [1, 2, 3, 4, 5], "pages": 3, "complete": true}));
    let offset = read(&h, "test_api__list_offset", json!({"all_pages": true})).await;
    assert_eq!(offset["data"], json!({"items": [0, 1, 2, 3, 4], "pages": 3, "complete": true}));
    let queries: Vec<String> = h
        .upstream
        .seen()
        .iter()
        .filter(|s| s.path == "/v1/pages/offset")
        .filter_map(|s| s.query.clone())
        .collect();
    assert_eq!(queries, ["limit=2", "limit=2&offset=2", "limit=2&offset=4"]);

    // A next link to another origin is not followed: credentials stay home.
    let elsewhere = read(&h, "test_api__list_elsewhere", json!({"all_pages": true})).await;
    assert_eq!(elsewhere["data"], json!({"items": ["a"], "pages": 1, "complete": true}));
    let too_many =
        read(&h, "test_api__list_offset", json!({"all_pages": true, "page_limit": 6})).await;
    assert_eq!(code(&too_many), "VALIDATION_INVALID_VALUE", "{too_many}");
}

#[tokio::test]
async fn a_deny_rule_stops_a_call_before_any_byte_reaches_the_server() {
    let setup_policy = |dir: &Path| {
        let policy = dir.join("no-deletes.toml");
        std::fs::write(&policy, "[defaults]\ndeny = [\"test_api__delete_item*\"]\n").unwrap();
        let default_policy =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("policies/default.toml");
        format!("policies = [\"{}\", \"{}\"]\n", default_policy.display(), policy.display())
    };
    let scratch = super::support::scratch_dir();
    let policies = setup_policy(&scratch);
    let h = start(
        Answer::Approve,
        &[("test-api-adapter.md", test_adapter("BASE_URL", "", ""))],
        &policies,
        &[],
    )
    .await;
    let refused =
        op(&h.client, "mcp_aql_delete", "test_api__delete_item", json!({"id": "42"})).await;
    assert_eq!(code(&refused), "PERMISSION_DENIED", "{refused}");
    assert!(
        refused["error"]["details"]["factors"].to_string().contains("test_api__delete_item*"),
        "{refused}"
    );
    assert!(h.upstream.seen().is_empty(), "the server received nothing");
    // The agent is hard-blocked now, reads included.
    let blocked = read(&h, "test_api__get_bom", json!({})).await;
    assert!(blocked["error"]["message"].as_str().unwrap().contains("hard-blocked"), "{blocked}");
    assert!(h.upstream.seen().is_empty());
}

#[tokio::test]
async fn a_confirmation_token_is_single_use_and_bound_to_its_parameters() {
    let h = standard(Answer::Approve).await;
    let asked = op(&h.client, "mcp_aql_delete", "test_api__delete_item", json!({"id": "42"})).await;
    assert_eq!(code(&asked), "CONFIRMATION_REQUIRED", "{asked}");
    let details = &asked["error"]["details"];
    assert_eq!(details["danger_level"], "destructive");
    let token = details["confirmation_token"].as_str().unwrap().to_owned();
    assert!(token.starts_with("conf_"));
    let shown = h.setup.shown(details["approval_id"].as_str().unwrap());
    assert_eq!(shown["action"], "test_api__delete_item {\"id\":\"42\"}");
    assert!(h.upstream.seen().is_empty(), "nothing before the human approved");

    let other = op(
        &h.client,
        "mcp_aql_delete",
        "test_api__delete_item",
        json!({"id": "43", "_confirmation": token}),
    )
    .await;
    assert_eq!(code(&other), "TOKEN_SCOPE_MISMATCH", "{other}");
    let done = op(
        &h.client,
        "mcp_aql_delete",
        "test_api__delete_item",
        json!({"id": "42", "confirmation_token": token}),
    )
    .await;
    assert_eq!(done["success"], true, "{done}");
    let again = op(
        &h.client,
        "mcp_aql_delete",
        "test_api__delete_item",
        json!({"id": "42", "confirmation_token": token}),
    )
    .await;
    assert_eq!(code(&again), "TOKEN_ALREADY_USED", "{again}");
    let deletes: Vec<_> =
        h.upstream.seen().into_iter().filter(|s| s.method == "DELETE").map(|s| s.path).collect();
    assert_eq!(deletes, ["/v1/items/42"], "exactly the approved call reached the server");

    // Every call is audited: the gate's decisions, and the one call that
    // went out with its outcome (written just after the answer).
    let audit = |args: &[&str]| {
        let output = Command::new(super::support::binary())
            .arg("audit")
            .args(args)
            .args(["--config", h.setup.config.to_str().unwrap()])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    let calls = loop {
        let rows = audit(&[]);
        let calls: Vec<String> = rows
            .lines()
            .filter(|l| l.contains(" call ") && l.contains("test_api__delete_item"))
            .map(str::to_owned)
            .collect();
        if !calls.is_empty() || Instant::now() > deadline {
            assert!(
                rows.lines()
                    .filter(|l| l.contains(" gate ") && l.contains("test_api__delete_item"))
                    .count()
                    >= 2,
                "{rows}"
            );
            break calls;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert!(calls[0].contains("  call  ok"), "{calls:?}");
    assert!(audit(&["verify"]).contains("audit chain ok"));
}

#[tokio::test]
async fn dangerous_operations_are_refused_unless_their_danger_is_declared_lower() {
    let h = standard(Answer::Approve).await;
    let refused = op(&h.client, "mcp_aql_execute", "test_api__force_sync", json!({})).await;
    assert_eq!(code(&refused), "PERMISSION_DENIED", "{refused}");
    assert!(
        refused["error"]["details"]["reason"].as_str().unwrap().contains("verify tier"),
        "{refused}"
    );
    // Refused, not blocked: the agent goes on, and a `force_` operation
    // its adapter declares safe passes without a human.
    let declared = op(&h.client, "mcp_aql_execute", "test_api__force_refresh", json!({})).await;
    assert_eq!(declared["success"], true, "{declared}");
    let paths: Vec<String> =
        h.upstream.seen().into_iter().map(|s| format!("{} {}", s.method, s.path)).collect();
    assert_eq!(paths, ["POST /v1/refresh"]);
    let listing =
        introspect(&h.client, json!({"query": "operations", "name": "test_api__force_sync"})).await;
    assert!(listing["data"].to_string().contains("danger_level: dangerous"));
}

#[tokio::test]
async fn the_trust_matrix_gates_adapters_that_declare_a_trust_level() {
    let generated =
        test_adapter("BASE_URL", "", "trust:\n  level: generated\n  generated_by: a test");
    let h = start(Answer::Approve, &[("test-api-adapter.md", generated)], "", &[]).await;
    assert_eq!(
        read(&h, "test_api__get_bom", json!({})).await["success"],
        true,
        "safe operations pass at 'generated'"
    );
    let denied =
        op(&h.client, "mcp_aql_create", "test_api__create_item", json!({"title": "t"})).await;
    assert_eq!(code(&denied), "PERMISSION_DANGER_LEVEL_DENIED", "{denied}");
    assert_eq!(denied["error"]["details"]["minimum_trust_required"], "validated");
    assert_eq!(h.upstream.seen().len(), 1, "the denied call never left");

    let validated = test_adapter("BASE_URL", "", "trust:\n  level: validated");
    let v = start(Answer::Approve, &[("test-api-adapter.md", validated)], "", &[]).await;
    let created = op(
        &v.client,
        "mcp_aql_create",
        "test_api__create_item",
        json!({"title": "t", "tags": ["a", "b"], "dry_run": true}),
    )
    .await;
    assert_eq!(created["success"], true, "{created}");
    let seen = v.upstream.seen();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str(), seen[0].query.as_deref()),
        ("POST", "/v1/items", Some("dry_run=true"))
    );
    assert_eq!(
        seen[0].json(),
        json!({"title": "t", "tags": ["a", "b"]}),
        "leftovers travel in the JSON body"
    );
    // Destructive at 'validated' is a confirm cell: a human is asked.
    let asked = op(&v.client, "mcp_aql_delete", "test_api__delete_item", json!({"id": "1"})).await;
    assert_eq!(code(&asked), "CONFIRMATION_REQUIRED", "{asked}");
    assert!(
        asked["error"]["details"]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("trust level 'validated'"),
        "{asked}"
    );
}

#[tokio::test]
async fn rate_limit_quotas_warn_then_stop() {
    let limited = test_adapter(
        "BASE_URL",
        "",
        "rate_limits:\n  quotas:\n    limits:\n      - {metric: requests_per_minute, warn: 2, hard_stop: 3}",
    );
    let h = start(Answer::Approve, &[("test-api-adapter.md", limited)], "", &[]).await;
    let first = read(&h, "test_api__get_bom", json!({})).await;
    assert!(first.get("warnings").is_none(), "{first}");
    let second = read(&h, "test_api__get_bom", json!({})).await;
    assert_eq!(second["warnings"][0]["code"], "RATE_LIMIT_QUOTA_WARNING", "{second}");
    assert_valid(&super::support::operation_result_schema(), &second);
    assert_eq!(read(&h, "test_api__get_bom", json!({})).await["success"], true);
    let stopped = read(&h, "test_api__get_bom", json!({})).await;
    assert_eq!(code(&stopped), "RATE_LIMIT_QUOTA_EXHAUSTED", "{stopped}");
    let details = &stopped["error"]["details"];
    assert_eq!(
        (&details["metric"], &details["current"], &details["hard_stop_threshold"]),
        (&json!("requests_per_minute"), &json!(3), &json!(3)),
        "{stopped}"
    );
    assert!(details["resets_at"].is_string() && details.get("limit").is_none(), "{stopped}");
    assert_eq!(h.upstream.seen().len(), 3, "the hard stop refused before sending");
}

/// An API limit the next request would pass refuses it before it leaves,
/// with the details `error-codes.md` 5.5 names.
#[tokio::test]
async fn api_limits_refuse_before_sending_with_the_limit_and_the_wait() {
    let limited = test_adapter("BASE_URL", "", "rate_limits:\n  requests_per_hour: 2");
    let h = start(Answer::Approve, &[("test-api-adapter.md", limited)], "", &[]).await;
    for _ in 0..2 {
        assert_eq!(read(&h, "test_api__get_bom", json!({})).await["success"], true);
    }
    let refused = read(&h, "test_api__get_bom", json!({})).await;
    assert_eq!(code(&refused), "RATE_LIMIT_EXCEEDED", "{refused}");
    let details = &refused["error"]["details"];
    assert_eq!(
        (&details["limit"], &details["remaining"], &details["window"]),
        (&json!(2), &json!(0), &json!("hour")),
        "{refused}"
    );
    let wait = details["retry_after_seconds"].as_u64().unwrap();
    assert!((3_500..=3_600).contains(&wait), "about an hour: {refused}");
    let resets_at = humantime::parse_rfc3339(details["resets_at"].as_str().unwrap()).unwrap();
    let from_now = resets_at.duration_since(std::time::SystemTime::now()).unwrap().as_secs();
    assert!(from_now.abs_diff(wait) <= 60, "resets_at is retry_after_seconds from now: {refused}");
    assert_eq!(h.upstream.seen().len(), 2, "the refused request never left");
}

/// Each adapter call is logged with its start, end, duration and outcome
/// (a retry at warn, a failure at error), and no argument value reaches
/// the log, whatever the level.
#[tokio::test]
async fn adapter_calls_are_logged_without_their_arguments_even_at_trace() {
    const SECRET: &str = "sk-live-adapter-argument-3c7e";
    let upstream = Upstream::start().await;
    let setup = Setup::new(Answer::Approve, 300);
    configure(&setup, &upstream, &[("test-api-adapter.md", test_adapter("BASE_URL", "", ""))], "");
    let mut raw = setup.start_with_env(&[("SAFETY_DONGLE_LOG", "trace")]).await;
    let stderr = raw.collect_stderr();
    let calls = [
        ("test_api__echo_path", json!({"value": SECRET, "trace": SECRET})),
        ("test_api__get_flaky", json!({"id": SECRET, "fail": 1})),
        ("test_api__get_status", json!({"code": 404})),
    ];
    for (id, (operation, params)) in (1..).zip(calls) {
        let envelope = super::support::ask(
            &mut raw,
            super::support::tool_call(id, "mcp_aql_read", operation, params),
        )
        .await;
        assert_eq!(envelope["success"], operation != "test_api__get_status", "{envelope}");
    }
    assert!(
        upstream.seen().iter().any(|seen| seen.header("x-trace").as_deref() == Some(SECRET)),
        "the value did travel"
    );
    let log = stderr.everything(&mut raw).await;
    assert!(!log.contains(SECRET), "an argument value reached the log:\n{log}");
    let line = |level: &str, message: &str, operation: &str| {
        log.lines().any(|l| {
            l.contains(&format!(" {level} "))
                && l.contains(message)
                && l.contains(&format!("operation=\"{operation}\""))
                && (message.starts_with("retrying") || l.contains("source=\"test-api\""))
        })
    };
    assert!(
        line("DEBUG", "upstream call started", "test_api__echo_path")
            && line("DEBUG", "upstream call ended", "test_api__echo_path"),
        "{log}"
    );
    assert!(
        line("WARN", "retrying an upstream call", "test_api__get_flaky")
            && line("DEBUG", "upstream call ended", "test_api__get_flaky"),
        "{log}"
    );
    assert!(line("ERROR", "upstream call failed", "test_api__get_status"), "{log}");
}

#[tokio::test]
async fn introspection_lists_adapter_operations_with_their_parameters() {
    let h = standard(Answer::Approve).await;
    let listing = introspect(&h.client, json!({"query": "operations"})).await;
    assert_valid(&introspection_schema(), &listing);
    let names: Vec<&str> = listing["data"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["name"].as_str())
        .collect();
    for expected in [
        "test_api__get_status",
        "test_api__echo_path",
        "test_api__create_item",
        "test_api__delete_item",
    ] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    let detail =
        introspect(&h.client, json!({"query": "operations", "name": "test_api__echo_path"})).await;
    assert_valid(&introspection_schema(), &detail);
    let text = detail["data"].to_string();
    assert!(text.contains("[adapter 'test-api', GET /echo/{value}; danger_level: safe]"), "{text}");
    let params = detail["data"]["operation"]["parameters"]
        .as_array()
        .or_else(|| detail["data"]["parameters"].as_array())
        .cloned()
        .unwrap_or_default();
    let filter = params
        .iter()
        .find(|p| p["name"] == "filter")
        .unwrap_or_else(|| panic!("no filter in {detail}"));
    assert_eq!(
        (filter["type"].clone(), filter["default"].clone(), filter["enum"].clone()),
        (json!("string"), json!("open"), json!(["open", "closed"]))
    );
    let value = params.iter().find(|p| p["name"] == "value").unwrap();
    assert_eq!(value["required"], true);
    let delete =
        introspect(&h.client, json!({"query": "operations", "name": "test_api__delete_item"}))
            .await;
    assert!(delete["data"].to_string().contains("danger_level: destructive"));

    // Each operation's example is its minimal call, and the call is sent as it is.
    let example = |detail: &Value| {
        detail["data"]["operation"]["examples"]
            .as_array()
            .filter(|all| all.len() == 1)
            .map(|all| all[0]["request"].clone())
            .unwrap_or_else(|| panic!("one example: {detail}"))
    };
    assert_eq!(
        example(&detail),
        json!({"operation": "test_api__echo_path", "params": {"value": "<value>"}})
    );
    assert_eq!(
        example(&delete),
        json!({"operation": "test_api__delete_item", "params": {"id": "<id>"}})
    );
    let adapter_ops =
        introspect(&h.client, json!({"query": "operations", "source": "test_api", "first": 100}))
            .await;
    let adapter_ops = adapter_ops["data"]["operations"].as_array().unwrap();
    assert!(adapter_ops.len() > 15, "{adapter_ops:?}");
    for operation in adapter_ops {
        let detail =
            introspect(&h.client, json!({"query": "operations", "name": operation["name"]})).await;
        assert_eq!(example(&detail)["operation"], operation["name"]);
    }
    let sent = read(&h, "test_api__echo_path", example(&detail)["params"].clone()).await;
    assert_eq!(sent["success"], true, "{sent}");
    let seen = h.upstream.seen();
    let echoed = seen.last().unwrap();
    assert_eq!(
        (echoed.path.as_str(), echoed.query.as_deref()),
        ("/v1/echo/%3Cvalue%3E", Some("filter=open"))
    );
}

fn check(paths: &[&Path]) -> (bool, String) {
    let output = Command::new(super::support::binary()).arg("check").args(paths).output().unwrap();
    (
        output.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    )
}

#[test]
fn the_public_example_adapters_load_or_are_refused_clearly() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/examples");
    let (ok, output) =
        check(&[&examples.join("github-api-adapter.md"), &examples.join("minimal-api-adapter.md")]);
    assert!(ok, "{output}");
    assert!(
        output.contains("(adapter 'github-api', 20 operations): ok")
            && output.contains("(adapter 'minimal-api', 1 operations): ok"),
        "{output}"
    );
    let (ok, output) = check(&[&examples.join("apple-mail-adapter.md")]);
    assert!(!ok);
    assert!(output.contains("apple-mail-adapter.md:24:14: target.transport: unsupported transport 'native-applescript'"), "{output}");
    assert!(!output.contains("panicked"), "{output}");
}

#[test]
fn broken_adapter_files_are_reported_with_path_and_location() {
    let minimal = |body: &str| {
        format!(
            "---\nname: broken-api\ntype: adapter\nversion: \"1.0.0\"\ndescription: \"d\"\ntarget:\n  base_url: \"https://api.example.com\"\n  transport: http\n  protocol: rest\n  serialization: json\n{body}---\n"
        )
    };
    let ops = |op: &str| minimal(&format!("operations:\n  read:\n{op}"));
    let rows: Vec<(String, &str)> = vec![
        ("no front matter".into(), "1:1: an adapter file must start with a '---' line"),
        ("---\nname: x\n".into(), "the YAML front matter is never closed"),
        ("---\nname: [unclosed\n---\n".into(), "YAML syntax error"),
        ("---\na: &x 1\nb: *x\n---\n".into(), "anchors and aliases are not supported"),
        (minimal("").replace("name: broken-api\n", ""), "2:1: name: required field is missing"),
        (
            minimal("operations: {}\n").replace("broken-api", "Broken_API"),
            "2:7: name: is not a valid adapter name",
        ),
        (
            minimal("operations: {}\n").replace("type: adapter", "type: persona"),
            "3:7: type: this file is not an adapter",
        ),
        (
            minimal("operations: {}\n").replace("\"1.0.0\"", "\"1.0\""),
            "4:10: version: is not a semantic version",
        ),
        (
            minimal("operations: {}\n")
                .replace("https://api.example.com", "http://api.example.com"),
            "target.base_url: must use https (plain http only for localhost)",
        ),
        (
            minimal("operations: {}\n")
                .replace("https://api.example.com", "https://api.example.com/"),
            "target.base_url: must not end with '/'",
        ),
        (
            minimal("operations: {}\n").replace("transport: http", "transport: websocket"),
            "target.transport: unsupported transport 'websocket'",
        ),
        (
            minimal("operations: {}\n").replace("protocol: rest", "protocol: graphql"),
            "target.protocol: unsupported protocol 'graphql'",
        ),
        (
            minimal("operations: {}\n").replace("serialization: json", "serialization: xml"),
            "target.serialization: unsupported serialization 'xml'",
        ),
        (
            minimal("operations: {}\n")
                .replace("  serialization: json\n", "  serialization: json\n  timeout: 5\n"),
            "target.timeout: unknown key",
        ),
        (
            minimal("auth:\n  type: bearer\n  token: abc\noperations: {}\n"),
            "auth.token: unknown key (expected one of type, token_env); credentials are never written",
        ),
        (
            minimal("auth:\n  type: oauth2\noperations: {}\n"),
            "auth.type: unsupported auth type 'oauth2'",
        ),
        (
            minimal("trust:\n  level: official\noperations: {}\n"),
            "trust.level: unknown trust level",
        ),
        (
            ops("    - {name: GetRepo, maps_to: \"GET /r\"}\n"),
            "operations.read[0].name: is not a valid operation name",
        ),
        (
            ops(
                "    - {name: get_a, maps_to: \"GET /a\"}\n    - {name: get_a, maps_to: \"GET /b\"}\n",
            ),
            "operations.read[1].name: duplicate operation name 'get_a' (first defined at line 13)",
        ),
        (
            ops("    - {name: get_a, maps_to: \"FETCH /a\"}\n"),
            "operations.read[0].maps_to: unsupported method 'FETCH'",
        ),
        (
            ops("    - {name: get_a, maps_to: \"GET a\"}\n"),
            "operations.read[0].maps_to: the path must start with '/'",
        ),
        (
            ops("    - {name: get_a, maps_to: \"GET /a/{id}\"}\n"),
            "operations.read[0].maps_to: placeholder {id} names no parameter",
        ),
        (
            ops(
                "    - name: get_a\n      maps_to: \"GET /a/{owner}\"\n      params:\n        owner: {type: text, required: true}\n",
            ),
            "operations.read[0].params.owner.type: unknown parameter type",
        ),
        (
            ops(
                "    - name: get_a\n      maps_to: \"GET /a\"\n      params:\n        per_page: {type: integer, default: \"30\"}\n",
            ),
            "operations.read[0].params.per_page.default: does not match the parameter's type",
        ),
        (
            ops(
                "    - name: get_a\n      maps_to: \"GET /a\"\n      params:\n        state: {type: string, enum: [open], default: closed}\n",
            ),
            "operations.read[0].params.state.default: is not one of the enum values",
        ),
        (
            ops(
                "    - name: get_a\n      maps_to: \"GET /a\"\n      params:\n        q: {type: string, in: body}\n",
            ),
            "operations.read[0].params.q: GET requests carry no body",
        ),
        (
            ops(
                "    - name: get_a\n      maps_to: \"GET /a\"\n      params:\n        q: {type: string, minimum: 3}\n",
            ),
            "operations.read[0].params.q.minimum: unknown key",
        ),
        (
            ops("    - {name: get_a, maps_to: \"GET /a\", pagination: {style: page}}\n"),
            "operations.read[0].pagination.style: unsupported pagination style 'page'",
        ),
        (
            ops("    - {name: get_a, maps_to: \"GET /a\", danger_level: risky}\n"),
            "operations.read[0].danger_level: unknown danger level",
        ),
        (minimal("operations:\n  fetch: []\n"), "operations.fetch: unknown key"),
        (
            minimal(
                "rate_limits:\n  quotas:\n    limits:\n      - {metric: cost_per_day, warn: 1}\noperations: {}\n",
            ),
            "rate_limits.quotas.limits[0].metric: unsupported quota metric",
        ),
    ];
    let dir = super::support::scratch_dir();
    for (index, (text, expected)) in rows.iter().enumerate() {
        let file = dir.join(format!("case{index}-adapter.md"));
        std::fs::write(&file, text).unwrap();
        let (ok, output) = check(&[&file]);
        assert!(!ok, "case {index} passed: {text}");
        assert!(output.contains(expected), "case {index}: expected {expected:?} in\n{output}");
        assert!(
            output.contains(&format!("case{index}-adapter.md:")),
            "case {index}: no file:line:col in\n{output}"
        );
    }
    // Every error of a file is reported, not just the first.
    let many = dir.join("many-adapter.md");
    std::fs::write(
        &many,
        ops("    - {name: Bad, maps_to: \"GET /a\"}\n    - {name: get_b, maps_to: \"NOPE\"}\n"),
    )
    .unwrap();
    let (_, output) = check(&[&many]);
    assert!(output.contains("2 error(s)"), "{output}");
    // An unknown top-level key is a warning, not an error.
    let warned = dir.join("warned-adapter.md");
    std::fs::write(
        &warned,
        minimal("homepage: x\noperations:\n  read:\n    - {name: get_a, maps_to: \"GET /a\"}\n"),
    )
    .unwrap();
    let (ok, output) = check(&[&warned]);
    assert!(
        ok && output.contains("warning: ")
            && output.contains("homepage: unknown top-level key, ignored"),
        "{output}"
    );
}

#[test]
fn serve_refuses_to_start_with_a_broken_adapter() {
    let dir = super::support::scratch_dir();
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/spec/examples/apple-mail-adapter.md");
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\nadapters = [\"{}\"]\n",
            dir.join("state").display(),
            examples.display()
        ),
    )
    .unwrap();
    let output = Command::new(super::support::binary())
        .args(["serve", "--config", config.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("unsupported transport 'native-applescript'")
    );
}

/// The shipped example adapter: valid, served, and gated as its README
/// says, without a byte reaching GitHub (the token is missing, the close
/// needs a person).
#[tokio::test]
async fn the_example_adapter_is_served_and_gated_as_documented() {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/adapters");
    let (ok, output) = check(&[&example]);
    assert!(ok && output.contains("(adapter 'github-issues', 4 operations): ok"), "{output}");
    let setup = Setup::new(Answer::Deny, 300);
    let base = std::fs::read_to_string(&setup.config).unwrap();
    std::fs::write(&setup.config, format!("adapters = [\"{}\"]\n{base}", example.display()))
        .unwrap();
    // An empty variable counts as missing, whatever the test's environment holds.
    let client = stdio_client_with_env(
        &["serve", "--config", setup.config.to_str().unwrap()],
        &[("GITHUB_TOKEN", "")],
    )
    .await;
    let listing =
        introspect(&client, json!({"query": "operations", "name": "github_issues__list_issues"}))
            .await;
    assert!(
        listing["data"]
            .to_string()
            .contains("GET /repos/{owner}/{repo}/issues; danger_level: safe"),
        "{listing}"
    );
    let close = op(
        &client,
        "mcp_aql_update",
        "github_issues__close_issue",
        json!({"owner": "o", "repo": "r", "issue_number": 1}),
    )
    .await;
    assert_eq!(code(&close), "CONFIRMATION_REQUIRED", "{close}");
    assert!(
        close["error"]["details"]["reasons"][0].as_str().unwrap().contains("requires_confirmation"),
        "{close}"
    );
    let list = op(
        &client,
        "mcp_aql_read",
        "github_issues__list_issues",
        json!({"owner": "o", "repo": "r"}),
    )
    .await;
    assert_eq!(code(&list), "AUTH_CREDENTIAL_MISSING", "{list}");
}

const SCHEMA_ADAPTER: &str = r#"---
name: checked-api
type: adapter
version: "1.0.0"
description: "Answers checked against their response schemas"
target:
  base_url: "BASE_URL"
  transport: http
  protocol: rest
  serialization: json
operations:
  read:
    - name: echo_checked
      maps_to: "GET /echo/{value}"
      params:
        value: {type: string, required: true}
      response:
        description: "The request, echoed"
        schema:
          type: object
          required: [method, path]
          properties:
            method: {type: string, enum: [GET]}
            path: {type: string}
    - name: echo_wrong
      maps_to: "GET /echo/{value}"
      params:
        value: {type: string, required: true}
      response:
        schema: {type: object, required: [id], properties: {id: {type: integer}}}
    - name: list_checked
      maps_to: "GET /pages/cursor"
      pagination: {style: cursor, cursor_param: cursor, next_cursor_field: meta.next, items_field: data}
      response:
        schema: {type: object, properties: {data: {type: array, items: {type: integer, maximum: 4}}}}
---
"#;

/// An adapter operation's response schema holds for every 200 answer (and
/// every page of one): a matching body is the data, any other is withheld.
#[tokio::test]
async fn answers_outside_an_operations_response_schema_are_withheld() {
    let h =
        start(Answer::Approve, &[("checked-api-adapter.md", SCHEMA_ADAPTER.to_owned())], "", &[])
            .await;
    let fine = read(&h, "checked_api__echo_checked", json!({"value": "x"})).await;
    assert_eq!(fine["data"]["path"], "/v1/echo/x", "{fine}");
    let wrong = read(&h, "checked_api__echo_wrong", json!({"value": "x"})).await;
    assert_eq!(code(&wrong), "SERIALIZATION_PARSE_ERROR", "{wrong}");
    assert!(
        wrong["error"]["details"]["problems"][0]
            .as_str()
            .unwrap()
            .contains("\"id\" is a required property"),
        "{wrong}"
    );
    assert_eq!(h.upstream.count("/v1/echo/x"), 2, "the call was made; its answer was withheld");
    let first_page = read(&h, "checked_api__list_checked", json!({})).await;
    assert_eq!(first_page["data"]["data"], json!([1, 2]), "{first_page}");
    let all = read(&h, "checked_api__list_checked", json!({"all_pages": true})).await;
    assert_eq!(
        code(&all),
        "SERIALIZATION_PARSE_ERROR",
        "the third page's 5 is over the maximum: {all}"
    );
    assert!(
        all["error"]["details"]["problems"][0].as_str().unwrap().starts_with("/data/0: 5"),
        "{all}"
    );
}
