//! Named types that introspection can describe (`query: "types"`): the
//! protocol's own types, plus whatever later modules register.

use serde_json::{Value, json};

use super::{
    params::{ParamSpec, ParamType},
    selection::field_selection_type,
};

/// The shape of a named type, one variant per introspection `kind`.
#[derive(Debug, Clone)]
pub enum TypeShape {
    Enum(Vec<&'static str>),
    Object(Vec<ParamSpec>),
    Union(Vec<&'static str>),
}

#[derive(Debug, Clone)]
pub struct TypeDef {
    pub name: &'static str,
    pub description: &'static str,
    pub shape: TypeShape,
}

impl TypeDef {
    pub fn kind(&self) -> &'static str {
        match self.shape {
            TypeShape::Enum(_) => "enum",
            TypeShape::Object(_) => "object",
            TypeShape::Union(_) => "union",
        }
    }

    /// `TypeInfo`, the list form.
    pub fn info(&self) -> Value {
        json!({ "name": self.name, "kind": self.kind(), "description": self.description })
    }

    /// `TypeDetails`, the detail form.
    #[expect(
        clippy::indexing_slicing,
        reason = "info() is a JSON object built here: indexing it inserts a key"
    )]
    pub fn details(&self) -> Value {
        let mut details = self.info();
        let (key, body) = match &self.shape {
            TypeShape::Enum(values) => ("values", json!(values)),
            TypeShape::Object(fields) => ("fields", fields.iter().map(ParamSpec::info).collect()),
            TypeShape::Union(members) => ("members", json!(members)),
        };
        details[key] = body;
        details
    }
}

/// The protocol types every MCP-AQL server should describe (introspection
/// 5.3), and `FieldSelection` (`field-selection.md` 5.3).
pub fn protocol_types() -> Vec<TypeDef> {
    use ParamType::{Boolean, Object, String};
    vec![
        TypeDef {
            name: "SemanticCategory",
            description: "Standard operation categories",
            shape: TypeShape::Enum(vec!["CREATE", "READ", "UPDATE", "DELETE", "EXECUTE"]),
        },
        TypeDef {
            name: "OperationInput",
            description: "The request every endpoint tool accepts",
            shape: TypeShape::Object(vec![
                ParamSpec::required("operation", String, "Operation to perform"),
                ParamSpec::optional("params", Object, "Operation parameters"),
            ]),
        },
        TypeDef {
            name: "OperationResult",
            description: "Every operation's answer: success or failure",
            shape: TypeShape::Union(vec!["OperationSuccess", "OperationFailure"]),
        },
        TypeDef {
            name: "OperationSuccess",
            description: "A successful result",
            shape: TypeShape::Object(vec![
                ParamSpec::required("success", Boolean, "Always true"),
                ParamSpec::required("data", Object, "Operation-specific payload"),
            ]),
        },
        TypeDef {
            name: "OperationFailure",
            description: "A failed result",
            shape: TypeShape::Object(vec![
                ParamSpec::required("success", Boolean, "Always false"),
                ParamSpec::required("error", Object, "An ErrorDetail"),
            ]),
        },
        TypeDef {
            name: "ErrorDetail",
            description: "A structured error",
            shape: TypeShape::Object(vec![
                ParamSpec::required(
                    "code",
                    String,
                    "Machine-readable code, e.g. VALIDATION_MISSING_PARAM",
                ),
                ParamSpec::required("message", String, "Human-readable message"),
                ParamSpec::optional("details", Object, "Context for recovery"),
            ]),
        },
        TypeDef {
            name: "EndpointPermissions",
            description: "Permission flags of an operation",
            shape: TypeShape::Object(vec![
                ParamSpec::required("readOnly", Boolean, "Only reads state"),
                ParamSpec::required("destructive", Boolean, "May remove or overwrite state"),
            ]),
        },
        TypeDef {
            name: "IntrospectionResult",
            description: "The data of an introspect answer; which field is present depends on the query",
            shape: TypeShape::Object(vec![
                ParamSpec::optional(
                    "_protocol",
                    Object,
                    "Protocol version, mode, capabilities and limits (operation lists)",
                ),
                ParamSpec::optional("operations", ParamType::Array, "Operation summaries"),
                ParamSpec::optional("operation", Object, "One operation's details, or null"),
                ParamSpec::optional("types", ParamType::Array, "Type summaries"),
                ParamSpec::optional("type", Object, "One type's details, or null"),
            ]),
        },
        field_selection_type(),
    ]
}
