//! Hostile and broken input over raw stdio: the server answers what it can,
//! never exits early, never panics.

use serde_json::json;

use super::support::{RawStdio, ask, envelope_of, execute, step};

const INTROSPECT: &[u8] = br#"{"operation":"introspect","params":{"query":"types"}}"#;

async fn assert_still_serving(raw: &mut RawStdio, id: i64) {
    raw.call_raw(id, "mcp_aql_read", INTROSPECT).await;
    let answer = raw.read_json().await;
    assert_eq!(answer["id"], id);
    assert_eq!(envelope_of(&answer)["success"], true, "{answer}");
    raw.assert_alive();
}

#[tokio::test]
async fn garbage_and_truncated_frames_get_errors_and_the_session_goes_on() {
    let mut raw = RawStdio::initialized(&[]).await;
    raw.send_raw(b"this is not json\n").await;
    assert_eq!(raw.read_json().await["error"]["code"], -32700);
    raw.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/ca\n").await;
    let answer = raw.read_json().await;
    assert_eq!((answer["id"].as_i64(), answer["error"]["code"].as_i64()), (Some(5), Some(-32700)));
    raw.send_raw(b"[1,2,3]\n{}\n\"str\"\n").await;
    for _ in 0..3 {
        assert!(raw.read_json().await["error"]["code"].is_i64());
    }
    raw.send_raw(b"\n\r\n   \n").await;
    assert_still_serving(&mut raw, 6).await;
}

#[tokio::test]
async fn a_five_megabyte_request_is_refused_by_size_under_its_id() {
    let mut raw = RawStdio::initialized(&[]).await;
    let arguments = format!(
        r#"{{"operation":"introspect","params":{{"query":"{}"}}}}"#,
        "q".repeat(5 * 1024 * 1024)
    );
    raw.call_raw(9, "mcp_aql_read", arguments.as_bytes()).await;
    let answer = raw.read_json().await;
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["result"]["isError"], true);
    let envelope = envelope_of(&answer);
    assert_eq!(envelope["error"]["code"], "VALIDATION_PAYLOAD_TOO_LARGE");
    assert_eq!(envelope["error"]["details"]["limit_type"], "request_size");
    assert!(envelope["error"]["details"]["actual_value"].as_u64() > Some(5 * 1024 * 1024));
    assert_still_serving(&mut raw, 10).await;
}

#[tokio::test]
async fn invalid_utf8_and_lone_surrogates_are_encoding_errors() {
    let mut raw = RawStdio::initialized(&[]).await;
    raw.call_raw(
        11,
        "mcp_aql_read",
        b"{\"operation\":\"introspect\",\"params\":{\"query\":\"types\",\"name\":\"\xFF\xFE\"}}",
    )
    .await;
    let answer = raw.read_json().await;
    assert_eq!(answer["id"], 11);
    let envelope = envelope_of(&answer);
    assert_eq!(envelope["error"]["code"], "VALIDATION_INVALID_ENCODING");
    assert!(envelope["error"]["details"]["byte_offset"].is_u64());
    raw.call_raw(
        12,
        "mcp_aql_read",
        br#"{"operation":"introspect","params":{"query":"types","name":"\udc00"}}"#,
    )
    .await;
    assert_eq!(envelope_of(&raw.read_json().await)["error"]["code"], "VALIDATION_INVALID_ENCODING");
    assert_still_serving(&mut raw, 13).await;
}

#[tokio::test]
async fn deep_nesting_is_refused_before_parsing() {
    let mut raw = RawStdio::initialized(&[]).await;
    let deep = format!(
        r#"{{"operation":"introspect","params":{{"query":"types","x":{}{}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    raw.call_raw(14, "mcp_aql_read", deep.as_bytes()).await;
    let envelope = envelope_of(&raw.read_json().await);
    assert_eq!(envelope["error"]["details"]["limit_type"], "nesting_depth");
    assert_still_serving(&mut raw, 15).await;
}

#[tokio::test]
async fn a_thousand_pipelined_requests_are_all_answered() {
    let mut raw = RawStdio::initialized(&[]).await;
    let mut batch = Vec::new();
    for id in 100..1100 {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "mcp_aql_read", "arguments": {"operation": "introspect", "params": {"query": "types"}}}});
        batch.extend_from_slice(line.to_string().as_bytes());
        batch.push(b'\n');
    }
    raw.send_raw(&batch).await;
    let mut seen = vec![false; 1000];
    for _ in 0..1000 {
        let answer = raw.read_json().await;
        let id = answer["id"].as_u64().expect("numeric id") as usize;
        assert_eq!(envelope_of(&answer)["success"], true);
        assert!(!std::mem::replace(&mut seen[id - 100], true), "id {id} answered twice");
    }
    assert!(seen.iter().all(|&s| s));
    raw.assert_alive();
}

#[tokio::test]
async fn stray_messages_before_initialize_do_not_end_the_server() {
    let mut raw = RawStdio::start(&[]);
    raw.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}\n").await;
    raw.send_raw(b"nonsense\n").await;
    assert_eq!(raw.read_json().await["error"]["code"], -32700);
    raw.send_raw(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#).await;
    raw.send_raw(b"\n").await;
    assert!(raw.read_json().await["result"]["serverInfo"].is_object());
}

#[tokio::test]
async fn a_truncated_frame_at_end_of_input_is_answered_then_the_server_exits_cleanly() {
    let mut raw = RawStdio::initialized(&[]).await;
    raw.send_raw(br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"mcp_aql_re"#)
        .await;
    raw.close_stdin();
    let answer = raw.read_json().await;
    assert_eq!((answer["id"].as_i64(), answer["error"]["code"].as_i64()), (Some(77), Some(-32700)));
    let status = tokio::time::timeout(super::support::TIMEOUT, raw.child.wait())
        .await
        .expect("exit in time")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    let mut stderr = String::new();
    if let Some(mut err) = raw.child.stderr.take() {
        use tokio::io::AsyncReadExt;
        err.read_to_string(&mut stderr).await.expect("stderr");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[tokio::test]
async fn agent_text_that_once_panicked_the_analysis_is_judged_and_serving_goes_on() {
    // A server each: the stop's hard block holds the whole session.
    for hint in super::hook::ONCE_PANICKED {
        let mut raw = RawStdio::initialized(&[]).await;
        assert_eq!(ask(&mut raw, execute(1, "multi-byte")).await["success"], true);
        let directive = ask(&mut raw, step(2, "multi-byte", hint)).await;
        assert_eq!(directive["success"], true, "{hint}: {directive}");
        assert_eq!(
            (directive["data"]["continue"].as_bool(), directive["data"]["stopped"].as_bool()),
            (Some(false), Some(true)),
            "{hint}: {directive}"
        );
        assert_still_serving(&mut raw, 3).await;
    }
}
