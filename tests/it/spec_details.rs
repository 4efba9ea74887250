//! The `details` each error and warning code carries, as the spec documents
//! them: read from `../shared/spec/docs/error-codes.md` (errors) and
//! `features/warnings.md` (warnings) at test time, never copied here.
//! Each code's `**Details:**` block is a TypeScript object type; a field
//! without `?` is required, and every documented field that is present
//! must have its documented type. Fields the spec does not document are
//! allowed (its `details` is `Record<string, unknown>`), and so are codes
//! it does not document. A documented string named `*_at` or `*_time` must
//! be an RFC 3339 time. One gap is the spec's own: a `VALIDATION_*` error
//! mapped from an upstream's HTTP 400 or 422 (it carries `http_status`)
//! cannot name the parameter (`error-codes.md` 6.2: "HTTP status codes
//! alone cannot distinguish"), so its required fields are not required;
//! what it carries is still type-checked.
//!
//! `support::call`, `envelope_of` and so every helper built on them check
//! each envelope they see with [`assert_documented_details`];
//! `tests/python/spec_details.py` reads the same blocks the same way for
//! the Python suite.

use std::{collections::BTreeMap, path::PathBuf, sync::OnceLock};

use serde_json::Value;

/// A documented field's type.
#[derive(Debug, Clone, PartialEq)]
enum FieldType {
    String,
    Number,
    Boolean,
    StringList,
    Object,
    /// `'a' | 'b'`.
    OneOf(Vec<String>),
    Unknown,
}

#[derive(Debug, Clone, PartialEq)]
struct Field {
    name: String,
    required: bool,
    ty: FieldType,
}

/// Documented fields by code.
type Table = BTreeMap<String, Vec<Field>>;

fn field_type(text: &str) -> FieldType {
    match text {
        "string" => FieldType::String,
        "number" => FieldType::Number,
        "boolean" => FieldType::Boolean,
        "string[]" => FieldType::StringList,
        "unknown" => FieldType::Unknown,
        t if t.starts_with("Record<") => FieldType::Object,
        t if t.starts_with('\'') => {
            FieldType::OneOf(t.split('|').map(|v| v.trim().trim_matches('\'').to_owned()).collect())
        }
        other => panic!("the spec documents a details type this checker cannot read: {other}"),
    }
}

/// Every code's `**Details:**` block in one document.
fn read_table(markdown: &str) -> Table {
    let mut table = Table::new();
    let (mut code, mut expecting, mut fields): (Option<String>, bool, Option<Vec<Field>>) =
        (None, false, None);
    for line in markdown.lines() {
        let trimmed = line.trim();
        if let Some(open) = fields.as_mut() {
            if trimmed.starts_with("```") {
                let done = fields.take().unwrap_or_default();
                table.insert(code.clone().expect("a details block under a code's heading"), done);
                expecting = false;
            } else if let Some((name, ty)) =
                trimmed.strip_suffix(';').and_then(|f| f.split_once(':'))
            {
                let (name, required) = match name.strip_suffix('?') {
                    Some(name) => (name, false),
                    None => (name, true),
                };
                open.push(Field {
                    name: name.trim().to_owned(),
                    required,
                    ty: field_type(ty.trim()),
                });
            }
        } else if trimmed.starts_with('#') {
            let last = trimmed.rsplit(' ').next().unwrap_or("").trim_matches('`');
            let is_code = last.contains('_')
                && last.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
            code = is_code.then(|| last.to_owned());
            expecting = false;
        } else if trimmed == "**Details:**" && code.is_some() {
            expecting = true;
        } else if expecting && trimmed.starts_with("```typescript") {
            fields = Some(Vec::new());
        }
    }
    table
}

fn spec_doc(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/docs").join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("read {}: {e} (../shared must sit beside the checkout)", path.display())
    })
}

fn error_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| read_table(&spec_doc("error-codes.md")))
}

fn warning_table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| read_table(&spec_doc("features/warnings.md")))
}

fn is_time(text: &str) -> bool {
    humantime::parse_rfc3339(text).is_ok()
}

/// What is wrong with `details` for `code`, by the documented fields.
fn problems(table: &Table, code: &str, details: &Value) -> Vec<String> {
    let Some(fields) = table.get(code) else { return Vec::new() };
    let empty = serde_json::Map::new();
    let Some(details) = details.as_object().or(details.is_null().then_some(&empty)) else {
        return vec![format!("{code}: details is not an object")];
    };
    let mapped_from_status = code.starts_with("VALIDATION_") && details.contains_key("http_status");
    let mut found = Vec::new();
    for field in fields {
        let Some(value) = details.get(&field.name) else {
            if field.required && !mapped_from_status {
                found.push(format!("{code}: documented field '{}' is missing", field.name));
            }
            continue;
        };
        let fits = match &field.ty {
            FieldType::String => value.as_str().is_some_and(|text| {
                !(field.name.ends_with("_at") || field.name.ends_with("_time")) || is_time(text)
            }),
            FieldType::Number => value.is_number(),
            FieldType::Boolean => value.is_boolean(),
            FieldType::StringList => {
                value.as_array().is_some_and(|items| items.iter().all(Value::is_string))
            }
            FieldType::Object => value.is_object(),
            FieldType::OneOf(allowed) => {
                value.as_str().is_some_and(|v| allowed.iter().any(|a| a == v))
            }
            FieldType::Unknown => true,
        };
        if !fits {
            found.push(format!(
                "{code}: field '{}' is {value}, not the documented {:?}",
                field.name, field.ty
            ));
        }
    }
    found
}

/// Every problem with the documented details of an envelope, its
/// warnings, and the results inside a batch answer.
fn envelope_problems(envelope: &Value) -> Vec<String> {
    let mut found = Vec::new();
    if envelope["success"] == false
        && let Some(code) = envelope["error"]["code"].as_str()
    {
        found.extend(problems(error_table(), code, &envelope["error"]["details"]));
    }
    for warning in envelope["warnings"].as_array().into_iter().flatten() {
        if let Some(code) = warning["code"].as_str() {
            found.extend(problems(warning_table(), code, &warning["details"]));
        }
    }
    for item in envelope["results"].as_array().into_iter().flatten() {
        found.extend(envelope_problems(&item["result"]));
    }
    if envelope["halted_at"].is_object() {
        found.extend(envelope_problems(&envelope["halted_at"]["result"]));
    }
    found
}

/// Fails when an envelope's error or warnings lack a documented field or
/// carry one with another type.
pub fn assert_documented_details(envelope: &Value) {
    let found = envelope_problems(envelope);
    assert!(found.is_empty(), "details not as documented: {found:#?} in {envelope:#}");
}

/// The checker reads what the spec documents and refuses the shapes
/// issue 35 found (so a check that passes means something).
#[test]
fn the_checker_reads_the_spec_and_refuses_undocumented_shapes() {
    let errors = error_table();
    let fields = |code: &str| -> Vec<(String, bool)> {
        errors[code].iter().map(|f| (f.name.clone(), f.required)).collect()
    };
    assert_eq!(
        fields("TOKEN_EXPIRED"),
        [("token".into(), true), ("expired_at".into(), true), ("current_time".into(), true)]
    );
    assert_eq!(
        fields("NOT_FOUND_RESOURCE"),
        [
            ("resource_type".into(), false),
            ("resource_id".into(), false),
            ("http_status".into(), false)
        ]
    );
    assert!(errors.len() >= 19, "every code of sections 4 and 5: {:?}", errors.keys());
    assert!(warning_table().contains_key("RATE_LIMIT_QUOTA_WARNING"));

    let envelope = |code: &str, details: Value| serde_json::json!({"success": false, "error": {"code": code, "message": "m", "details": details}});
    let refused = [
        envelope(
            "RATE_LIMIT_EXCEEDED",
            serde_json::json!({"limit": 10, "remaining": 0, "window": "minute", "resets_at": "2026-01-28T13:00:00Z", "retry_after_secs": 5}),
        ),
        envelope(
            "RATE_LIMIT_EXCEEDED",
            serde_json::json!({"limit": 10, "remaining": 0, "window": "fortnight", "resets_at": "2026-01-28T13:00:00Z", "retry_after_seconds": 5}),
        ),
        envelope("NOT_FOUND_RESOURCE", serde_json::json!({"http_status": "404"})),
        envelope("TOKEN_INVALID", serde_json::json!({"id": "conf_x"})),
        envelope(
            "TOKEN_EXPIRED",
            serde_json::json!({"token": "conf_x", "expired_at": 1_700_000_000_000_i64, "current_time": "2026-01-28T12:07:30Z"}),
        ),
        envelope(
            "RATE_LIMIT_QUOTA_EXHAUSTED",
            serde_json::json!({"metric": "requests_per_minute", "current": 3, "limit": 3}),
        ),
        envelope("VALIDATION_PAYLOAD_TOO_LARGE", serde_json::json!({"limit_bytes": 10})),
        envelope(
            "VALIDATION_INVALID_TYPE",
            serde_json::json!({"http_status": 422, "param_name": 7}),
        ),
        serde_json::json!({"success": true, "data": null, "warnings": [{"code": "RATE_LIMIT_QUOTA_WARNING", "message": "m", "details": {"metric": "m", "current": 2}}]}),
        serde_json::json!({"operations": [], "halted_at": {"index": 0, "result": envelope("TOKEN_ALREADY_USED", serde_json::json!({}))}}),
    ];
    for shape in refused {
        assert!(!envelope_problems(&shape).is_empty(), "accepted: {shape}");
    }
    let accepted = [
        envelope(
            "RATE_LIMIT_EXCEEDED",
            serde_json::json!({"limit": 10, "remaining": 0, "window": "minute", "resets_at": "2026-01-28T13:00:00.000Z", "retry_after_seconds": 5, "agent": "extra fields are allowed"}),
        ),
        envelope("NOT_FOUND_RESOURCE", serde_json::json!({"http_status": 404})),
        envelope("TRANSPORT_TIMEOUT", serde_json::json!({"undocumented": "codes pass"})),
        envelope("INTERNAL_ERROR", Value::Null),
        envelope("VALIDATION_INVALID_TYPE", serde_json::json!({"http_status": 422})),
    ];
    for shape in accepted {
        assert_eq!(envelope_problems(&shape), Vec::<String>::new(), "{shape}");
    }
}
