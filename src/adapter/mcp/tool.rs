//! A downstream tool as an MCP-AQL operation: `<server>__<tool>`, in the
//! semantic category its annotations or verb suggest (the server's
//! `categories` table overrides both), with its JSON Schema input as
//! introspectable parameters and its details' description ending in
//! `[downstream server 'S', tool 'T'; danger_level: L]`. Its example is
//! the minimal call (the required parameters: defaults, first enum
//! values, or placeholders) when the schema says no more about those
//! parameters than their type, enum and default, so the schema accepts
//! it; a tool whose required parameters carry patterns, bounds or
//! combinators gets no example rather than one its schema might refuse.
//!
//! It runs the gate's one sequence (`gate::operation`): a call is
//! validated against the tool's own input schema, then judged by the gate,
//! and only then forwarded with its admission. The downstream's `structuredContent`
//! is the result when it has one, else its content blocks; a tool that
//! declares an `outputSchema` must answer with structured content that
//! matches it, or the answer is withheld (`SERIALIZATION_PARSE_ERROR`,
//! with what did not match). An `isError` result comes back as a
//! `TOOL_EXECUTION_FAILED` failure carrying the downstream's content,
//! never as a crash. Both schemas are compiled on the first call.
//!
//! A call safe to repeat (the server's `retryable` table says so, else
//! the tool's annotations: `readOnlyHint` or `idempotentHint`) whose
//! connection failed or that timed out is retried with the backoff HTTP
//! adapters use (`adapter::retry`), each retry waiting for a restarting
//! server, so a crashed server's restarted process answers it. Any other
//! call is sent at most once: a failure ends it at once.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};

use crate::{
    adapter::{
        json_schema::LazySchema,
        naming::{category_from_verb, unique_names},
        retry::{Retry, RetryPolicy, transient},
    },
    gate::{
        Admission, Gate,
        danger::DangerLevel,
        operation::{GatedOperation, Judged, Outcome, Prepared, SendFuture, Sent, Upstream},
    },
    protocol::{
        error::AqlError,
        params::{ParamSpec, ParamType},
        registry::{CallContext, Category, Operation, OperationSpec, ReturnType},
    },
};

use super::connection::Downstream;

/// One downstream tool as the gate's upstream.
pub struct ProxiedTool {
    operation: String,
    tool: String,
    server: Arc<Downstream>,
    input: LazySchema,
    output: Option<LazySchema>,
    /// How its failed calls are retried; no retries when it is not safe
    /// to repeat.
    retry: RetryPolicy,
}

/// The operations for a server's tools.
pub fn operations(
    server: &Arc<Downstream>,
    tools: &[Tool],
    gate: &Arc<Gate>,
) -> Vec<Arc<dyn Operation>> {
    let raw: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let names = unique_names(&raw);
    tools
        .iter()
        .zip(names)
        .map(|(tool, name)| Arc::new(operation(server, tool, &name, gate)) as Arc<dyn Operation>)
        .collect()
}

fn operation(
    server: &Arc<Downstream>,
    tool: &Tool,
    name: &str,
    gate: &Arc<Gate>,
) -> GatedOperation<ProxiedTool> {
    let category = classify(server, tool, name);
    let danger = DangerLevel::classify(category, name);
    let description = tool
        .description
        .as_deref()
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .unwrap_or_default();
    let input = LazySchema::new(Value::Object(tool.input_schema.as_ref().clone()));
    let output = tool
        .output_schema
        .as_ref()
        .map(|schema| LazySchema::new(Value::Object(schema.as_ref().clone())));
    let mut spec = OperationSpec {
        name: format!("{}__{name}", server.name()),
        category,
        description,
        params: params_from_schema(&tool.input_schema),
        returns: ReturnType {
            name: "ToolResult",
            kind: "object",
            description: "The downstream tool's structuredContent when it has one, else its content blocks",
        },
        examples: Vec::new(),
        source: Some(server.name().to_owned()),
        origin: Some(format!("downstream server '{}', tool '{}'", server.name(), tool.name)),
        danger_level: None,
        lifecycle: None,
        field_presets: Default::default(),
    };
    let (description, example) = spec.minimal_example();
    if schema_accepts(&tool.input_schema, &example) {
        spec.examples.push((description, example));
    }
    let judged = Judged {
        source: server.name().to_owned(),
        danger,
        trust: None,
        requires_confirmation: false,
    };
    let configured = server.settings().retry_policy();
    let retry = if safe_to_repeat(server, tool, name) {
        configured
    } else {
        RetryPolicy { max_retries: 0, ..configured }
    };
    let upstream = ProxiedTool {
        operation: spec.name.clone(),
        tool: tool.name.to_string(),
        server: server.clone(),
        input,
        output,
        retry,
    };
    GatedOperation::new(spec, judged, upstream, gate.clone())
}

impl Upstream for ProxiedTool {
    type Call = JsonObject;

    fn prepare(
        &self,
        _spec: &OperationSpec,
        arguments: JsonObject,
    ) -> Result<Prepared<JsonObject>, AqlError> {
        let instance = Value::Object(arguments);
        self.check_arguments(&instance)?;
        let Value::Object(arguments) = instance.clone() else {
            return Err(AqlError::internal("proxied arguments were not an object"));
        };
        Ok(Prepared { call: arguments, judged_arguments: instance })
    }

    fn send<'a>(
        &'a self,
        admission: &'a Admission,
        arguments: JsonObject,
        context: &'a CallContext,
    ) -> SendFuture<'a> {
        Box::pin(async move {
            let attempt = |number: u32| {
                self.server.call_tool(admission, &self.tool, arguments.clone(), context, number > 0)
            };
            let judge = |outcome: &Result<CallToolResult, AqlError>| match outcome {
                Err(error) if transient(error) && !self.server.is_stopped() => {
                    Retry::Backoff { why: error.code.as_str().to_owned() }
                }
                _ => Retry::Done,
            };
            let answered = self
                .retry
                .run(
                    &self.operation,
                    &context.cancelled,
                    || AqlError::downstream_cancelled(self.server.name()),
                    attempt,
                    judge,
                )
                .await;
            match answered {
                Ok(result) if result.is_error == Some(true) => {
                    Sent { outcome: Outcome::ToolError, result: Err(self.failure(result)) }
                }
                Ok(result) => match self.check_answer(result) {
                    Ok(data) => Sent { outcome: Outcome::Ok, result: Ok(data) },
                    Err(error) => Sent { outcome: Outcome::AnswerMismatch, result: Err(error) },
                },
                Err(error) => Sent { outcome: Outcome::Failed, result: Err(error) },
            }
        })
    }
}

impl ProxiedTool {
    /// The arguments against the tool's input schema, before anyone is
    /// asked about the call.
    fn check_arguments(&self, instance: &Value) -> Result<(), AqlError> {
        let problems = self.input.problems(instance).map_err(|why| {
            AqlError::downstream_unavailable(
                self.server.name(),
                &format!("tool '{}': {why}", self.tool),
            )
        })?;
        if problems.is_empty() {
            Ok(())
        } else {
            Err(AqlError::schema_violation(&self.operation, &problems))
        }
    }

    /// The answer's data: its `structuredContent`, checked against the
    /// tool's output schema when it declares one (then the structured
    /// content must be there: MCP requires it), else its content blocks.
    fn check_answer(&self, result: CallToolResult) -> Result<Value, AqlError> {
        let Some(output) = &self.output else { return Ok(result_data(result)) };
        let Some(structured) = result.structured_content else {
            return Err(AqlError::answer_mismatch(
                &self.operation,
                &["the tool declares an output schema but answered without structuredContent"
                    .to_owned()],
            ));
        };
        output.check_answer(&self.operation, &structured)?;
        Ok(structured)
    }

    fn failure(&self, result: CallToolResult) -> AqlError {
        let summary = result
            .content
            .iter()
            .find_map(|block| {
                block.as_text().map(|text| text.text.chars().take(300).collect::<String>())
            })
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

/// Whether a failed call may be sent again: the server's `retryable`
/// table first (by the tool's own name or its operation name), else the
/// tool's own claim that it only reads or is idempotent. A name that
/// merely sounds like a read (`get_`) is no such claim.
fn safe_to_repeat(server: &Downstream, tool: &Tool, name: &str) -> bool {
    let declared = &server.settings().retryable;
    if let Some(retryable) = declared.get(tool.name.as_ref()).or_else(|| declared.get(name)) {
        return *retryable;
    }
    tool.annotations.as_ref().is_some_and(|hints| {
        hints.read_only_hint == Some(true) || hints.idempotent_hint == Some(true)
    })
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
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
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

/// Keys of an input schema that say nothing about a call made of its
/// declared properties.
const PLAIN_SCHEMA_KEYS: [&str; 9] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "description",
    "title",
    "$schema",
    "$defs",
    "definitions",
];
/// Keys of a property that [`params_from_schema`] carries over whole.
const PLAIN_PROPERTY_KEYS: [&str; 5] = ["type", "description", "title", "default", "enum"];

/// Whether `example` (values for the required properties) is one the
/// schema certainly accepts: the schema and each required property say
/// no more than a type, an enum and a default, every required property
/// has a value, and each value has its property's type and is one of its
/// enum.
fn schema_accepts(schema: &JsonObject, example: &Value) -> bool {
    let plain =
        |object: &JsonObject, keys: &[&str]| object.keys().all(|key| keys.contains(&key.as_str()));
    let Some(values) = example.as_object() else { return false };
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten();
    plain(schema, &PLAIN_SCHEMA_KEYS)
        && required
            .into_iter()
            .all(|name| name.as_str().is_some_and(|name| values.contains_key(name)))
        && values.iter().all(|(name, value)| {
            properties.and_then(|p| p.get(name)).and_then(Value::as_object).is_some_and(
                |property| {
                    let typed = match property.get("type") {
                        None => true,
                        Some(Value::String(ty)) => has_json_type(value, ty),
                        Some(Value::Array(types)) => types
                            .iter()
                            .filter_map(Value::as_str)
                            .any(|ty| has_json_type(value, ty)),
                        Some(_) => false,
                    };
                    let allowed = property
                        .get("enum")
                        .and_then(Value::as_array)
                        .is_none_or(|allowed| allowed.contains(value));
                    plain(property, &PLAIN_PROPERTY_KEYS) && typed && allowed
                },
            )
        })
}

fn has_json_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// A schema `type`: one type, or one type and `null`; anything else is
/// left to the schema.
fn param_type(declared: Option<&Value>) -> ParamType {
    let single = match declared {
        Some(Value::String(ty)) => Some(ty.as_str()),
        Some(Value::Array(types)) => {
            let named: Vec<&str> =
                types.iter().filter_map(Value::as_str).filter(|t| *t != "null").collect();
            if let [one] = named.as_slice() { Some(*one) } else { None }
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
        let by_name =
            |n: &str| params.iter().find(|p| p.name == n).cloned().unwrap_or_else(|| panic!("{n}"));
        assert!(by_name("path").required && by_name("path").ty == ParamType::String);
        assert_eq!(by_name("mode").default, Some(json!("a")));
        assert_eq!(by_name("mode").allowed, Some(vec![json!("a"), json!("b")]));
        assert_eq!(by_name("count").ty, ParamType::Integer);
        assert_eq!(by_name("value").ty, ParamType::Any);
        assert_eq!(by_name("loose").ty, ParamType::Any);
        assert!(params_from_schema(&object(json!({"type": "object"}))).is_empty());
    }

    /// The minimal call a tool's schema gets as its example.
    fn example(schema: &JsonObject) -> Value {
        let spec = OperationSpec {
            name: "s__t".into(),
            category: Category::Read,
            description: String::new(),
            params: params_from_schema(schema),
            returns: ReturnType { name: "ToolResult", kind: "object", description: "" },
            examples: Vec::new(),
            source: None,
            origin: None,
            danger_level: None,
            lifecycle: None,
            field_presets: Default::default(),
        };
        spec.minimal_example().1
    }

    #[test]
    fn a_minimal_call_is_an_example_only_when_the_schema_surely_accepts_it() {
        let plain = object(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Where"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "count": {"type": ["integer", "null"], "default": 3},
                "depth": {"type": "integer"},
                "optional": {"type": "string", "pattern": "^x"}
            },
            "required": ["path", "mode", "count", "depth"],
            "additionalProperties": false
        }));
        let call = example(&plain);
        assert_eq!(call, json!({"path": "<path>", "mode": "a", "count": 3, "depth": 1}));
        assert!(schema_accepts(&plain, &call));
        let valid = jsonschema::validator_for(&Value::Object(plain.clone())).unwrap();
        assert!(valid.is_valid(&call), "the schema itself accepts the example");

        let refusing = [
            json!({"type": "object", "properties": {"path": {"type": "string", "pattern": "^/"}}, "required": ["path"]}),
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}, "required": ["n"]}),
            json!({"type": "object", "properties": {"v": {"type": ["object", "array"]}}, "required": ["v"]}),
            json!({"type": "object", "properties": {"v": {"type": "string", "enum": ["a"], "default": "b"}}, "required": ["v"]}),
            json!({"type": "object", "properties": {}, "required": ["undeclared"]}),
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "oneOf": [{"required": ["a"]}]}),
        ];
        for schema in refusing {
            let schema = object(schema);
            assert!(!schema_accepts(&schema, &example(&schema)), "{schema:?}");
        }
        let nothing_required = object(
            json!({"type": "object", "properties": {"q": {"type": "string", "minLength": 3}}}),
        );
        assert_eq!(example(&nothing_required), json!({}));
        assert!(schema_accepts(&nothing_required, &json!({})));
    }
}
