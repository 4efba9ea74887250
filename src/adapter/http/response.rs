//! What an upstream's answer means to the agent (runtime seed sections 7
//! and 8, `error-codes.md` 6): JSON bodies parsed (a UTF-8 BOM stripped, an
//! empty 2xx body is `null`), bodies that are not JSON (an HTML error page,
//! truncated JSON, binary data) refused as `SERIALIZATION_PARSE_ERROR` with
//! a 200-character preview, and error statuses mapped onto the spec's
//! codes with the upstream's own message (details `http_status` and
//! `upstream_error`, as `error-codes.md` 4.9-4.11 name them).

use serde_json::{Value, json};

use crate::protocol::error::{AqlError, ErrorCode};

const PREVIEW_CHARS: usize = 200;

/// One upstream answer, as received.
pub struct Answer<'a> {
    pub status: u16,
    pub content_type: &'a str,
    pub body: &'a [u8],
}

/// The parsed body of a 2xx answer, or the error an agent sees.
pub fn interpret(adapter: &str, operation: &str, answer: &Answer<'_>) -> Result<Value, AqlError> {
    let body = answer.body.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(answer.body);
    let success = (200..300).contains(&answer.status);
    let parsed = if body.iter().all(u8::is_ascii_whitespace) {
        Ok(Value::Null)
    } else if is_binary(answer.content_type) {
        return Err(malformed(
            operation,
            answer,
            format!(
                "Server returned {} instead of JSON (HTTP {})",
                answer.content_type, answer.status
            ),
            None,
        ));
    } else {
        serde_json::from_slice::<Value>(body)
    };
    let value = match parsed {
        Ok(value) => value,
        Err(error) => {
            let text = String::from_utf8_lossy(body);
            let message = if answer.content_type.contains("text/html") {
                format!("Server returned HTML instead of JSON (HTTP {})", answer.status)
            } else {
                format!("Failed to parse response as JSON (HTTP {}): {error}", answer.status)
            };
            return Err(malformed(operation, answer, message, Some(&text)));
        }
    };
    if success {
        return Ok(value);
    }
    Err(status_error(adapter, operation, answer.status, value))
}

fn is_binary(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let textual = essence.is_empty()
        || essence.starts_with("text/")
        || essence.contains("json")
        || essence.ends_with("+xml")
        || essence == "application/javascript";
    !textual
}

fn malformed(
    operation: &str,
    answer: &Answer<'_>,
    message: String,
    text: Option<&str>,
) -> AqlError {
    let preview: String = text.unwrap_or("").chars().take(PREVIEW_CHARS).collect();
    AqlError::new(
        ErrorCode::SerializationParseError,
        message,
        json!({ "operation": operation, "http_status": answer.status, "content_type": answer.content_type, "body_preview": preview }),
    )
}

/// Seed 8.1-8.2 over the codes of `error-codes.md` 6.1.
fn status_error(adapter: &str, operation: &str, status: u16, body: Value) -> AqlError {
    let upstream = upstream_message(&body).unwrap_or_else(|| reason_phrase(status).to_owned());
    let (code, label) = match status {
        400 => (ErrorCode::ValidationInvalidType, "Invalid request"),
        401 => (ErrorCode::PermissionDenied, "Authentication required"),
        403 => (ErrorCode::PermissionDenied, "Permission denied"),
        404 => (ErrorCode::NotFoundResource, "Not found"),
        409 => (ErrorCode::ConflictAlreadyExists, "Conflict"),
        422 => (ErrorCode::ValidationInvalidType, "Validation failed"),
        429 => (ErrorCode::RateLimitExceeded, "Rate limit exceeded"),
        500 => (ErrorCode::InternalError, "Server error"),
        502 => (ErrorCode::InternalError, "Bad gateway"),
        503 => (ErrorCode::InternalError, "Service unavailable"),
        504 => (ErrorCode::InternalError, "Gateway timeout"),
        s if s >= 500 => (ErrorCode::InternalError, "Server error"),
        _ => (ErrorCode::ValidationInvalidType, "Request failed"),
    };
    let message = format!(
        "{label}: {upstream} (HTTP {status} from adapter '{adapter}', operation '{operation}')"
    );
    AqlError::new(
        code,
        message,
        json!({ "operation": operation, "adapter": adapter, "http_status": status, "upstream_error": upstream, "body": clip(body) }),
    )
}

/// The upstream's own error message, from the shapes APIs commonly use.
pub fn upstream_message(body: &Value) -> Option<String> {
    let object = body.as_object()?;
    if let Some(message) = object.get("message") {
        return Some(as_text(message));
    }
    match object.get("error") {
        Some(Value::String(error)) => return Some(error.clone()),
        Some(Value::Object(error)) => {
            if let Some(message) = error.get("message") {
                return Some(as_text(message));
            }
        }
        _ => {}
    }
    match object.get("errors") {
        Some(Value::Array(errors)) if !errors.is_empty() => Some(
            errors
                .iter()
                .map(|e| e.get("message").map_or_else(|| as_text(e), as_text))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        _ => None,
    }
}

fn as_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// An error body kept in details, cut to a readable size.
fn clip(body: Value) -> Value {
    let text = body.to_string();
    if text.len() <= 2_000 { body } else { Value::String(text.chars().take(2_000).collect()) }
}

fn reason_phrase(status: u16) -> &'static str {
    reqwest::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("no reason given")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, content_type: &str, body: &[u8]) -> Result<Value, AqlError> {
        interpret("api", "op", &Answer { status, content_type, body })
    }

    #[test]
    fn bodies_parse_with_bom_and_empty_as_null() {
        assert_eq!(
            answer(200, "application/json", b"\xEF\xBB\xBF{\"a\":1}").ok(),
            Some(json!({"a": 1}))
        );
        assert_eq!(answer(204, "", b"").ok(), Some(Value::Null));
        assert_eq!(answer(200, "application/json", b"  \n").ok(), Some(Value::Null));
    }

    #[test]
    fn upstream_messages_come_from_common_shapes() {
        let rows = [
            (json!({"message": "m"}), Some("m")),
            (json!({"error": "e"}), Some("e")),
            (json!({"error": {"message": "nested"}}), Some("nested")),
            (json!({"errors": [{"message": "a"}, "b"]}), Some("a; b")),
            (json!({"other": 1}), None),
        ];
        for (body, expected) in rows {
            assert_eq!(upstream_message(&body).as_deref(), expected, "{body}");
        }
    }
}
