//! A downstream tool as an MCP-AQL operation: `<server>__<tool>`, in the
//! semantic category its annotations or verb suggest (the server's
//! `categories` table overrides both), with its JSON Schema input as
//! introspectable parameters and its description ending in
//! `[downstream server 'S', tool 'T'; danger_level: L]`.
//!
//! A call is validated against the tool's own input schema, then judged by
//! the gate, and only then forwarded. The downstream's `structuredContent`
//! is the result when it has one, else its content blocks; an `isError`
//! result comes back as a `TOOL_EXECUTION_FAILED` failure carrying the
//! downstream's content, never as a crash.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};

use crate::{
    adapter::{
        danger::DangerLevel,
        gate::{GatedCall, OperationGate, add_token_param, take_token},
        naming::{category_from_verb, unique_names},
    },
    protocol::{
        error::AqlError,
        params::{ParamSpec, ParamType},
        registry::{CallContext, Category, Operation, OperationFuture, OperationSpec, ReturnType},
        request::Params,
        router::Router,
    },
};

use super::connection::Downstream;

/// How many schema violations one refusal lists.
const MAX_PROBLEMS: usize = 10;

pub struct ProxiedTool {
    spec: OperationSpec,
    tool: String,
    token_param: &'static str,
    server: Arc<Downstream>,
    danger: DangerLevel,
    schema: Result<jsonschema::Validator, String>,
    gate: Arc<OperationGate>,
}

/// The operations for a server's tools.
pub fn operations(server: &Arc<Downstream>, tools: &[Tool], gate: &Arc<OperationGate>) -> Vec<Arc<dyn Operation>> {
    let raw: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let names = unique_names(&raw);
    tools
        .iter()
        .zip(names)
        .map(|(tool, name)| Arc::new(ProxiedTool::new(server, tool, &name, gate)) as Arc<dyn Operation>)
        .collect()
}

impl ProxiedTool {
    fn new(server: &Arc<Downstream>, tool: &Tool, name: &str, gate: &Arc<OperationGate>) -> Self {
        let category = classify(server, tool, name);
        let danger = DangerLevel::classify(category, name);
        let mut params = params_from_schema(&tool.input_schema);
        let token_param = add_token_param(&mut params);
        // The spec's introspection schema admits no extra fields, so where
        // the operation comes from and its danger level travel in the
        // description.
        let own = tool.description.as_deref().map(str::to_owned).or_else(|| tool.title.clone()).unwrap_or_default();
        let description = format!(
            "{own} [downstream server '{}', tool '{}'; danger_level: {}]",
            server.name(),
            tool.name,
            danger.name()
        )
        .trim_start()
        .to_owned();
        let schema = jsonschema::validator_for(&Value::Object(tool.input_schema.as_ref().clone()))
            .map_err(|e| format!("tool '{}' has an input schema that cannot be used: {e}", tool.name));
        Self {
            spec: OperationSpec {
                name: format!("{}__{name}", server.name()),
                category,
                description,
                params,
                returns: ReturnType {
                    name: "ToolResult",
                    kind: "object",
                    description: "The downstream tool's structuredContent when it has one, else its content blocks",
                },
                examples: Vec::new(),
                source: Some(server.name().to_owned()),
            },
            tool: tool.name.to_string(),
            token_param,
            server: server.clone(),
            danger,
            schema,
            gate: gate.clone(),
        }
    }

    fn check_schema(&self, instance: &Value) -> Result<(), AqlError> {
        let validator = self.schema.as_ref().map_err(|why| AqlError::downstream_unavailable(self.server.name(), why))?;
        let problems: Vec<String> = validator
            .iter_errors(instance)
            .take(MAX_PROBLEMS)
            .map(|error| match error.instance_path().as_str() {
                "" => error.to_string(),
                path => format!("{path}: {error}"),
            })
            .collect();
        if problems.is_empty() { Ok(()) } else { Err(AqlError::schema_violation(&self.spec.name, &problems)) }
    }

    async fn call(&self, call: &CallContext, params: Params) -> Result<Value, AqlError> {
        let mut arguments: JsonObject = params.into_map();
        let token = take_token(&mut arguments, self.token_param);
        let instance = Value::Object(arguments);
        self.check_schema(&instance)?;
        let request = GatedCall { operation: &self.spec.name, source: self.server.name(), danger: self.danger, arguments: &instance, token: token.as_deref(), trust: None, requires_confirmation: false };
        let admitted = self.gate.admit(call, request).await?;
        let Value::Object(arguments) = instance else {
            return Err(AqlError::internal("proxied arguments were not an object"));
        };
        let answered = self.server.call_tool(&self.tool, arguments, call).await;
        let (outcome, result) = match answered {
            Ok(result) if result.is_error == Some(true) => ("tool_error", Err(self.failure(result))),
            Ok(result) => ("ok", Ok(result_data(result))),
            Err(error) => ("failed", Err(error)),
        };
        self.gate.record_outcome(call, &admitted, outcome);
        result
    }

    fn failure(&self, result: CallToolResult) -> AqlError {
        let summary = result
            .content
            .iter()
            .find_map(|block| block.as_text().map(|text| text.text.chars().take(300).collect::<String>()))
            .unwrap_or_else(|| "no message".to_owned());
        AqlError::tool_failed(self.server.name(), &self.tool, &summary, result_data(result))
    }
}

/// `structuredContent` when present, else the content blocks as JSON.
fn result_data(result: CallToolResult) -> Value {
    match result.structured_content {
        Some(structured) => structured,
        None => serde_json::to_value(&result.content).unwrap_or_else(|_| json!([])),
    }
}

impl Operation for ProxiedTool {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(&'a self, _router: &'a Router, call: &'a CallContext, params: Params) -> OperationFuture<'a> {
        Box::pin(self.call(call, params))
    }
}

/// The override table first (by the tool's own name or its operation
/// name), then the annotations, then the verb; EXECUTE when none speaks.
fn classify(server: &Downstream, tool: &Tool, name: &str) -> Category {
    let overrides = &server.settings().categories;
    if let Some(category) = overrides.get(tool.name.as_ref()).or_else(|| overrides.get(name)) {
        return *category;
    }
    let hints = tool.annotations.as_ref();
    if hints.and_then(|a| a.read_only_hint) == Some(true) {
        return Category::Read;
    }
    if hints.and_then(|a| a.destructive_hint) == Some(true) {
        return Category::Delete;
    }
    category_from_verb(name).unwrap_or(Category::Execute)
}

/// Parameters from a JSON Schema object: its properties, with type,
/// required, description, default and enum.
fn params_from_schema(schema: &JsonObject) -> Vec<ParamSpec> {
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let description = property.get("description").and_then(Value::as_str).unwrap_or("");
            let ty = param_type(property.get("type"));
            let mut param = if required.contains(&name.as_str()) {
                ParamSpec::required(name, ty, description)
            } else {
                ParamSpec::optional(name, ty, description)
            };
            if let Some(default) = property.get("default") {
                param = param.with_default(default.clone());
            }
            if let Some(Value::Array(allowed)) = property.get("enum") {
                param.allowed = Some(allowed.clone());
            }
            param
        })
        .collect()
}

/// A schema `type`: one type, or one type and `null`; anything else is
/// left to the schema.
fn param_type(declared: Option<&Value>) -> ParamType {
    let single = match declared {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => {
            let named: Vec<&str> = types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            if named.len() == 1 { Some(named[0]) } else { None }
        }
        _ => None,
    };
    match single {
        Some("string") => ParamType::String,
        Some("integer") => ParamType::Integer,
        Some("number") => ParamType::Number,
        Some("boolean") => ParamType::Boolean,
        Some("object") => ParamType::Object,
        Some("array") => ParamType::Array,
        _ => ParamType::Any,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> JsonObject {
        match value {
            Value::Object(map) => map,
            _ => JsonObject::new(),
        }
    }

    #[test]
    fn schema_properties_become_parameters() {
        let schema = object(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "count": {"type": ["integer", "null"]},
                "value": {"type": ["string", "number"]},
                "loose": {}
            },
            "required": ["path"]
        }));
        let params = params_from_schema(&schema);
        let by_name = |n: &str| params.iter().find(|p| p.name == n).cloned().unwrap_or_else(|| panic!("{n}"));
        assert!(by_name("path").required && by_name("path").ty == ParamType::String);
        assert_eq!(by_name("mode").default, Some(json!("a")));
        assert_eq!(by_name("mode").allowed, Some(vec![json!("a"), json!("b")]));
        assert_eq!(by_name("count").ty, ParamType::Integer);
        assert_eq!(by_name("value").ty, ParamType::Any);
        assert_eq!(by_name("loose").ty, ParamType::Any);
        assert!(params_from_schema(&object(json!({"type": "object"}))).is_empty());
    }
}
