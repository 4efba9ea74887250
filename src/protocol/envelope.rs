//! The result envelope every operation answers with (spec 5.1), and how it
//! travels over MCP: one text content holding the JSON envelope, with
//! `isError` set for unrecoverable failures (`mcp-integration.md` 4.1).

use serde_json::{Map, Value};

use super::registry::OperationResult;

/// `{success:true, data, warnings?}` or
/// `{success:false, error:{code, message, details}}`; warnings travel only
/// with a success (spec `features/warnings.md`).
pub fn envelope(result: &OperationResult, warnings: &[Value]) -> Value {
    let mut object = Map::new();
    match result {
        Ok(data) => {
            object.insert("success".into(), true.into());
            object.insert("data".into(), data.clone());
            if !warnings.is_empty() {
                object.insert("warnings".into(), Value::Array(warnings.to_vec()));
            }
        }
        Err(error) => {
            let mut body = Map::new();
            body.insert("code".into(), error.code.as_str().into());
            body.insert("message".into(), error.message.clone().into());
            if !error.details.is_empty() {
                body.insert("details".into(), Value::Object(error.details.clone()));
            }
            object.insert("success".into(), false.into());
            object.insert("error".into(), Value::Object(body));
        }
    }
    Value::Object(object)
}

/// MCP's `isError` for a result.
pub fn is_error(result: &OperationResult) -> bool {
    result
        .as_ref()
        .err()
        .is_some_and(|error| !error.code.is_recoverable())
}
