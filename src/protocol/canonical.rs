//! Canonical JSON: object keys sorted at every level, no whitespace, so
//! the same arguments always read (and hash) the same, whatever order a
//! client wrote them in. Policies match it and confirmation tokens bind to
//! its hash.

use serde_json::{Map, Value};

pub fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter().map(|k| (k.clone(), sorted(&map[k]))).collect::<Map<_, _>>(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level() {
        assert_eq!(
            canonical(&json!({"b": {"y": 1, "x": [{"d": 1, "c": 2}]}, "a": 0})),
            r#"{"a":0,"b":{"x":[{"c":2,"d":1}],"y":1}}"#
        );
    }
}
