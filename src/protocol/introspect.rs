//! The `introspect` operation (spec 7, `introspection.md`): lists and
//! details of operations and types, derived from the registry, so what
//! introspection says is exactly what validation enforces.
//!
//! Operation lists can be filtered (a glob over names, a category, an
//! endpoint family, a source: an adapter's or a downstream server's name,
//! `-` and `_` alike, or `builtin` for the server's own; a source that is
//! not loaded is refused with the ones that are) and are paged by cursor
//! (`features/pagination.md`), so a thousand imported operations arrive a
//! page at a time. The list's schema admits nothing beside `_protocol`
//! and `operations`, so the page's `pageInfo`, the operations' danger
//! levels (`danger_levels[i]` is `operations[i]`'s, `null` for the
//! server's own, which the loop judges) and the safety loop's defaults
//! travel as data inside `_protocol`, which admits more. List
//! descriptions are brief; details add where an operation comes from and
//! its danger level, and an operation that manages an execution says its
//! lifecycle (spec 8.4.5). Every operation's details list the `fields`
//! parameter the router applies to it, with what its presets keep.
//!
//! Field selection never takes from an answer what the spec's
//! introspection schema requires of it (an operation's name, category,
//! endpoint, description…; a parameter's name, type and `required`), so
//! a selected answer validates like a whole one. `minimal` is that much,
//! `standard` adds the parameters' descriptions and constraints, the
//! lifecycle and types' descriptions, and `full` (as without `fields`)
//! adds the examples.

use globset::{Glob, GlobMatcher};
use serde_json::{Map, Value, json};

use super::{
    error::AqlError,
    paging::{PageRequest, asks_for_a_page, page_params},
    params::{ParamSpec, ParamType},
    registry::{
        CallContext, Category, Operation, OperationFuture, OperationSpec, Registry, ReturnType,
        source_key,
    },
    request::Params,
    router::{PROTOCOL_VERSION, Router},
    selection::{FieldPresets, Preset, fields_param, selects_fields},
};

/// How this server handles concurrent requests (spec 9.3.1).
const CONCURRENCY: &str = "fully-concurrent";

/// The `source` filter value naming the server's own operations.
const BUILTIN_SOURCE: &str = "builtin";

const FILTERS: [&str; 4] = ["name_pattern", "category", "endpoint", "source"];

/// What the introspection schema requires of each record, whichever the
/// query: kept by every field selection.
const REQUIRED_FIELDS: &[&str] = &[
    "operations.name",
    "operations.semantic_category",
    "operations.endpoint",
    "operations.description",
    "operation.name",
    "operation.semantic_category",
    "operation.endpoint",
    "operation.mcpTool",
    "operation.description",
    "operation.permissions",
    "operation.returns",
    "operation.parameters.name",
    "operation.parameters.type",
    "operation.parameters.required",
    "types.name",
    "types.kind",
    "type.name",
    "type.kind",
    "type.values",
    "type.members",
    "type.fields.name",
    "type.fields.type",
    "type.fields.required",
];

/// `minimal` is the schema's minimum; `standard` adds what an agent needs
/// to call well; `full` adds the examples.
const FIELD_PRESETS: FieldPresets = FieldPresets {
    required: REQUIRED_FIELDS,
    minimal: Preset::Paths(&[]),
    standard: Preset::Paths(&[
        "operation.parameters",
        "operation.lifecycle",
        "types.description",
        "type.description",
        "type.fields",
    ]),
};

pub struct Introspect {
    spec: OperationSpec,
}

impl Default for Introspect {
    fn default() -> Self {
        let categories: Vec<&str> = Category::ALL.iter().map(|c| c.name()).collect();
        let families: Vec<&str> = Category::ALL.iter().map(|c| c.family()).collect();
        let mut params = vec![
            ParamSpec::required("query", ParamType::String, "What to list: operations or types")
                .one_of(&["operations", "types"]),
            ParamSpec::optional("name", ParamType::String, "One operation or type to detail"),
            ParamSpec::optional(
                "name_pattern",
                ParamType::String,
                "Operations whose name matches this glob, e.g. github_api__repos_*",
            ),
            ParamSpec::optional(
                "category",
                ParamType::String,
                "Operations of one semantic category",
            )
            .one_of(&categories),
            ParamSpec::optional("endpoint", ParamType::String, "Operations of one endpoint family")
                .one_of(&families),
            ParamSpec::optional(
                "source",
                ParamType::String,
                "Operations of one adapter or downstream server (by its name: github-api and github_api alike), or builtin for this server's own; a source that is not loaded is refused with those that are",
            ),
        ];
        params.extend(page_params());
        Self {
            spec: OperationSpec {
                name: "introspect".into(),
                category: Category::Read,
                description: "Discover operations and types: list them (operations are filtered and paged: see _protocol.pageInfo), or detail one by name".into(),
                params,
                returns: ReturnType { name: "IntrospectionResult", kind: "object", description: "Lists, or one item's details (null when unknown)" },
                examples: vec![
                    ("List the first page of operations".into(), json!({ "query": "operations" })),
                    ("The next page, from the last page's pageInfo.endCursor".into(), json!({ "query": "operations", "first": 20, "after": "introspect" })),
                    ("The server's own operations (an adapter's or downstream server's name lists its operations instead)".into(), json!({ "query": "operations", "source": "builtin" })),
                    ("Detail one operation".into(), json!({ "query": "operations", "name": "introspect" })),
                    ("Detail one operation without its examples".into(), json!({ "query": "operations", "name": "introspect", "fields": "standard" })),
                ],
                source: None,
                origin: None,
                danger_level: None,
                lifecycle: None,
                field_presets: FIELD_PRESETS,
            },
        }
    }
}

impl Operation for Introspect {
    fn spec(&self) -> &OperationSpec {
        &self.spec
    }

    fn invoke<'a>(
        &'a self,
        router: &'a Router,
        call: &'a CallContext,
        params: Params,
    ) -> OperationFuture<'a> {
        Box::pin(std::future::ready(answer(router, call, &params)))
    }
}

fn answer(router: &Router, call: &CallContext, params: &Params) -> Result<Value, AqlError> {
    let listing_operations =
        params.str("query") == Some("operations") && params.str("name").is_none();
    if !listing_operations
        && let Some(misplaced) = FILTERS
            .iter()
            .copied()
            .find(|name| params.get(name).is_some())
            .or(asks_for_a_page(params).then_some("first, after, last or before"))
    {
        return Err(AqlError::bad_value(
            "introspect",
            misplaced,
            "filters and paging apply to listing operations (query: operations, without name)",
        ));
    }
    Ok(match (params.str("query"), params.str("name")) {
        (Some("types"), None) => list_types(router),
        (Some("types"), Some(name)) => type_details(router, name),
        (_, None) => list_operations(router, call, params)?,
        (_, Some(name)) => operation_details(router, name),
    })
}

/// Which operations a listing keeps.
struct Filter {
    name: Option<GlobMatcher>,
    category: Option<String>,
    endpoint: Option<String>,
    /// The source's [`source_key`].
    source: Option<String>,
}

impl Filter {
    fn from_params(params: &Params, registry: &Registry) -> Result<Self, AqlError> {
        let name = match params.str("name_pattern") {
            Some(pattern) => Some(
                Glob::new(pattern)
                    .map_err(|_| {
                        AqlError::bad_value(
                            "introspect",
                            "name_pattern",
                            "must be a glob such as github_api__repos_*",
                        )
                    })?
                    .compile_matcher(),
            ),
            None => None,
        };
        let text = |key: &str| params.str(key).map(str::to_owned);
        let source =
            params.str("source").map(|source| known_source(registry, source)).transpose()?;
        Ok(Self { name, category: text("category"), endpoint: text("endpoint"), source })
    }

    fn keeps(&self, spec: &OperationSpec) -> bool {
        self.name.as_ref().is_none_or(|glob| glob.is_match(&spec.name))
            && self.category.as_deref().is_none_or(|category| category == spec.category.name())
            && self.endpoint.as_deref().is_none_or(|family| family == spec.category.family())
            && self.source.as_deref().is_none_or(|source| {
                source_key(spec.source.as_deref().unwrap_or(BUILTIN_SOURCE)) == source
            })
    }
}

/// The key of the source `asked` names, if its operations are loaded: a
/// filter that could only answer an empty page is a mistake to say, not
/// an answer (a misspelt name, a server that failed to start).
fn known_source(registry: &Registry, asked: &str) -> Result<String, AqlError> {
    let key = source_key(asked);
    let sources = registry.sources();
    if key == BUILTIN_SOURCE || sources.iter().any(|source| source_key(source) == key) {
        return Ok(key);
    }
    let available: Vec<Value> =
        std::iter::once(BUILTIN_SOURCE).chain(sources).map(Value::from).collect();
    Err(AqlError::invalid_value("introspect", "source", &available, &Value::from(asked)))
}

fn protocol_metadata(router: &Router, call: &CallContext) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("version".into(), PROTOCOL_VERSION.into());
    metadata.insert("session_id".into(), call.session_id.clone().into());
    metadata.insert("conformance".into(), router.conformance().into());
    metadata.insert("mode".into(), router.mode().name().into());
    metadata.insert("capabilities".into(), Value::Object(router.capabilities().clone()));
    metadata.insert("limits".into(), router.limits().metadata());
    metadata.insert("concurrency".into(), CONCURRENCY.into());
    metadata.extend(router.server_facts());
    metadata
}

fn list_operations(
    router: &Router,
    call: &CallContext,
    params: &Params,
) -> Result<Value, AqlError> {
    let registry = router.registry();
    let filter = Filter::from_params(params, &registry)?;
    let request = PageRequest::from_params("introspect", params)?;
    let kept: Vec<&OperationSpec> = registry.specs().filter(|spec| filter.keeps(spec)).collect();
    let (page, page_info) = request.page(kept, |spec| spec.name.as_str());
    let danger_levels: Vec<Value> =
        page.iter().map(|spec| spec.danger_level.map_or(Value::Null, Value::from)).collect();
    let operations: Vec<Value> = page
        .iter()
        .map(|spec| json!({ "name": spec.name, "semantic_category": spec.category.name(), "endpoint": spec.category.family(), "description": spec.description }))
        .collect();
    let mut metadata = protocol_metadata(router, call);
    metadata.insert("pageInfo".into(), page_info);
    metadata.insert("danger_levels".into(), Value::Array(danger_levels));
    Ok(json!({ "_protocol": metadata, "operations": operations }))
}

#[expect(
    clippy::indexing_slicing,
    reason = "details is a JSON object built here: indexing it inserts a key"
)]
fn operation_details(router: &Router, name: &str) -> Value {
    let details = router.registry().get(name).map(|operation| {
        let spec = operation.spec();
        let mut parameters: Vec<Value> = spec.params.iter().map(ParamSpec::info).collect();
        if selects_fields(spec) {
            parameters.push(fields_param(spec).info());
        }
        let mut details = json!({
            "name": spec.name,
            "semantic_category": spec.category.name(),
            "endpoint": spec.category.family(),
            "mcpTool": router.surface().home_tool(spec.category),
            "description": spec.detailed_description(),
            "permissions": {
                "readOnly": spec.category.read_only(),
                "destructive": spec.category.destructive(),
            },
            "parameters": parameters,
            "returns": {
                "name": spec.returns.name,
                "kind": spec.returns.kind,
                "description": spec.returns.description,
            },
            "examples": spec.example_requests(),
        });
        if let Some(lifecycle) = &spec.lifecycle {
            details["lifecycle"] = lifecycle.info();
        }
        details
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
