//! JSON Schemas that come from outside the dongle (a downstream tool's
//! input and output schemas, an adapter operation's response schema),
//! compiled on first use: a server with a thousand operations pays for
//! the ones an agent calls, not for every one before its first answer.
//!
//! A schema that cannot be compiled refuses every instance (fail closed):
//! the caller says why in its own terms.

use std::sync::{Arc, OnceLock};

use jsonschema::Validator;
use serde_json::Value;

use crate::protocol::error::AqlError;

/// The most problems one check reports.
const MAX_PROBLEMS: usize = 10;

pub struct LazySchema {
    schema: Arc<Value>,
    compiled: OnceLock<Result<Validator, String>>,
}

impl LazySchema {
    pub fn new(schema: Value) -> Self {
        Self { schema: Arc::new(schema), compiled: OnceLock::new() }
    }

    /// What is wrong with `instance` (at most [`MAX_PROBLEMS`], each at
    /// its JSON pointer); `Err` with why when the schema cannot be used.
    pub fn problems(&self, instance: &Value) -> Result<Vec<String>, String> {
        let validator = self
            .compiled
            .get_or_init(|| {
                jsonschema::validator_for(&self.schema)
                    .map_err(|error| format!("its schema cannot be used: {error}"))
            })
            .as_ref()?;
        Ok(validator
            .iter_errors(instance)
            .take(MAX_PROBLEMS)
            .map(|error| match error.instance_path().as_str() {
                "" => error.to_string(),
                path => format!("{path}: {error}"),
            })
            .collect())
    }
}

impl LazySchema {
    /// An upstream's answer to `operation` against this, its declared
    /// output schema: a mismatch, or a schema that cannot be used,
    /// withholds the answer.
    pub fn check_answer(&self, operation: &str, answer: &Value) -> Result<(), AqlError> {
        match self.problems(answer) {
            Ok(problems) if problems.is_empty() => Ok(()),
            Ok(problems) => Err(AqlError::answer_mismatch(operation, &problems)),
            Err(why) => Err(AqlError::answer_mismatch(
                operation,
                &[format!("the declared output schema: {why}")],
            )),
        }
    }
}

impl std::fmt::Debug for LazySchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazySchema").field("compiled", &self.compiled.get().is_some()).finish()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn problems_are_located_and_bounded_and_a_broken_schema_refuses() {
        let schema = LazySchema::new(
            json!({"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}),
        );
        assert_eq!(schema.problems(&json!({"n": 1})), Ok(vec![]));
        let wrong = schema.problems(&json!({"n": "one"})).unwrap();
        assert_eq!(wrong.len(), 1);
        assert!(wrong[0].starts_with("/n: "), "{wrong:?}");
        let many = LazySchema::new(json!({"type": "array", "items": {"type": "string"}}));
        assert_eq!(
            many.problems(&json!([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])).unwrap().len(),
            MAX_PROBLEMS
        );
        let broken = LazySchema::new(json!({"type": 7}));
        assert!(broken.problems(&json!({})).unwrap_err().contains("cannot be used"));
    }
}
