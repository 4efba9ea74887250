//! Screening raw JSON-RPC frames before they are parsed, shared by the stdio
//! and HTTP transports.
//!
//! A frame that is too large, not UTF-8, nested too deeply, or carries an
//! unpaired UTF-16 surrogate escape never reaches the JSON parser. If it is a
//! `tools/call`, the agent gets an MCP-AQL error envelope
//! (`VALIDATION_PAYLOAD_TOO_LARGE` or `VALIDATION_INVALID_ENCODING`) under the
//! request's own id, as for any other failed operation; any other frame gets
//! a JSON-RPC error. The id and method are recovered by a byte-level scan
//! that tolerates invalid UTF-8 and truncation, so an answer can be
//! addressed even when the frame cannot be parsed.

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ErrorData, NumberOrString, RequestId,
    ServerJsonRpcMessage, ServerResult,
};

use crate::protocol::{
    envelope::Answer,
    error::{AqlError, LimitKind},
    limits::Limits,
};

use super::tools::call_tool_result;

/// Levels of a `tools/call` frame above its arguments object
/// (`{"params":{"arguments":{…}}}`): frame depth minus this is the depth the
/// limit speaks of.
const ENVELOPE_LEVELS: usize = 2;

/// What to do with one incoming frame.
#[derive(Debug)]
pub enum Screened {
    /// A well-formed message for the MCP service.
    Message(Box<ClientJsonRpcMessage>),
    /// A refusal to send back instead, already addressed to the request.
    Reply(Box<ServerJsonRpcMessage>),
    /// Nothing to do (a blank line, or a broken notification, which has no
    /// one to answer).
    Ignore,
}

/// Screens a frame. `frame` holds the bytes kept of it and `total_len` the
/// length it really had: transports keep at most the request-size limit, so
/// an oversized frame arrives truncated.
pub fn screen(frame: &[u8], total_len: usize, limits: &Limits) -> Screened {
    let frame = strip_bom(frame);
    if total_len <= limits.max_request_size && frame.iter().all(u8::is_ascii_whitespace) {
        return Screened::Ignore;
    }
    let facts = sniff(frame);
    match refusal(frame, total_len, limits, &facts) {
        Some(screened) => screened,
        None => parse(frame, &facts),
    }
}

/// The refusal for a frame that must not be parsed, if any. Transports
/// that parse frames themselves (HTTP) call this and pass the rest on.
pub fn refuse_unparseable(frame: &[u8], total_len: usize, limits: &Limits) -> Option<Screened> {
    let frame = strip_bom(frame);
    refusal(frame, total_len, limits, &sniff(frame))
}

fn strip_bom(frame: &[u8]) -> &[u8] {
    frame.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(frame)
}

fn refusal(
    frame: &[u8],
    total_len: usize,
    limits: &Limits,
    facts: &FrameFacts,
) -> Option<Screened> {
    let error = if total_len > limits.max_request_size {
        AqlError::payload_too_large(LimitKind::RequestSize, limits.max_request_size, total_len)
    } else if let Err(e) = std::str::from_utf8(frame) {
        AqlError::invalid_encoding("request", "invalid UTF-8", Some(e.valid_up_to()))
    } else if let Some(offset) = facts.unpaired_surrogate {
        AqlError::invalid_encoding("request", "unpaired UTF-16 surrogate escape", Some(offset))
    } else if facts.max_depth > limits.max_nesting_depth + ENVELOPE_LEVELS {
        AqlError::payload_too_large(
            LimitKind::NestingDepth,
            limits.max_nesting_depth,
            facts.max_depth - ENVELOPE_LEVELS,
        )
    } else {
        return None;
    };
    Some(refuse(facts, error, limits))
}

fn parse(frame: &[u8], facts: &FrameFacts) -> Screened {
    match serde_json::from_slice::<ClientJsonRpcMessage>(frame) {
        Ok(message) => Screened::Message(Box::new(message)),
        Err(_) if facts.id.is_none() && facts.method.is_some() => Screened::Ignore,
        Err(_) => {
            let error = if serde_json::from_slice::<serde_json::Value>(frame).is_ok() {
                ErrorData::invalid_request(
                    "Invalid request: not a JSON-RPC 2.0 message MCP knows",
                    None,
                )
            } else {
                ErrorData::parse_error("Parse error: the frame is not valid JSON", None)
            };
            Screened::Reply(Box::new(ServerJsonRpcMessage::error(error, facts.id.clone())))
        }
    }
}

fn refuse(facts: &FrameFacts, error: AqlError, limits: &Limits) -> Screened {
    match (&facts.id, facts.method.as_deref()) {
        (Some(id), Some("tools/call")) => {
            Screened::Reply(Box::new(tool_refusal(id.clone(), error, limits)))
        }
        (None, Some(_)) => Screened::Ignore,
        (id, _) => Screened::Reply(Box::new(ServerJsonRpcMessage::error(
            ErrorData::invalid_request(error.message, None),
            id.clone(),
        ))),
    }
}

fn tool_refusal(id: RequestId, error: AqlError, limits: &Limits) -> ServerJsonRpcMessage {
    let mut answer: CallToolResult = call_tool_result(&Answer::One(Err(error)), &[], limits);
    // The refusal bypasses rmcp's handler, which would drop this field for
    // clients of older protocol versions; leaving it out is valid for all.
    answer.result_type = None;
    ServerJsonRpcMessage::response(ServerResult::CallToolResult(answer), id)
}

/// What a byte-level scan of a frame found.
#[derive(Debug, Default, PartialEq)]
pub struct FrameFacts {
    pub id: Option<RequestId>,
    pub method: Option<String>,
    /// Deepest nesting of objects and arrays; the root container is level 1.
    pub max_depth: usize,
    /// Byte offset of the first `\u` escape of an unpaired surrogate.
    pub unpaired_surrogate: Option<usize>,
}

/// Scans a frame for its top-level `id` and `method`, its nesting depth and
/// unpaired surrogate escapes, without requiring it to be valid or whole.
pub fn sniff(bytes: &[u8]) -> FrameFacts {
    let mut facts = FrameFacts::default();
    let mut depth = 0usize;
    let mut root_is_object = false;
    let mut expecting_key = false;
    let mut key: Option<&[u8]> = None;
    let mut awaiting_value = false;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => {
                let (end, bad_escape) = scan_string(bytes, i + 1);
                if facts.unpaired_surrogate.is_none() {
                    facts.unpaired_surrogate = bad_escape;
                }
                let content = bytes.get(i + 1..end).unwrap_or_default();
                if depth == 1 && root_is_object {
                    if expecting_key {
                        key = Some(content);
                        expecting_key = false;
                    } else if awaiting_value {
                        record(&mut facts, key, Token::String(content));
                        awaiting_value = false;
                    }
                }
                i = end + 1;
                continue;
            }
            open @ (b'{' | b'[') => {
                depth += 1;
                facts.max_depth = facts.max_depth.max(depth);
                if depth == 1 {
                    root_is_object = open == b'{';
                    expecting_key = root_is_object;
                }
                awaiting_value = false;
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' if depth == 1 => {
                expecting_key = root_is_object;
                key = None;
                awaiting_value = false;
            }
            b':' if depth == 1 => awaiting_value = key.is_some(),
            b'-' | b'0'..=b'9' if depth == 1 && awaiting_value => {
                let end = bytes
                    .get(i..)
                    .unwrap_or_default()
                    .iter()
                    .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .map_or(bytes.len(), |n| i + n);
                record(&mut facts, key, Token::Number(bytes.get(i..end).unwrap_or_default()));
                awaiting_value = false;
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    facts
}

enum Token<'a> {
    String(&'a [u8]),
    Number(&'a [u8]),
}

fn record(facts: &mut FrameFacts, key: Option<&[u8]>, token: Token<'_>) {
    match (key, token) {
        (Some(b"id"), Token::String(s)) => {
            facts.id = Some(NumberOrString::String(String::from_utf8_lossy(s).into()));
        }
        (Some(b"id"), Token::Number(n)) => {
            facts.id = std::str::from_utf8(n)
                .ok()
                .and_then(|n| n.parse::<i64>().ok())
                .map(NumberOrString::Number);
        }
        (Some(b"method"), Token::String(s)) => {
            facts.method = Some(String::from_utf8_lossy(s).into_owned());
        }
        _ => {}
    }
}

/// Finds the closing quote of a string starting at `start` (just after its
/// opening quote); returns its index (or the frame's end if truncated) and
/// the offset of the first unpaired surrogate escape.
fn scan_string(bytes: &[u8], start: usize) -> (usize, Option<usize>) {
    let mut bad = None;
    let mut i = start;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'"' => return (i, bad),
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let unit = hex4(bytes, i + 2);
                match unit {
                    Some(0xD800..=0xDBFF) => {
                        let low = (bytes.get(i + 6) == Some(&b'\\')
                            && bytes.get(i + 7) == Some(&b'u'))
                        .then(|| hex4(bytes, i + 8))
                        .flatten();
                        if matches!(low, Some(0xDC00..=0xDFFF)) {
                            i += 12;
                            continue;
                        }
                        bad = bad.or(Some(i));
                    }
                    Some(0xDC00..=0xDFFF) => bad = bad.or(Some(i)),
                    _ => {}
                }
                i += 6;
                continue;
            }
            b'\\' => {
                i += 2;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    (bytes.len(), bad)
}

fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(bytes.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(n: i64) -> Option<RequestId> {
        Some(NumberOrString::Number(n))
    }

    #[test]
    fn sniff_finds_top_level_id_and_method_only() {
        let facts = sniff(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"id":9,"method":"x"}}"#,
        );
        assert_eq!(facts.id, num(7));
        assert_eq!(facts.method.as_deref(), Some("tools/call"));
        assert_eq!(facts.max_depth, 2);
        let facts = sniff(br#"{"method":"a","params":{"s":"}{\"id\":3"},"id":"abc"}"#);
        assert_eq!(facts.id, Some(NumberOrString::String("abc".into())));
        assert_eq!(facts.max_depth, 2);
    }

    #[test]
    fn sniff_survives_invalid_utf8_and_truncation() {
        let mut frame =
            br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"arguments":{"s":""#
                .to_vec();
        frame.extend_from_slice(&[0xC3, 0x28, 0xFF]);
        let facts = sniff(&frame);
        assert_eq!(facts.id, num(12));
        assert_eq!(facts.method.as_deref(), Some("tools/call"));
        assert_eq!(facts.max_depth, 3);
    }

    #[test]
    fn surrogate_escapes() {
        assert_eq!(sniff(br#"{"s":"\ud83d\ude00"}"#).unpaired_surrogate, None);
        assert_eq!(sniff(br#"{"s":"\ud83d"}"#).unpaired_surrogate, Some(6));
        assert_eq!(sniff(br#"{"s":"x\ude00"}"#).unpaired_surrogate, Some(7));
        assert_eq!(sniff(br#"{"s":"\\ud83d"}"#).unpaired_surrogate, None);
    }

    fn reply_json(screened: Screened) -> serde_json::Value {
        match screened {
            Screened::Reply(message) => serde_json::to_value(&message).unwrap(),
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn envelope_of(reply: &serde_json::Value) -> serde_json::Value {
        let text = reply["result"]["content"][0]["text"].as_str().unwrap();
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn oversized_tool_call_gets_an_envelope_under_its_id() {
        let limits = Limits::default();
        let frame = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp_aql_read","arguments":{"s":"#;
        let reply = reply_json(screen(frame, 5_000_000, &limits));
        assert_eq!(reply["id"], 3);
        assert_eq!(reply["result"]["isError"], true);
        let envelope = envelope_of(&reply);
        assert_eq!(envelope["error"]["code"], "VALIDATION_PAYLOAD_TOO_LARGE");
        assert_eq!(envelope["error"]["details"]["actual_value"], 5_000_000);
    }

    #[test]
    fn invalid_utf8_tool_call_is_an_encoding_error() {
        let mut frame = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"mcp_aql_read","arguments":{"operation":""#.to_vec();
        frame.extend_from_slice(b"\xFF\"}}}");
        let len = frame.len();
        let envelope = envelope_of(&reply_json(screen(&frame, len, &Limits::default())));
        assert_eq!(envelope["error"]["code"], "VALIDATION_INVALID_ENCODING");
        assert_eq!(envelope["error"]["details"]["byte_offset"], len - 5);
    }

    #[test]
    fn deep_frames_are_refused_before_parsing() {
        let arguments = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let frame = format!(
            r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"mcp_aql_read","arguments":{{"x":{arguments}}}}}}}"#
        );
        let envelope =
            envelope_of(&reply_json(screen(frame.as_bytes(), frame.len(), &Limits::default())));
        assert_eq!(envelope["error"]["details"]["limit_type"], "nesting_depth");
        assert_eq!(envelope["error"]["details"]["actual_value"], 201);
    }

    #[test]
    fn garbage_gets_a_parse_error_and_other_methods_a_jsonrpc_error() {
        let reply = reply_json(screen(b"this is not json", 16, &Limits::default()));
        assert_eq!(reply["error"]["code"], -32700);
        let frame =
            br#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"cursor":"\ud800"}}"#;
        let reply = reply_json(screen(frame, frame.len(), &Limits::default()));
        assert_eq!(reply["id"], 8);
        assert_eq!(reply["error"]["code"], -32600);
        assert!(matches!(screen(b"  \r", 3, &Limits::default()), Screened::Ignore));
    }
}
