//! Building the HTTP request of one adapter call (runtime seed section 6):
//! path placeholders substituted with `encodeURIComponent` semantics (an
//! already-encoded value is kept, never encoded twice; arrays are
//! comma-joined), the other parameters to the query (GET, DELETE) or the
//! JSON body (POST, PUT, PATCH) unless declared elsewhere, under their wire
//! names. Null bytes anywhere and line breaks in headers are refused.
//!
//! Credentials are not part of a [`PreparedRequest`]: the transport adds
//! them as the request leaves, so nothing built here can echo a secret.

use reqwest::Url;
use serde_json::{Map, Value};

use crate::protocol::error::AqlError;

use super::super::definition::{Location, OperationDefinition};

/// Encoded path values longer than this are logged: servers often cut
/// URLs near 2 KiB.
const LONG_PATH_VALUE: usize = 2_048;

/// A request ready to send, without credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedRequest {
    pub method: reqwest::Method,
    pub url: Url,
    pub headers: Vec<(String, String)>,
    /// The JSON body, for methods that carry one.
    pub body: Option<Value>,
}

/// Builds the request for `operation` from validated parameters (defaults
/// applied, runtime-only parameters removed).
pub fn build(
    base: &Url,
    operation: &OperationDefinition,
    params: &Map<String, Value>,
) -> Result<PreparedRequest, AqlError> {
    let name = &operation.name;
    for (key, value) in params {
        if let Value::String(text) = value
            && text.contains('\0')
        {
            return Err(AqlError::bad_value(name, key, "contains a null byte"));
        }
    }
    let mut path = String::with_capacity(operation.path.len() + 16);
    let mut rest = operation.path.as_str();
    while let Some(open) = rest.find('{') {
        path.push_str(rest.get(..open).unwrap_or_default());
        let after = rest.get(open + 1..).unwrap_or_default();
        let close = after.find('}').unwrap_or(after.len());
        let placeholder = after.get(..close).unwrap_or_default();
        let value = params
            .get(placeholder)
            .filter(|v| !v.is_null())
            .ok_or_else(|| AqlError::missing_param(name, placeholder))?;
        let text = path_text(value).ok_or_else(|| {
            AqlError::bad_value(
                name,
                placeholder,
                "a path parameter must be a string, number, boolean or a list of those",
            )
        })?;
        if has_dot_segment(&text) {
            return Err(AqlError::bad_value(
                name,
                placeholder,
                "must not be or contain a '.' or '..' path segment, also percent-encoded: it would change which resource the adapter's credentials reach",
            ));
        }
        let encoded = encode_component(&text);
        if encoded.len() > LONG_PATH_VALUE {
            tracing::warn!(operation = %name, param = placeholder, length = encoded.len(), "a path parameter is very long once encoded");
        }
        path.push_str(&encoded);
        rest = after.get(close + 1..).unwrap_or("");
    }
    path.push_str(rest);

    let mut url = join(base, &path)
        .ok_or_else(|| AqlError::bad_value(name, "path", "does not make a valid URL"))?;
    let mut headers = Vec::new();
    let mut body = Map::new();
    let mut raw_body = None;
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in &operation.fixed_query {
            query.append_pair(key, value);
        }
        for param in &operation.params {
            let Some(value) = params.get(&param.name).filter(|v| !v.is_null()) else { continue };
            match param.location {
                Location::Path => {}
                Location::Query => {
                    query.append_pair(&param.wire_name, &wire_text(value));
                }
                Location::Header => {
                    let text = wire_text(value);
                    if text.contains(['\r', '\n']) {
                        return Err(AqlError::bad_value(
                            name,
                            &param.name,
                            "a header value must not contain line breaks",
                        ));
                    }
                    headers.push((param.wire_name.clone(), text));
                }
                Location::Body => {
                    body.insert(param.wire_name.clone(), value.clone());
                }
                Location::RawBody => raw_body = Some(value.clone()),
            }
        }
    }
    if url.query() == Some("") {
        url.set_query(None);
    }
    // A DELETE sends a body only when the call gave it body parameters.
    let body = match (raw_body, operation.method.has_body() || !body.is_empty()) {
        (Some(raw), _) => Some(raw),
        (None, true) => Some(Value::Object(body)),
        (None, false) => None,
    };
    Ok(PreparedRequest { method: method(operation), url, headers, body })
}

fn method(operation: &OperationDefinition) -> reqwest::Method {
    use super::super::definition::Method as M;
    match operation.method {
        M::Get => reqwest::Method::GET,
        M::Post => reqwest::Method::POST,
        M::Put => reqwest::Method::PUT,
        M::Patch => reqwest::Method::PATCH,
        M::Delete => reqwest::Method::DELETE,
    }
}

/// `base` + `path`, keeping the base's own path (`https://h/v1` +
/// `/items` is `https://h/v1/items`, where URL resolution would drop `v1`).
pub fn join(base: &Url, path: &str) -> Option<Url> {
    Url::parse(&format!("{}{path}", base.as_str().trim_end_matches('/'))).ok()
}

/// A path value as text: scalars as written, arrays comma-joined
/// (seed 6.2.1); objects and nested arrays have no path form.
fn path_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(value.to_string()),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Array(_) | Value::Object(_) | Value::Null => None,
                scalar => path_text(scalar),
            })
            .collect::<Option<Vec<_>>>()
            .map(|parts| parts.join(",")),
        Value::Object(_) | Value::Null => None,
    }
}

/// Whether a path value, as written or once its `%XX` escapes are decoded
/// (a server may decode before routing), has a `.` or `..` segment between
/// `/` or `\\` separators: `..` alone would turn `/repos/{owner}/x` into
/// `/x`. Dots inside a segment (`v1.2`, `a..b`, `.hidden`) are not
/// segments of their own and pass.
fn has_dot_segment(text: &str) -> bool {
    let decoded = percent_decoded(text.as_bytes());
    [text.as_bytes(), decoded.as_slice()].iter().any(|bytes| {
        bytes.split(|&b| b == b'/' || b == b'\\').any(|segment| segment == b"." || segment == b"..")
    })
}

/// `%XX` escapes decoded once; anything else kept.
fn percent_decoded(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        let escaped = (byte == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// A query or header value: scalars as written, arrays comma-joined,
/// objects as JSON text.
fn wire_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(wire_text).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// JavaScript's `encodeURIComponent`: everything but `A-Z a-z 0-9 - _ .
/// ! ~ * ' ( )` percent-encoded as UTF-8. A value that is already exactly
/// such an encoding (only those characters and valid `%XX` escapes, at
/// least one of them) is kept as it is, so nothing is encoded twice; it is
/// then byte for byte what encoding its decoded form would give, so keeping
/// it opens no path traversal.
pub fn encode_component(value: &str) -> String {
    if is_encoded(value) {
        return value.to_owned();
    }
    let mut out = String::with_capacity(value.len() * 3);
    for byte in value.bytes() {
        if unreserved(byte) {
            out.push(char::from(byte));
        } else {
            out.push('%');
            for nibble in [byte >> 4, byte & 0xf] {
                #[expect(clippy::indexing_slicing, reason = "a nibble indexes the 16 digits")]
                out.push(char::from(HEX[usize::from(nibble)]));
            }
        }
    }
    out
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&byte)
}

fn is_encoded(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut escapes = 0;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'%' if bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                escapes += 1;
                i += 3;
            }
            byte if unreserved(byte) => i += 1,
            _ => return false,
        }
    }
    escapes > 0 && decodes_to_utf8(value)
}

/// Whether the escapes decode to valid UTF-8 (`%E5%90` alone does not,
/// and `decodeURIComponent` would throw on it).
fn decodes_to_utf8(value: &str) -> bool {
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(byte) => decoded.push(byte),
                None => return false,
            }
            i += 3;
        } else {
            decoded.push(byte);
            i += 1;
        }
    }
    std::str::from_utf8(&decoded).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_found_as_written_and_decoded() {
        for dotted in [
            "..",
            ".",
            "../x",
            "a/../b",
            "a/.",
            "%2e%2e",
            "%2E",
            ".%2e",
            "..%2Fadmin",
            "..\\x",
            "%2e%2e%2fx",
        ] {
            assert!(has_dot_segment(dotted), "{dotted}");
        }
        for plain in ["v1.2", "a..b", ".hidden", "...", "x.", "%2e%2e%2e", "100%", "%zz", "name"] {
            assert!(!has_dot_segment(plain), "{plain}");
        }
    }

    #[test]
    fn path_values_are_encoded_like_encode_uri_component() {
        let rows = [
            ("hello world", "hello%20world"),
            ("user@example.com", "user%40example.com"),
            ("path/to/file", "path%2Fto%2Ffile"),
            ("名前", "%E5%90%8D%E5%89%8D"),
            ("../../../etc/passwd", "..%2F..%2F..%2Fetc%2Fpasswd"),
            ("", ""),
            ("a-b_c.d!e~f*g'h(i)j", "a-b_c.d!e~f*g'h(i)j"),
            // Already encoded: kept, not encoded twice.
            ("hello%20world", "hello%20world"),
            ("%E5%90%8D", "%E5%90%8D"),
            // Not a valid encoding: encoded as text.
            ("100%", "100%25"),
            ("%zz", "%25zz"),
            ("%E5%90", "%25E5%2590"),
            // Raw reserved characters next to escapes: not an encoding.
            ("a%2Fb/c", "a%252Fb%2Fc"),
        ];
        for (input, expected) in rows {
            assert_eq!(encode_component(input), expected, "{input:?}");
        }
    }

    #[test]
    fn base_paths_are_kept() {
        let base = Url::parse("https://api.example.com/v1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            join(&base, "/items").map(|u| u.to_string()),
            Some("https://api.example.com/v1/items".to_owned())
        );
    }
}
