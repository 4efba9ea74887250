//! The `introspect` operation (spec 7, `introspection.md`): lists and
//! details of operations and types, derived from the registry, so what
//! introspection says is exactly what validation enforces.

use serde_json::{Value, json};

use super::{
    params::{ParamSpec, ParamType},
    registry::{CallContext, Category, Operation, OperationFuture, OperationSpec, ReturnType},
    request::Params,
    router::{PROTOCOL_VERSION, Router},
};

/// How this server handles concurrent requests (spec 9.3.1).
const CONCURRENCY: &str = "fully-concurrent";

pub struct Introspect {
    spec: OperationSpec,
}

impl Default for Introspect {
    fn default() -> Self {
        Self {
            spec: OperationSpec {
                name: "introspect".into(),
                category: Category::Read,
                description: "Discover operations and types: list them, or detail one by name".into(),
                params: vec![
                    ParamSpec::required("query", ParamType::String, "What to list: operations or types")
                        .one_of(&["operations", "types"]),
                    ParamSpec::optional("name", ParamType::String, "One operation or type to detail"),
                ],
                returns: ReturnType {
                    name: "IntrospectionResult",
                    kind: "object",
                    description: "Lists, or one item's details (null when unknown)",
                },
                examples: vec![
                    ("List every operation".into(), json!({ "query": "operations" })),
                    (
                        "Detail one operation".into(),
                        json!({ "query": "operations", "name": "introspect" }),
                    ),
                ],
                source: None,
            },
        }
    }
}

impl Operation for Introspect {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(&'a self, router: &'a Router, call: &'a CallContext, params: Params) -> OperationFuture<'a> {
        let data = match (params.str("query"), params.str("name")) {
            (Some("types"), None) => list_types(router),
            (Some("types"), Some(name)) => type_details(router, name),
            (_, None) => list_operations(router, call),
            (_, Some(name)) => operation_details(router, name),
        };
        Box::pin(std::future::ready(Ok(data)))
    }
}

fn protocol_metadata(router: &Router, call: &CallContext) -> Value {
    json!({
        "version": PROTOCOL_VERSION,
        "session_id": call.session_id,
        "conformance": "level-1",
        "mode": router.mode().name(),
        "capabilities": router.capabilities(),
        "limits": router.limits().metadata(),
        "concurrency": CONCURRENCY,
    })
}

fn list_operations(router: &Router, call: &CallContext) -> Value {
    let operations: Vec<Value> = router
        .registry()
        .specs()
        .map(|spec| {
            json!({
                "name": spec.name,
                "semantic_category": spec.category.name(),
                "endpoint": spec.category.family(),
                "description": spec.description,
            })
        })
        .collect();
    json!({ "_protocol": protocol_metadata(router, call), "operations": operations })
}

fn operation_details(router: &Router, name: &str) -> Value {
    let details = router.registry().get(name).map(|operation| {
        let spec = operation.spec();
        json!({
            "name": spec.name,
            "semantic_category": spec.category.name(),
            "endpoint": spec.category.family(),
            "mcpTool": router.mode().home_endpoint(spec.category).tool_name(),
            "description": spec.description,
            "permissions": {
                "readOnly": spec.category.read_only(),
                "destructive": spec.category.destructive(),
            },
            "parameters": spec.params.iter().map(ParamSpec::info).collect::<Vec<_>>(),
            "returns": {
                "name": spec.returns.name,
                "kind": spec.returns.kind,
                "description": spec.returns.description,
            },
            "examples": spec.example_requests(),
        })
    });
    json!({ "operation": details })
}

fn list_types(router: &Router) -> Value {
    let types: Vec<Value> = router.registry().types().map(|t| t.info()).collect();
    json!({ "types": types })
}

fn type_details(router: &Router, name: &str) -> Value {
    json!({ "type": router.registry().type_named(name).map(|t| t.details()) })
}
