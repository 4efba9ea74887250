//! Field selection (`features/field-selection.md`): the `fields` parameter
//! every operation accepts, and how it trims the `data` of a success.
//!
//! `fields` is a list of dot paths (`["name", "settings.theme"]`) or a
//! preset (`minimal`, `standard`, `full`). A path applies at the first
//! level of the answer where its first segment is a key: arrays are
//! transparent (a path applies to each element), and a path that names no
//! key of an object applies inside that object's arrays of objects, its
//! collections (`["name"]` on an operation list keeps each operation's
//! name). Metadata is never trimmed: keys starting with `_` (spec 4.6.1),
//! `pageInfo` and `pagination` (pagination is "not affected by
//! selection"). A path naming nothing is omitted without error (4.3).
//! `minimal` keeps each record's identity and state (`id`, `name`, keys
//! ending in `_id` or `Id`, `status`, `continue`, `stopped`); `standard`
//! and `full` keep everything, because the dongle's answers carry no
//! fields beyond their standard view.
//!
//! Errors are never trimmed: what went wrong and how to recover always
//! reaches the agent whole. An operation that declares a `fields`
//! parameter of its own (a downstream tool's) receives it untouched.

use std::{borrow::Cow, collections::BTreeMap};

use serde_json::{Map, Value};

use super::{
    error::AqlError,
    params::{ParamSpec, ParamType},
    registry::OperationSpec,
};

/// The parameter's name, in `params` or at the top level of a request.
pub const FIELDS_PARAM: &str = "fields";

const PRESETS: [&str; 3] = ["minimal", "standard", "full"];

/// What to keep of an answer's data.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldSelection {
    /// Identity and state fields of each record.
    Minimal,
    /// The paths asked for.
    Paths(PathTree),
}

/// Selected paths by segment; `whole` when the path ends here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathTree {
    whole: bool,
    children: BTreeMap<String, PathTree>,
}

impl PathTree {
    fn insert(&mut self, path: &str) {
        let mut node = self;
        for segment in path.split('.') {
            if node.whole {
                return;
            }
            node = node.children.entry(segment.to_owned()).or_default();
        }
        node.whole = true;
        node.children.clear();
    }
}

/// The `fields` parameter as introspection lists it on every operation
/// that does not declare its own.
pub fn fields_param() -> ParamSpec {
    ParamSpec::optional(FIELDS_PARAM, ParamType::Any, "Field selection: a list of dot paths to keep in data (e.g. [\"name\", \"settings.theme\"]), or a preset: minimal, standard, full. Errors are never trimmed")
}

/// Whether `spec` leaves `fields` to the router (it declares no parameter
/// of that name).
pub fn selects_fields(spec: &OperationSpec) -> bool {
    spec.param(FIELDS_PARAM).is_none()
}

/// A request with its selection taken out: the arguments left for the
/// operation, and what to keep of its data.
pub type Selected<'a> = (Cow<'a, Map<String, Value>>, Option<FieldSelection>);

/// Takes the selection out of a request for `spec`: the arguments without
/// `fields` (borrowed when there was none to take) and the selection
/// asked for. `params.fields` wins over a top-level `fields`, as every
/// parameter does (spec 4.2).
pub fn take_selection<'a>(spec: &OperationSpec, arguments: &'a Map<String, Value>) -> Result<Selected<'a>, AqlError> {
    if !selects_fields(spec) {
        return Ok((Cow::Borrowed(arguments), None));
    }
    let nested = arguments.get("params").and_then(Value::as_object).and_then(|params| params.get(FIELDS_PARAM));
    let top = arguments.get(FIELDS_PARAM);
    if nested.is_none() && top.is_none() {
        return Ok((Cow::Borrowed(arguments), None));
    }
    let selection = match nested.filter(|v| !v.is_null()).or(top) {
        Some(value) if !value.is_null() => parse(&spec.name, value)?,
        _ => None,
    };
    let mut rest = arguments.clone();
    rest.remove(FIELDS_PARAM);
    if let Some(Value::Object(params)) = rest.get_mut("params") {
        params.remove(FIELDS_PARAM);
    }
    Ok((Cow::Owned(rest), selection))
}

/// A `fields` value: a preset name or a list of dot paths of snake_case
/// (or camelCase, as the dongle's own answers use) segments. `None` for
/// the presets that keep everything.
fn parse(operation: &str, value: &Value) -> Result<Option<FieldSelection>, AqlError> {
    match value {
        Value::String(preset) => match preset.as_str() {
            "minimal" => Ok(Some(FieldSelection::Minimal)),
            "standard" | "full" => Ok(None),
            _ => Err(AqlError::invalid_value(operation, FIELDS_PARAM, &PRESETS.map(Value::from), value)),
        },
        Value::Array(paths) => {
            let mut tree = PathTree::default();
            for path in paths {
                match path.as_str() {
                    Some(path) if is_field_path(path) => tree.insert(path),
                    _ => return Err(AqlError::bad_value(operation, FIELDS_PARAM, "must be a preset (minimal, standard, full) or a list of dot paths such as \"name\" or \"settings.theme\"")),
                }
            }
            Ok(Some(FieldSelection::Paths(tree)))
        }
        other => Err(AqlError::invalid_type(Some(operation), FIELDS_PARAM, "array of field paths, or a preset name", other)),
    }
}

fn is_field_path(path: &str) -> bool {
    path.split('.').all(|segment| {
        let mut chars = segment.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

impl FieldSelection {
    /// `data` with only the selected fields.
    pub fn apply(&self, data: Value) -> Value {
        match self {
            Self::Minimal => select(data, &Selector::Minimal).unwrap_or(Value::Null),
            Self::Paths(tree) => select(data, &Selector::Tree(tree)).unwrap_or(Value::Null),
        }
    }
}

/// What to keep at one level of the answer.
#[derive(Clone, Copy)]
enum Selector<'a> {
    Minimal,
    Tree(&'a PathTree),
}

impl<'a> Selector<'a> {
    /// What to keep under `key`: `Some(None)` the whole value, `Some(Some)`
    /// part of it, `None` nothing.
    fn child(self, key: &str) -> Option<Option<Selector<'a>>> {
        match self {
            Self::Minimal => is_identity_or_state(key).then_some(None),
            Self::Tree(tree) => tree.children.get(key).map(|child| (!child.whole).then_some(Self::Tree(child))),
        }
    }
}

fn is_identity_or_state(key: &str) -> bool {
    matches!(key, "id" | "name" | "status" | "continue" | "stopped") || key.ends_with("_id") || key.ends_with("Id")
}

fn is_metadata(key: &str) -> bool {
    key.starts_with('_') || key == "pageInfo" || key == "pagination"
}

fn is_collection(value: &Value) -> bool {
    matches!(value, Value::Array(items) if items.iter().all(Value::is_object))
}

/// The selected part of `value`; `None` when a path goes deeper than a
/// scalar (the field does not exist).
fn select(value: Value, selector: &Selector) -> Option<Value> {
    match value {
        Value::Array(items) => Some(Value::Array(items.into_iter().map(|item| if item.is_object() { select(item, selector).unwrap_or_default() } else { item }).collect())),
        Value::Object(object) => {
            let unmatched_paths;
            let elsewhere = match selector {
                Selector::Minimal => Some(Selector::Minimal),
                Selector::Tree(tree) => {
                    unmatched_paths = unmatched(tree, &object);
                    unmatched_paths.as_ref().map(Selector::Tree)
                }
            };
            let mut kept = Map::new();
            for (key, value) in object {
                if is_metadata(&key) {
                    kept.insert(key, value);
                    continue;
                }
                match selector.child(&key) {
                    Some(None) => {
                        kept.insert(key, value);
                    }
                    Some(Some(child)) => {
                        if let Some(part) = select(value, &child) {
                            kept.insert(key, part);
                        }
                    }
                    None => {
                        if let Some(rest) = &elsewhere
                            && is_collection(&value)
                            && let Some(Value::Array(items)) = select(value, rest)
                            && (items.is_empty() || items.iter().any(|item| item.as_object().is_some_and(|o| !o.is_empty())))
                        {
                            kept.insert(key, Value::Array(items));
                        }
                    }
                }
            }
            Some(Value::Object(kept))
        }
        _ => None,
    }
}

/// The paths of `tree` that name no key of `object`: what applies inside
/// its collections. `None` when every path matched here.
fn unmatched(tree: &PathTree, object: &Map<String, Value>) -> Option<PathTree> {
    let children: BTreeMap<String, PathTree> = tree.children.iter().filter(|(key, _)| !object.contains_key(*key)).map(|(key, child)| (key.clone(), child.clone())).collect();
    (!children.is_empty()).then_some(PathTree { whole: false, children })
}

#[cfg(test)]
mod tests;
