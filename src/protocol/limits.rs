//! Payload limits of spec 4.7.5 and the checks that enforce them on a
//! request's arguments.
//!
//! The request-size limit is enforced by the transports on the raw frame
//! (see `server::screen`); everything structural is enforced here, on the
//! parsed arguments, so every transport gets the same answer.

use serde_json::{Map, Value, json};

use super::error::{AqlError, LimitKind};

/// The limits in force. Defaults are the spec's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_request_size: usize,
    pub max_response_size: usize,
    pub max_string_length: usize,
    pub max_array_elements: usize,
    pub max_nesting_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_request_size: 1024 * 1024,
            max_response_size: 10 * 1024 * 1024,
            max_string_length: 1024 * 1024,
            max_array_elements: 10_000,
            max_nesting_depth: 32,
        }
    }
}

impl Limits {
    /// The `_protocol.limits` object of introspection.
    pub fn metadata(&self) -> Value {
        json!({
            "max_request_size": self.max_request_size,
            "max_response_size": self.max_response_size,
            "max_string_length": self.max_string_length,
            "max_array_elements": self.max_array_elements,
            "max_nesting_depth": self.max_nesting_depth,
        })
    }

    /// Checks a request's arguments object: nesting depth (the object itself
    /// is level 1), string lengths in bytes, array lengths, and null bytes in
    /// any string or key. Reports the first violation found.
    pub fn check_arguments(&self, arguments: &Map<String, Value>) -> Result<(), AqlError> {
        self.check_object(arguments, 1, &mut String::new())
    }

    fn check_object(
        &self,
        object: &Map<String, Value>,
        depth: usize,
        path: &mut String,
    ) -> Result<(), AqlError> {
        self.check_depth(depth)?;
        for (key, value) in object {
            let restore = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
            check_no_null_byte(key, path)?;
            self.check_value(value, depth, path)?;
            path.truncate(restore);
        }
        Ok(())
    }

    fn check_value(&self, value: &Value, depth: usize, path: &mut String) -> Result<(), AqlError> {
        match value {
            Value::String(s) => {
                if s.len() > self.max_string_length {
                    return Err(AqlError::payload_too_large(
                        LimitKind::StringLength,
                        self.max_string_length,
                        s.len(),
                    ));
                }
                check_no_null_byte(s, path)
            }
            Value::Array(items) => {
                self.check_depth(depth + 1)?;
                if items.len() > self.max_array_elements {
                    return Err(AqlError::payload_too_large(
                        LimitKind::ArrayElements,
                        self.max_array_elements,
                        items.len(),
                    ));
                }
                for (index, item) in items.iter().enumerate() {
                    let restore = path.len();
                    path.push_str(&format!("[{index}]"));
                    self.check_value(item, depth + 1, path)?;
                    path.truncate(restore);
                }
                Ok(())
            }
            Value::Object(object) => self.check_object(object, depth + 1, path),
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), AqlError> {
        if depth > self.max_nesting_depth {
            return Err(AqlError::payload_too_large(
                LimitKind::NestingDepth,
                self.max_nesting_depth,
                depth,
            ));
        }
        Ok(())
    }
}

fn check_no_null_byte(text: &str, path: &str) -> Result<(), AqlError> {
    match text.find('\0') {
        Some(offset) => Err(AqlError::invalid_encoding(path, "null byte", Some(offset))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error::ErrorCode;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("test arguments must be an object"),
        }
    }

    fn nested_objects(levels: usize) -> Value {
        (1..levels).fold(json!({}), |inner, _| json!({ "a": inner }))
    }

    #[test]
    fn depth_counts_the_root_as_level_one() {
        let limits = Limits::default();
        assert!(limits.check_arguments(&args(nested_objects(32))).is_ok());
        let err = limits
            .check_arguments(&args(nested_objects(33)))
            .expect_err("33 levels must be refused");
        assert_eq!(err.code, ErrorCode::ValidationPayloadTooLarge);
        assert_eq!(err.details["limit_type"], "nesting_depth");
        assert_eq!(err.details["actual_value"], 33);
    }

    #[test]
    fn arrays_count_as_levels() {
        let limits = Limits { max_nesting_depth: 3, ..Limits::default() };
        assert!(limits.check_arguments(&args(json!({"a": [[1]]}))).is_ok());
        assert!(limits.check_arguments(&args(json!({"a": [[[1]]]}))).is_err());
    }

    #[test]
    fn array_and_string_limits() {
        let limits = Limits::default();
        let ok = json!({ "xs": vec![0; 10_000], "s": "x".repeat(1024 * 1024) });
        assert!(limits.check_arguments(&args(ok)).is_ok());
        let err = limits
            .check_arguments(&args(json!({ "xs": vec![0; 10_001] })))
            .expect_err("too many elements");
        assert_eq!(err.details["limit_type"], "array_elements");
        assert_eq!(err.details["actual_value"], 10_001);
        let err = limits
            .check_arguments(&args(json!({ "s": "é".repeat(600_000) })))
            .expect_err("string length counts bytes");
        assert_eq!(err.details["limit_type"], "string_length");
        assert_eq!(err.details["actual_value"], 1_200_000);
    }

    #[test]
    fn null_bytes_in_values_and_keys_are_refused_with_their_location() {
        let limits = Limits::default();
        let err = limits
            .check_arguments(&args(json!({ "params": { "list": ["ok", "a\u{0}b"] } })))
            .expect_err("null byte in a value");
        assert_eq!(err.code, ErrorCode::ValidationInvalidEncoding);
        assert_eq!(err.details["location"], "params.list[1]");
        assert_eq!(err.details["byte_offset"], 1);
        let err =
            limits.check_arguments(&args(json!({ "k\u{0}": 1 }))).expect_err("null byte in a key");
        assert_eq!(err.code, ErrorCode::ValidationInvalidEncoding);
    }
}
