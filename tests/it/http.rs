//! The same surface over streamable HTTP on loopback: rmcp's client, raw
//! POSTs for frames a client would not send, and the loopback-only rules.

use serde_json::{Value, json};

use super::{
    stdio::assert_error_table,
    support::{HttpServer, dongle_command, envelope_of, introspect},
};

#[tokio::test]
async fn http_serves_tools_introspection_and_errors() {
    let server = HttpServer::start(&["--endpoints", "all"]).await;
    let client = server.client().await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 6);
    let data = &introspect(&client, json!({"query": "operations"})).await["data"];
    assert_eq!(data["_protocol"]["mode"], "all");
    assert_error_table(&client, |_| {}).await;
}

#[tokio::test]
async fn http_sessions_are_independent_and_concurrent() {
    let server = HttpServer::start(&[]).await;
    let (a, b) = tokio::join!(server.client(), server.client());
    let (first, second) = tokio::join!(
        introspect(&a, json!({"query": "types"})),
        introspect(&b, json!({"query": "operations"})),
    );
    assert!(first["data"]["types"].is_array());
    assert!(second["data"]["operations"].is_array());
}

/// A POST as MCP clients send them, to be given a body.
fn mcp_post(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

/// The `initialize` request a client opens a session with.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#;

async fn post(url: &str, body: Vec<u8>) -> (u16, Value) {
    let response = mcp_post(url).body(body).send().await.expect("POST");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("body");
    (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

#[tokio::test]
async fn http_screens_oversized_and_non_utf8_bodies_like_stdio() {
    let server = HttpServer::start(&[]).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{{"name":"mcp_aql_read","arguments":{{"operation":"introspect","params":{{"query":"types","name":"{}"}}}}}}}}"#,
        "x".repeat(2 * 1024 * 1024)
    );
    let (status, answer) = post(&server.url, big.clone().into_bytes()).await;
    assert_eq!(status, 200);
    assert_eq!(answer["id"], 41);
    let envelope = envelope_of(&answer);
    assert_eq!(envelope["error"]["code"], "VALIDATION_PAYLOAD_TOO_LARGE");
    assert_eq!(envelope["error"]["details"]["limit_type"], "request_size");
    assert_eq!(envelope["error"]["details"]["actual_value"], big.len());

    let mut bad = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"mcp_aql_read","arguments":{"operation":"intro"#.to_vec();
    bad.extend_from_slice(b"\xC0\xAFspect\"}}}");
    let (_, answer) = post(&server.url, bad).await;
    assert_eq!(answer["id"], 42);
    assert_eq!(envelope_of(&answer)["error"]["code"], "VALIDATION_INVALID_ENCODING");
}

#[tokio::test]
async fn http_refuses_foreign_origins() {
    let server = HttpServer::start(&[]).await;
    let response = mcp_post(&server.url)
        .header("origin", "https://evil.example")
        .body(INITIALIZE)
        .send()
        .await
        .expect("POST");
    assert_eq!(response.status().as_u16(), 403);
}

/// A foreign Origin or Host is refused from the headers alone: the server
/// answers 403 while most of a 60 MiB body is still unsent, instead of
/// reading it first.
#[tokio::test]
async fn foreign_origins_and_hosts_are_refused_before_the_body_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = HttpServer::start(&[]).await;
    let authority = server.url.trim_start_matches("http://").trim_end_matches("/mcp").to_owned();
    for (host, origin) in
        [(authority.as_str(), "https://evil.example"), ("rebound.evil.example", "")]
    {
        let mut stream = tokio::net::TcpStream::connect(&authority).await.expect("connect");
        let origin_line =
            if origin.is_empty() { String::new() } else { format!("Origin: {origin}\r\n") };
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin_line}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            60 * 1024 * 1024
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(&[b' '; 1024]).await.unwrap();
        let mut answer = vec![0u8; 256];
        let read =
            tokio::time::timeout(std::time::Duration::from_secs(5), stream.read(&mut answer))
                .await
                .expect("answered without waiting for the rest of the body")
                .unwrap();
        let status_line =
            String::from_utf8_lossy(&answer[..read]).lines().next().unwrap_or_default().to_owned();
        assert!(
            status_line.starts_with("HTTP/1.1 403"),
            "host {host}, origin {origin:?}: {status_line}"
        );
    }
}

#[tokio::test]
async fn http_refuses_non_loopback_addresses() {
    let output = dongle_command(&["serve", "--http", "0.0.0.0:0"]).output().await.expect("run");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("only loopback addresses are allowed"), "{stderr}");
}

/// Over HTTP each connection is its own MCP session: a hard block taints
/// the session that triggered it (no other agent name works there), while
/// another session's agents go on; the blocked agent is refused everywhere.
#[tokio::test]
async fn a_block_taints_its_own_http_session_only() {
    let server =
        HttpServer::start(&["--data-dir", super::support::scratch_dir().to_str().unwrap()]).await;
    let (offender, bystander) = tokio::join!(server.client(), server.client());
    let call = |agent: &str, operation: &str, extra: Value| {
        let mut params = json!({ "element_name": agent });
        if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
            params.extend(extra);
        }
        json!({ "operation": operation, "params": params })
    };
    let execute = |agent: &str| call(agent, "execute_agent", json!({}));
    let step = |agent: &str, hint: &str| {
        call(agent, "record_execution_step", json!({ "nextActionHint": hint }))
    };

    // y is executing when x is blocked, so the broadcast is for it too.
    assert_eq!(
        super::support::call(&bystander, "mcp_aql_execute", execute("y")).await.0["success"],
        true
    );
    assert_eq!(
        super::support::call(&offender, "mcp_aql_execute", execute("x")).await.0["success"],
        true
    );
    let (stop, _) =
        super::support::call(&offender, "mcp_aql_create", step("x", "sudo rm -rf /")).await;
    assert_eq!(stop["data"]["stopped"], true, "{stop}");

    let (renamed, _) =
        super::support::call(&offender, "mcp_aql_execute", execute("x-renamed")).await;
    assert_eq!(
        renamed["error"]["code"], "PERMISSION_DENIED",
        "the offending session is tainted: {renamed}"
    );
    let (elsewhere, _) = super::support::call(&bystander, "mcp_aql_execute", execute("z")).await;
    assert_eq!(elsewhere["success"], true, "another session is not tainted: {elsewhere}");
    let (steps, _) =
        super::support::call(&bystander, "mcp_aql_create", step("y", "cargo build")).await;
    assert_eq!(steps["data"]["continue"], true);
    let broadcast = steps["data"]["notifications"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["type"] == "danger_zone").cloned());
    assert_eq!(
        broadcast.map(|n| n["metadata"]["agent"].clone()),
        Some(json!("x")),
        "the danger_zone broadcast reached the other session's agent"
    );
    let (blocked, _) = super::support::call(&bystander, "mcp_aql_execute", execute("x")).await;
    assert_eq!(
        blocked["error"]["code"], "PERMISSION_DENIED",
        "the blocked agent is refused in every session"
    );
}

/// Opens a session with a raw `initialize` and returns its id.
async fn open_session(url: &str) -> String {
    let response = mcp_post(url).body(INITIALIZE).send().await.expect("POST initialize");
    assert_eq!(response.status().as_u16(), 200);
    response
        .headers()
        .get("mcp-session-id")
        .expect("a session id")
        .to_str()
        .expect("ASCII id")
        .to_owned()
}

async fn end_session(url: &str, session: &str) -> u16 {
    reqwest::Client::new()
        .delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .expect("DELETE")
        .status()
        .as_u16()
}

#[tokio::test]
async fn ending_a_session_answers_200_then_404() {
    let server = HttpServer::start(&[]).await;
    let session = open_session(&server.url).await;
    assert_eq!(
        end_session(&server.url, &session).await,
        200,
        "an open session ends with 200, as clients expect"
    );
    assert_eq!(
        end_session(&server.url, &session).await,
        404,
        "a session already ended is not found"
    );
    assert_eq!(end_session(&server.url, "not-a-session").await, 404);
    // The session is gone: a request in it is refused rather than served.
    let status = mcp_post(&server.url)
        .header("mcp-session-id", &session)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#)
        .send()
        .await
        .expect("POST")
        .status()
        .as_u16();
    assert_eq!(status, 404);
}
