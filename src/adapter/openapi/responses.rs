//! The shape of an operation's success answer (its `200` response, else
//! its `201`), as the JSON Schema an adapter file's `response.schema`
//! holds and the runtime checks every such answer against.
//!
//! The shape is kept shallow on purpose, so a thousand operations cost
//! kilobytes, not the document's megabytes, and so nothing is claimed that
//! is not stated plainly: the body's type; for an object, its properties'
//! types (and enums) and which are required; for an array, its items'
//! types, one level down. OpenAPI 3.0's `nullable` and Swagger's
//! `x-nullable` admit `null`; `allOf` members are merged; a schema that is
//! a choice (`oneOf`, `anyOf`, `not`) constrains nothing, as does anything
//! deeper than the levels above. References are followed within the walk's
//! budget; a cycle or a spent budget leaves the level unconstrained.

use serde_json::{Map, Value};

use super::{
    ImportError,
    document::{Dialect, Node},
    refs::{Refs, Walk},
};

/// Enums longer than this are left out (they are documentation, and long).
const MAX_ENUM: usize = 50;

/// The JSON media type of a `content` map: `application/json`, else a
/// `+json` type, else the first one listed.
pub fn json_media(content: &indexmap::IndexMap<String, Node>) -> Option<(&String, &Node)> {
    let essence =
        |media: &str| media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    content
        .iter()
        .find(|(media, _)| essence(media) == "application/json")
        .or_else(|| content.iter().find(|(media, _)| essence(media).ends_with("+json")))
        .or_else(|| content.first())
}

/// The schema of `operation`'s success answer, when its document gives one
/// in JSON.
pub fn success_schema<'d>(
    refs: &Refs<'d>,
    operation: &'d Node,
    dialect: Dialect,
) -> Result<Option<Value>, ImportError> {
    let Some(response) =
        ["200", "201"].iter().find_map(|code| operation.get("responses")?.get(code))
    else {
        return Ok(None);
    };
    let response = refs.resolve(response)?;
    let schema = match dialect {
        Dialect::Swagger2 => response.get("schema"),
        Dialect::OpenApi30 | Dialect::OpenApi31 => response
            .get("content")
            .and_then(Node::as_object)
            .and_then(json_media)
            .filter(|(media, _)| media.to_ascii_lowercase().contains("json"))
            .and_then(|(_, media)| media.get("schema")),
    };
    match schema {
        Some(schema) => shallow(refs, schema, 0, &mut Walk::default()),
        None => Ok(None),
    }
}

/// `schema` at `level` (0: the body); `None` where it constrains nothing.
fn shallow<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    level: u8,
    walk: &mut Walk<'d>,
) -> Result<Option<Value>, ImportError> {
    let shape = refs.follow(schema, walk, |schema, walk| {
        if ["oneOf", "anyOf", "not"].iter().any(|key| schema.get(key).is_some()) {
            return Ok(Map::new());
        }
        let mut out = Map::new();
        merge(&mut out, own_keywords(refs, schema, level, walk)?);
        for member in schema.items("allOf") {
            if let Some(Value::Object(member)) = shallow(refs, member, level, walk)? {
                merge(&mut out, member);
            }
        }
        if nullable(schema) {
            admit_null(&mut out);
        }
        Ok(out)
    })?;
    Ok(shape.filter(|out| !out.is_empty()).map(Value::Object))
}

/// The keywords `schema` states itself at `level`.
fn own_keywords<'d>(
    refs: &Refs<'d>,
    schema: &'d Node,
    level: u8,
    walk: &mut Walk<'d>,
) -> Result<Map<String, Value>, ImportError> {
    let mut out = Map::new();
    match schema.get("type") {
        Some(Node::String(name)) => {
            out.insert("type".into(), name.clone().into());
        }
        Some(Node::Array(names)) if names.iter().all(|n| n.as_str().is_some()) => {
            out.insert(
                "type".into(),
                names.iter().filter_map(Node::as_str).collect::<Vec<_>>().into(),
            );
        }
        _ => {}
    }
    if let Some(values) = schema
        .get("enum")
        .and_then(Node::as_array)
        .filter(|values| values.len() <= MAX_ENUM && values.iter().all(is_scalar))
    {
        out.insert("enum".into(), values.iter().map(scalar).collect());
    }
    if level == 0 {
        let mut properties = Map::new();
        for (name, property) in schema.entries("properties") {
            if let Some(property) = shallow(refs, property, level + 1, walk)? {
                properties.insert(name.clone(), property);
            }
        }
        if !properties.is_empty() {
            out.insert("properties".into(), Value::Object(properties));
        }
        let required: Vec<Value> =
            schema.items("required").filter_map(Node::as_str).map(Value::from).collect();
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
    }
    if level <= 1
        && let Some(items) = schema.get("items")
        && let Some(items) = shallow(refs, items, level + 1, walk)?
    {
        out.insert("items".into(), items);
    }
    Ok(out)
}

/// Adds what `from` states to `into`: the first type stated wins, enums
/// and items likewise; properties and required add up.
fn merge(into: &mut Map<String, Value>, from: Map<String, Value>) {
    for (key, value) in from {
        match (key.as_str(), into.get_mut(&key), value) {
            ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                for (name, property) in theirs {
                    mine.entry(name).or_insert(property);
                }
            }
            ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                for name in theirs {
                    if !mine.contains(&name) {
                        mine.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, value) => {
                into.insert(key, value);
            }
        }
    }
}

fn nullable(schema: &Node) -> bool {
    schema.get("nullable").and_then(Node::as_bool) == Some(true)
        || schema.get("x-nullable").and_then(Node::as_bool) == Some(true)
}

/// Lets `null` through a stated type and enum.
fn admit_null(out: &mut Map<String, Value>) {
    match out.get_mut("type") {
        Some(Value::String(name)) if name != "null" => {
            let name = std::mem::take(name);
            out.insert("type".into(), vec![Value::from(name), Value::from("null")].into());
        }
        Some(Value::Array(names)) if !names.contains(&Value::from("null")) => {
            names.push("null".into())
        }
        _ => {}
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

fn is_scalar(node: &Node) -> bool {
    matches!(node, Node::Null | Node::Bool(_) | Node::Number(_) | Node::String(_))
}

fn scalar(node: &Node) -> Value {
    match node {
        Node::Bool(b) => Value::Bool(*b),
        Node::Number(n) => Value::Number(n.clone()),
        Node::String(s) => Value::String(s.clone()),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests;
