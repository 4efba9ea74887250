//! Keeping verification codes out of everything the dongle evaluates,
//! stores or logs about an action, and the shape of a code that takes.
//! A leaf: the store redacts with it before anything is written, so it
//! imports nothing of the crate.
//!
//! A code reaches the dongle legitimately only as `verify_challenge`'s
//! `code`, which is hashed and forgotten. But the same call can also pass
//! through a gate as an action: Claude Code's hook sees the agent's
//! `mcp__<dongle>__mcp_aql_create {"operation":"verify_challenge",...}`,
//! and a proxied MCP-AQL server may receive one. Action texts go into
//! audit rows and challenge records, so they are redacted first, two ways:
//!
//! - structurally: in any JSON object that names the operation
//!   `verify_challenge`, its `code` (and `params.code`) is replaced,
//!   whatever the code looks like;
//! - by shape, in any text: the shown form (five groups of five and one,
//!   separated by `-` or a space) and the bare 26-character form (a whole
//!   word mixing letters and digits of the Crockford alphabet, which also
//!   catches ULIDs: a cost accepted for never storing a code).

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The characters of a code (Crockford's base 32).
pub const CODE_ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Characters in a code.
pub const CODE_CHARS: usize = 26;

/// Whether a byte can be a character of a typed code: the alphabet in
/// either case, and the letters read as digits (`O`, `I`, `L`).
pub fn is_code_char(byte: u8) -> bool {
    let upper = byte.to_ascii_uppercase();
    matches!(upper, b'O' | b'I' | b'L') || CODE_ALPHABET.as_bytes().contains(&upper)
}

/// The operation whose `code` parameter carries a code.
pub const VERIFY_OPERATION: &str = "verify_challenge";
/// The parameter of [`VERIFY_OPERATION`] that carries it.
pub const CODE_PARAM: &str = "code";
/// What a code is replaced with.
pub const REDACTED: &str = "[redacted code]";

/// `text` with every code-shaped run replaced by [`REDACTED`].
pub fn redact_text(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(byte) = bytes.get(at) {
        let starts_word = byte.is_ascii_alphanumeric()
            && at
                .checked_sub(1)
                .and_then(|before| bytes.get(before))
                .is_none_or(|b| !b.is_ascii_alphanumeric());
        match starts_word.then(|| code_shape_at(bytes, at)).flatten() {
            Some(end) => {
                let redacted = out.get_or_insert_with(|| String::with_capacity(text.len()));
                redacted.push_str(text.get(copied..at).unwrap_or_default());
                redacted.push_str(REDACTED);
                copied = end;
                at = end;
            }
            None => at += 1,
        }
    }
    match out {
        Some(mut redacted) => {
            redacted.push_str(text.get(copied..).unwrap_or_default());
            Cow::Owned(redacted)
        }
        None => Cow::Borrowed(text),
    }
}

/// The end of a code-shaped word starting at `start`, if one does.
fn code_shape_at(bytes: &[u8], start: usize) -> Option<usize> {
    grouped_code_at(bytes, start).or_else(|| bare_code_at(bytes, start))
}

fn ends_word(bytes: &[u8], at: usize) -> bool {
    bytes.get(at).is_none_or(|b| !b.is_ascii_alphanumeric())
}

/// `XXXXX-XXXXX-XXXXX-XXXXX-XXXXX-X`, each separator `-` or a space.
fn grouped_code_at(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start;
    for (index, size) in [5, 5, 5, 5, 5, 1].into_iter().enumerate() {
        if index > 0 {
            if !matches!(bytes.get(at), Some(b'-' | b' ')) {
                return None;
            }
            at += 1;
        }
        for _ in 0..size {
            if !bytes.get(at).is_some_and(|&b| is_code_char(b)) {
                return None;
            }
            at += 1;
        }
    }
    ends_word(bytes, at).then_some(at)
}

/// A whole word of exactly 26 code characters with letters and digits.
fn bare_code_at(bytes: &[u8], start: usize) -> Option<usize> {
    let end = start + CODE_CHARS;
    let word = bytes.get(start..end)?;
    let shaped = ends_word(bytes, end)
        && word.iter().all(|&b| is_code_char(b))
        && word.iter().any(u8::is_ascii_digit)
        && word.iter().any(u8::is_ascii_alphabetic);
    shaped.then_some(end)
}

/// `arguments` with `verify_challenge`'s code replaced wherever the call
/// names that operation, and code-shaped text redacted in every string.
pub fn redact_arguments(arguments: &Value) -> Cow<'_, Value> {
    if !needs_redaction(arguments) {
        return Cow::Borrowed(arguments);
    }
    Cow::Owned(redacted(arguments))
}

fn names_verify(map: &Map<String, Value>) -> bool {
    map.get("operation")
        .and_then(Value::as_str)
        .is_some_and(|op| op.trim().eq_ignore_ascii_case(VERIFY_OPERATION))
}

fn needs_redaction(value: &Value) -> bool {
    match value {
        Value::String(text) => matches!(redact_text(text), Cow::Owned(_)),
        Value::Array(items) => items.iter().any(needs_redaction),
        Value::Object(map) => names_verify(map) || map.values().any(needs_redaction),
        _ => false,
    }
}

fn redacted(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(redact_text(text).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        Value::Object(map) => {
            let verify = names_verify(map);
            let mut out: Map<String, Value> =
                map.iter().map(|(key, value)| (key.clone(), redacted(value))).collect();
            if verify {
                hide_code(&mut out);
                if let Some(Value::Object(params)) = out.get_mut("params") {
                    hide_code(params);
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn hide_code(map: &mut Map<String, Value>) {
    if let Some(code) = map.get_mut(CODE_PARAM) {
        *code = Value::String(REDACTED.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// One row per text: what goes in, what is kept.
    #[test]
    fn code_shaped_text_is_redacted_and_nothing_else() {
        let rows = [
            ("code JM9CK-2C60M-TH0WX-8EGCR-Q81DD-T now", "code [redacted code] now"),
            ("jm9ck 2c60m th0wx 8egcr q81dd t", "[redacted code]"),
            ("x=JM9CK2C60MTH0WX8EGCRQ81DDT;", "x=[redacted code];"),
            ("\"code\":\"JM9CK-2C6OM-TH0WX-8EGCR-Q8IDD-T\"", "\"code\":\"[redacted code]\""),
            // Not codes: a 40-character hash, a UUID, a long word, prose
            // whose letters happen to count 26, a code with a U.
            (
                "git checkout 3f2a9c4b1d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
                "git checkout 3f2a9c4b1d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
            ),
            ("0b6f1a2e-1111-4222-8333-444455556666", "0b6f1a2e-1111-4222-8333-444455556666"),
            (
                "fix the bad test case in the main branch",
                "fix the bad test case in the main branch",
            ),
            ("ABCDEFGHJKMNPQRSTVWXYZABCD", "ABCDEFGHJKMNPQRSTVWXYZABCD"),
            ("JM9CK-2C60M-TH0WX-8EGCR-Q81DU-T", "JM9CK-2C60M-TH0WX-8EGCR-Q81DU-T"),
            ("JM9CK-2C60M-TH0WX-8EGCR-Q81DD-TX", "JM9CK-2C60M-TH0WX-8EGCR-Q81DD-TX"),
        ];
        for (text, kept) in rows {
            assert_eq!(redact_text(text), kept, "{text}");
        }
        assert!(matches!(redact_text("cargo test"), Cow::Borrowed(_)));
    }

    #[test]
    fn verify_challenge_codes_are_redacted_in_any_form() {
        let call = json!({"operation": "verify_challenge", "params": {"challenge_id": "c", "code": "jm9-ck2-c60"}});
        assert_eq!(
            redact_arguments(&call).into_owned(),
            json!({"operation": "verify_challenge", "params": {"challenge_id": "c", "code": REDACTED}})
        );
        let flat = json!({"operation": "Verify_Challenge ", "code": "anything at all", "challenge_id": "c"});
        assert_eq!(redact_arguments(&flat)["code"], REDACTED);
        let nested =
            json!({"operations": [{"operation": "verify_challenge", "params": {"code": "x"}}]});
        assert_eq!(redact_arguments(&nested)["operations"][0]["params"]["code"], REDACTED);
        let elsewhere =
            json!({"note": "the code is JM9CK-2C60M-TH0WX-8EGCR-Q81DD-T", "code": "print(1)"});
        assert_eq!(
            redact_arguments(&elsewhere).into_owned(),
            json!({"note": "the code is [redacted code]", "code": "print(1)"})
        );
        let plain = json!({"operation": "execute_agent", "params": {"code": "print(1)"}});
        assert!(matches!(redact_arguments(&plain), Cow::Borrowed(_)));
    }
}
