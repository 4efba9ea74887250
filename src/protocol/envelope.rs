//! The result envelope every operation answers with (spec 5.1), and how it
//! travels over MCP: one text content holding the JSON envelope, with
//! `isError` set for unrecoverable failures (`mcp-integration.md` 4.1).

use serde_json::{Map, Value};

use super::{batch::BatchReport, error::AqlError, registry::OperationResult};

/// What one request is answered with: one operation's result, or a batch
/// that ran (a batch that could not run is a single error).
#[derive(Debug)]
pub enum Answer {
    One(OperationResult),
    Batch(BatchReport),
}

impl From<Result<BatchReport, AqlError>> for Answer {
    fn from(batch: Result<BatchReport, AqlError>) -> Self {
        match batch {
            Ok(report) => Self::Batch(report),
            Err(error) => Self::One(Err(error)),
        }
    }
}

impl Answer {
    /// The JSON the agent reads; `warnings` travel with a single success
    /// only (the batch answer's schema has no place for them).
    pub fn envelope(&self, warnings: &[Value]) -> Value {
        match self {
            Self::One(result) => envelope(result, warnings),
            Self::Batch(report) => report.to_json(),
        }
    }

    /// MCP's `isError`: a batch that ran is a success whatever its items
    /// did (`operations.md` 7.3).
    pub fn is_error(&self) -> bool {
        match self {
            Self::One(result) => is_error(result),
            Self::Batch(_) => false,
        }
    }
}

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
    result.as_ref().err().is_some_and(|error| !error.code.is_recoverable())
}
