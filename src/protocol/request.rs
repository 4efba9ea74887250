//! Turning a tool call's arguments into a validated operation request.
//!
//! Parameters resolve from `params.<name>` first, then from a top-level
//! `<name>` (spec 4.2). Keys starting with `_` are metadata and never
//! validated (4.6.1). Unknown keys are refused with the full list of valid
//! ones; an explicit `null` counts as not supplied, so a required parameter
//! set to `null` is missing and an optional one takes its default.

use serde_json::{Map, Value};

use super::{
    error::AqlError,
    params::ParamSpec,
    registry::OperationSpec,
    selection::{FIELDS_PARAM, selects_fields},
};

/// The protocol-level fields of a request, never operation parameters.
const PROTOCOL_FIELDS: [&str; 2] = ["operation", "params"];

/// An operation's parameters after validation, with defaults applied. Only
/// declared parameters are present.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(Map<String, Value>);

impl Params {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(Value::as_str)
    }

    pub fn into_map(self) -> Map<String, Value> {
        self.0
    }
}

/// Reads the `operation` field of a request.
pub fn operation_name(arguments: &Map<String, Value>) -> Result<&str, AqlError> {
    match arguments.get("operation") {
        None | Some(Value::Null) => Err(AqlError::missing_operation()),
        Some(Value::String(name)) => Ok(name),
        Some(other) => Err(AqlError::invalid_type(None, "operation", "string", other)),
    }
}

/// The non-null value of `param` at one level of the request, under its
/// name or an alias. The same parameter under two names is ambiguous.
fn supplied_value<'a>(
    spec: &OperationSpec,
    param: &ParamSpec,
    level: Option<&'a Map<String, Value>>,
) -> Result<Option<&'a Value>, AqlError> {
    let Some(level) = level else { return Ok(None) };
    let mut found = level.iter().filter(|(key, value)| param.is_named(key) && !value.is_null());
    match (found.next(), found.next()) {
        (Some((_, value)), None) => Ok(Some(value)),
        (None, _) => Ok(None),
        (Some((first, _)), Some((second, _))) => {
            Err(AqlError::duplicate_param(&spec.name, &param.name, first, second))
        }
    }
}

/// Resolves and validates the parameters of `spec` from a request.
pub fn resolve_params(
    spec: &OperationSpec,
    arguments: &Map<String, Value>,
) -> Result<Params, AqlError> {
    let nested = match arguments.get("params") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => {
            return Err(AqlError::invalid_type(Some(&spec.name), "params", "object", other));
        }
    };
    let top_level = arguments.iter().filter(|(key, _)| !PROTOCOL_FIELDS.contains(&key.as_str()));
    let supplied = nested.into_iter().flatten().chain(top_level);

    let mut unknown: Vec<String> = Vec::new();
    for (key, _) in supplied {
        if !key.starts_with('_') && spec.param(key).is_none() && !unknown.contains(key) {
            unknown.push(key.clone());
        }
    }
    if !unknown.is_empty() {
        // `fields` is taken out before the operation's own parameters are
        // resolved, but it is valid wherever the router selects fields.
        let selected = selects_fields(spec).then_some(FIELDS_PARAM);
        let valid: Vec<&str> =
            spec.params.iter().map(|p| p.name.as_str()).chain(selected).collect();
        return Err(AqlError::unknown_params(&spec.name, &unknown, &valid));
    }

    let mut resolved = Map::new();
    for param in &spec.params {
        let value =
            supplied_value(spec, param, nested)?.or(supplied_value(spec, param, Some(arguments))?);
        match (value, &param.default) {
            (Some(value), _) => {
                param.check(&spec.name, value)?;
                resolved.insert(param.name.clone(), value.clone());
            }
            (None, _) if param.required => {
                return Err(AqlError::missing_param(&spec.name, &param.name));
            }
            (None, Some(default)) => {
                resolved.insert(param.name.clone(), default.clone());
            }
            (None, None) => {}
        }
    }
    Ok(Params(resolved))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::{
        error::ErrorCode,
        params::{ParamSpec, ParamType},
        registry::{Category, ReturnType},
    };

    fn spec() -> OperationSpec {
        OperationSpec {
            name: "get_thing".into(),
            category: Category::Read,
            description: "test".into(),
            params: vec![
                ParamSpec::required("id", ParamType::String, "id"),
                ParamSpec::optional("limit", ParamType::Integer, "limit").with_default(json!(10)),
                ParamSpec::optional("order", ParamType::String, "order").one_of(&["asc", "desc"]),
            ],
            returns: ReturnType { name: "Thing", kind: "object", description: "" },
            examples: vec![],
            source: None,
            origin: None,
            danger_level: None,
            lifecycle: None,
            field_presets: Default::default(),
        }
    }

    fn resolve(request: Value) -> Result<Params, AqlError> {
        match request {
            Value::Object(map) => resolve_params(&spec(), &map),
            _ => panic!("request must be an object"),
        }
    }

    #[test]
    fn nested_params_win_over_top_level() {
        let params =
            resolve(json!({"operation": "get_thing", "id": "top", "params": {"id": "nested"}}))
                .unwrap();
        assert_eq!(params.str("id"), Some("nested"));
        let params = resolve(json!({"operation": "get_thing", "id": "top"})).unwrap();
        assert_eq!(params.str("id"), Some("top"));
    }

    #[test]
    fn defaults_apply_and_null_means_absent() {
        let params = resolve(json!({"params": {"id": "a", "limit": null}})).unwrap();
        assert_eq!(params.get("limit"), Some(&json!(10)));
        assert_eq!(params.get("order"), None);
        let err = resolve(json!({"params": {"id": null}})).unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationMissingParam);
        assert_eq!(err.details["param_name"], "id");
    }

    #[test]
    fn unknown_params_at_both_levels_are_listed_but_underscore_keys_pass() {
        let err = resolve(json!({"params": {"id": "a", "bogus": 1, "_meta": {}}, "extra": true, "_request_id": "r"}))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationUnknownParam);
        assert_eq!(err.details["unknown_params"], json!(["bogus", "extra"]));
        assert_eq!(
            err.details["valid_params"],
            json!(["id", "limit", "order", "fields"]),
            "fields is valid wherever the router selects fields"
        );
    }

    #[test]
    fn aliases_are_accepted_but_not_twice() {
        let mut spec = spec();
        spec.params.push(
            ParamSpec::optional("next_action_hint", ParamType::String, "hint")
                .alias("nextActionHint"),
        );
        let map = |v: Value| match v {
            Value::Object(m) => m,
            _ => panic!(),
        };
        let params =
            resolve_params(&spec, &map(json!({"params": {"id": "a", "nextActionHint": "ls"}})))
                .unwrap();
        assert_eq!(params.str("next_action_hint"), Some("ls"));
        let err = resolve_params(
            &spec,
            &map(json!({"params": {"id": "a", "nextActionHint": "ls", "next_action_hint": "rm"}})),
        )
        .unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationInvalidValue);
    }

    #[test]
    fn wrong_types_and_values() {
        let err = resolve(json!({"params": {"id": 5}})).unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationInvalidType);
        assert_eq!(err.details["expected_type"], "string");
        assert_eq!(err.details["actual_type"], "integer");
        let err = resolve(json!({"params": {"id": "a", "limit": 2.5}})).unwrap_err();
        assert_eq!(err.details["actual_type"], "number");
        assert!(resolve(json!({"params": {"id": "a", "limit": 3.0}})).is_ok());
        let err = resolve(json!({"params": {"id": "a", "order": "sideways"}})).unwrap_err();
        assert_eq!(err.code, ErrorCode::ValidationInvalidValue);
        let err = resolve(json!({"params": "id=a"})).unwrap_err();
        assert_eq!(err.details["param_name"], "params");
    }
}
