//! What an adapter parameter takes from a JSON Schema, resolved lazily and
//! never deeper than needed: one of the adapter's types, the schema's
//! default, enum and description ([`shape`]); and an object schema's
//! top-level properties with `allOf` members merged ([`properties`]).
//! Nested properties and array items are never visited, so a recursive
//! schema (`Node {children: [Node]}`) costs one step.

use super::{
    ImportError,
    document::Node,
    refs::{Refs, Walk},
};
use crate::protocol::params::ParamType;

/// A JSON Schema type name as a parameter type; Swagger's `file` and
/// anything unknown is `any`. `null` is not a type a parameter can have:
/// `None`.
fn type_from_schema_name(name: &str) -> Option<ParamType> {
    Some(match name {
        "string" => ParamType::String,
        "integer" => ParamType::Integer,
        "number" => ParamType::Number,
        "boolean" => ParamType::Boolean,
        "array" => ParamType::Array,
        "object" => ParamType::Object,
        "null" => return None,
        _ => ParamType::Any,
    })
}

/// Whether `value` is a value of type `ty`. `null` is no type's value: a
/// parameter that is left out needs no null default. Stricter than the
/// loader ([`ParamType::admits`]): an integer default written `5.0` is
/// dropped rather than carried over.
pub fn accepts(ty: ParamType, value: &Node) -> bool {
    match (ty, value) {
        (_, Node::Null) => false,
        (ParamType::Any, _) => true,
        (ParamType::String, Node::String(_)) | (ParamType::Boolean, Node::Bool(_)) => true,
        (ParamType::Array, Node::Array(_)) | (ParamType::Object, Node::Object(_)) => true,
        (ParamType::Number, Node::Number(_)) => true,
        (ParamType::Integer, Node::Number(n)) => n.is_i64() || n.is_u64(),
        _ => false,
    }
}

/// What a parameter takes from its schema.
#[derive(Debug, PartialEq)]
pub struct Shape<'d> {
    pub ty: ParamType,
    pub default: Option<&'d Node>,
    pub enum_values: Option<&'d [Node]>,
    pub description: Option<&'d str>,
}

impl Default for Shape<'_> {
    /// Nothing known: any type, no default, no enum, no description.
    fn default() -> Self {
        Self { ty: ParamType::Any, default: None, enum_values: None, description: None }
    }
}

/// The shape of `schema`. A type of `[X, "null"]` or `nullable: true`
/// counts as X; with no `type`, `allOf` members must agree on one (members
/// that say nothing are ignored), `oneOf`/`anyOf` alternatives must all
/// have it (a `null` alternative aside), and `properties` or `items` imply
/// an object or an array. A reference cycle or an exhausted walk gives
/// `any`.
pub fn shape<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    walk: &mut Walk<'d>,
) -> Result<Shape<'d>, ImportError> {
    let derived = refs.follow(schema, walk, |schema, walk| {
        let mut shape = Shape {
            ty: ParamType::Any,
            default: schema.get("default"),
            enum_values: schema.get("enum").and_then(Node::as_array),
            description: schema.str_at("description"),
        };
        shape.ty = match declared_type(schema) {
            Some(ty) => ty,
            None => implied_type(refs, schema, walk, &mut shape)?,
        };
        Ok(shape)
    })?;
    Ok(derived.unwrap_or_default())
}

/// The type `schema` states: `None` when it has no `type`.
fn declared_type(schema: &Node) -> Option<ParamType> {
    match schema.get("type")? {
        Node::String(name) => Some(type_from_schema_name(name).unwrap_or(ParamType::Any)),
        Node::Array(names) => {
            let mut types = names.iter().filter_map(Node::as_str).filter_map(type_from_schema_name);
            match (types.next(), types.next()) {
                (Some(ty), None) => Some(ty),
                _ => Some(ParamType::Any),
            }
        }
        _ => Some(ParamType::Any),
    }
}

/// Whether `schema` only admits `null` (the other half of a nullable
/// `anyOf`).
fn is_null_only(schema: &Node) -> bool {
    match schema.get("type") {
        Some(Node::String(name)) => name == "null",
        Some(Node::Array(names)) => names.iter().all(|n| n.as_str() == Some("null")),
        _ => false,
    }
}

/// The type of a schema without `type`, filling in `shape`'s default, enum
/// and description from the first `allOf` member that has one.
fn implied_type<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    walk: &mut Walk<'d>,
    shape: &mut Shape<'d>,
) -> Result<ParamType, ImportError> {
    if let Some(members) = schema.get("allOf").and_then(Node::as_array) {
        let mut agreed = None;
        for member in members {
            let member = self::shape(refs, member, walk)?;
            shape.default = shape.default.or(member.default);
            shape.enum_values = shape.enum_values.or(member.enum_values);
            shape.description = shape.description.or(member.description);
            agreed = match (agreed, member.ty) {
                (agreed, ParamType::Any) => agreed,
                (None, ty) => Some(ty),
                (Some(ty), other) if ty == other => Some(ty),
                _ => return Ok(ParamType::Any),
            };
        }
        return Ok(agreed.unwrap_or(ParamType::Any));
    }
    for alternatives in ["oneOf", "anyOf"] {
        if let Some(members) = schema.get(alternatives).and_then(Node::as_array) {
            let mut common = None;
            for member in members {
                if refs.follow(member, walk, |member, _| Ok(is_null_only(member)))? == Some(true) {
                    continue;
                }
                let ty = self::shape(refs, member, walk)?.ty;
                if ty == ParamType::Any || common.is_some_and(|common| common != ty) {
                    return Ok(ParamType::Any);
                }
                common = Some(ty);
            }
            return Ok(common.unwrap_or(ParamType::Any));
        }
    }
    Ok(if schema.get("properties").is_some() || schema.get("additionalProperties").is_some() {
        ParamType::Object
    } else if schema.get("items").is_some() {
        ParamType::Array
    } else {
        ParamType::Any
    })
}

/// An object schema's top-level properties, in document order, with those
/// of its `allOf` members merged after its own, and the names they
/// require.
#[derive(Debug, Default)]
pub struct Properties<'d> {
    pub entries: Vec<(&'d str, &'d Node)>,
    pub required: Vec<&'d str>,
}

/// The properties of `schema`; `None` when it offers none: it is not an
/// object (an array, a string, only `oneOf` alternatives...) or has no
/// properties at all. A member already being merged (a recursive `allOf`)
/// is not merged again.
pub fn properties<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    walk: &mut Walk<'d>,
) -> Result<Option<Properties<'d>>, ImportError> {
    let mut merged = Properties::default();
    merge_properties(refs, schema, walk, &mut merged)?;
    Ok(if merged.entries.is_empty() { None } else { Some(merged) })
}

fn merge_properties<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    walk: &mut Walk<'d>,
    into: &mut Properties<'d>,
) -> Result<(), ImportError> {
    refs.follow(schema, walk, |schema, walk| {
        if declared_type(schema).is_some_and(|ty| ty != ParamType::Object) {
            return Ok(());
        }
        for (name, property) in schema.entries("properties") {
            if !into.entries.iter().any(|(known, _)| known == name) {
                into.entries.push((name, property));
            }
        }
        for name in schema.items("required").filter_map(Node::as_str) {
            if !into.required.contains(&name) {
                into.required.push(name);
            }
        }
        for member in schema.items("allOf") {
            merge_properties(refs, member, walk, into)?;
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::openapi::document::parse;

    const SCHEMAS: &str = r##"{"openapi": "3.1.0", "components": {"schemas": {
        "Node": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
            "parent": {"$ref": "#/components/schemas/Node"}}},
        "A": {"allOf": [{"$ref": "#/components/schemas/B"}, {"properties": {"a": {"type": "integer"}}, "required": ["a"]}]},
        "B": {"allOf": [{"$ref": "#/components/schemas/A"}, {"properties": {"b": {"type": "boolean"}}}]},
        "Alias": {"$ref": "#/components/schemas/Alias"},
        "NullableString": {"type": ["string", "null"], "default": "x"},
        "OldNullable": {"type": "integer", "nullable": true},
        "Mixed": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        "Same": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "string"}, {"type": "null"}]},
        "Composed": {"allOf": [{"description": "a count"}, {"type": "integer", "default": 3}, {"minimum": 1}]},
        "Clash": {"allOf": [{"type": "integer"}, {"type": "string"}]},
        "Untyped": {"description": "anything"},
        "List": {"items": {"type": "string"}},
        "Map": {"additionalProperties": {"type": "string"}},
        "Pair": {"type": ["string", "integer"]},
        "Strings": {"type": "array", "items": {"type": "string"}, "properties": {"x": {}}}
    }}}"##;

    fn with_schema<T>(name: &str, check: impl FnOnce(&Refs<'_>, &Node) -> T) -> T {
        let document = parse(SCHEMAS).unwrap();
        let refs = Refs::new(&document.root);
        let reference = Node::Object(
            [("$ref".to_owned(), Node::String(format!("#/components/schemas/{name}")))]
                .into_iter()
                .collect(),
        );
        check(&refs, &reference)
    }

    fn type_of(name: &str) -> ParamType {
        with_schema(name, |refs, schema| shape(refs, schema, &mut Walk::default()).unwrap().ty)
    }

    #[test]
    fn types_table() {
        let rows = [
            ("Node", ParamType::Object),
            ("A", ParamType::Object),
            ("Alias", ParamType::Any),
            ("NullableString", ParamType::String),
            ("OldNullable", ParamType::Integer),
            ("Mixed", ParamType::Any),
            ("Same", ParamType::String),
            ("Composed", ParamType::Integer),
            ("Clash", ParamType::Any),
            ("Untyped", ParamType::Any),
            ("List", ParamType::Array),
            ("Map", ParamType::Object),
            ("Pair", ParamType::Any),
        ];
        for (name, expected) in rows {
            assert_eq!(type_of(name), expected, "{name}");
        }
    }

    #[test]
    fn shapes_carry_default_enum_and_description_through_all_of() {
        with_schema("Composed", |refs, schema| {
            let shape = shape(refs, schema, &mut Walk::default()).unwrap();
            assert_eq!(shape.description, Some("a count"));
            assert_eq!(shape.default, Some(&Node::Number(3.into())));
        });
        with_schema("NullableString", |refs, schema| {
            let shape = shape(refs, schema, &mut Walk::default()).unwrap();
            assert_eq!(shape.default.and_then(Node::as_str), Some("x"));
        });
    }

    #[test]
    fn a_self_recursive_schema_yields_its_properties_once() {
        with_schema("Node", |refs, schema| {
            let mut walk = Walk::default();
            let properties = properties(refs, schema, &mut walk).unwrap().unwrap();
            let names: Vec<_> = properties.entries.iter().map(|(name, _)| *name).collect();
            assert_eq!(names, ["name", "children", "parent"]);
            assert_eq!(properties.required, ["name"]);
            let types: Vec<_> = properties
                .entries
                .iter()
                .map(|(_, s)| shape(refs, s, &mut Walk::default()).unwrap().ty)
                .collect();
            assert_eq!(types, [ParamType::String, ParamType::Array, ParamType::Object]);
            assert!(!walk.exhausted);
        });
    }

    #[test]
    fn a_mutual_recursion_merges_each_side_once() {
        with_schema("A", |refs, schema| {
            let mut walk = Walk::default();
            let properties = properties(refs, schema, &mut walk).unwrap().unwrap();
            let names: Vec<_> = properties.entries.iter().map(|(name, _)| *name).collect();
            assert_eq!(names, ["b", "a"], "B's own property comes from the first member");
            assert_eq!(properties.required, ["a"]);
            assert!(!walk.exhausted, "a cycle is not an exhausted budget");
        });
    }

    #[test]
    fn only_objects_offer_properties() {
        for name in ["Strings", "Mixed", "Alias", "List"] {
            with_schema(name, |refs, schema| {
                assert!(
                    properties(refs, schema, &mut Walk::default()).unwrap().is_none(),
                    "{name}"
                );
            });
        }
    }

    #[test]
    fn values_must_match_the_type() {
        let number = |text: &str| Node::Number(serde_json::from_str(text).unwrap());
        let rows = [
            (ParamType::Integer, number("3"), true),
            (ParamType::Integer, number("3.5"), false),
            (ParamType::Number, number("3.5"), true),
            (ParamType::String, number("3"), false),
            (ParamType::String, Node::String("3".into()), true),
            (ParamType::Boolean, Node::Bool(false), true),
            (ParamType::Array, Node::Array(vec![]), true),
            (ParamType::Object, Node::Array(vec![]), false),
            (ParamType::Any, Node::Bool(true), true),
            (ParamType::Any, Node::Null, false),
            (ParamType::String, Node::Null, false),
        ];
        for (ty, value, accepted) in rows {
            assert_eq!(accepts(ty, &value), accepted, "{ty:?} {value:?}");
        }
    }
}
