//! Field selection (`features/field-selection.md`): the `fields` parameter
//! every operation accepts, and how it trims the `data` of a success.
//!
//! `fields` is a list of dot paths (`["name", "settings.theme"]`) or a
//! preset (`minimal`, `standard`, `full`). A path applies at the first
//! level of the answer where its first segment is a key: arrays are
//! transparent (a path applies to each element), and a path that names no
//! key of an object applies inside that object's arrays of objects, its
//! collections (`["name"]` on an operation list keeps each operation's
//! name). A path that reaches `null` keeps the `null`. Metadata is never
//! trimmed: keys starting with `_` (spec 4.6.1), `pageInfo` and
//! `pagination` (pagination is "not affected by selection"). A path
//! naming nothing is omitted without error (4.3).
//!
//! What the presets keep is each operation's own ([`FieldPresets`]):
//! unless it says otherwise, `minimal` keeps each record's identity and
//! state (`id`, `name`, keys ending in `_id` or `Id`, `status`,
//! `continue`, `stopped`), and `standard` and `full` keep everything,
//! because those answers carry no fields beyond their standard view. An
//! operation whose answers have a schema names the fields that schema
//! requires, and every selection keeps them besides what it asks for, so
//! a selected answer still validates (introspection's do).
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
    types::{TypeDef, TypeShape},
};

/// The parameter's name, in `params` or at the top level of a request.
pub const FIELDS_PARAM: &str = "fields";

const PRESETS: [&str; 3] = ["minimal", "standard", "full"];

/// What a preset keeps of an operation's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Each record's identity and state fields.
    IdentityAndState,
    /// These dot paths.
    Paths(&'static [&'static str]),
    /// The whole answer.
    Everything,
}

impl Preset {
    /// What the preset keeps, as its `fields` description says it.
    fn describe(self) -> String {
        match self {
            Self::IdentityAndState => "each record's identity and state (id, name, keys ending in _id or Id, status, continue, stopped)".into(),
            Self::Paths([]) => "nothing beyond what is always kept".into(),
            Self::Paths(paths) => group_paths(paths),
            Self::Everything => "everything".into(),
        }
    }

    /// What to select; `None` for the whole answer.
    fn part(self) -> Option<Part> {
        match self {
            Self::IdentityAndState => Some(Part::IdentityAndState),
            Self::Paths(paths) => Some(Part::Paths(PathTree::of(paths))),
            Self::Everything => None,
        }
    }
}

/// What field selection keeps of one operation's answers: the paths every
/// selection keeps (what the answers' schema requires), and what the
/// `minimal` and `standard` presets keep besides; `full` keeps everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldPresets {
    pub required: &'static [&'static str],
    pub minimal: Preset,
    pub standard: Preset,
}

impl Default for FieldPresets {
    /// An answer with no schema: `minimal` keeps identity and state,
    /// `standard` everything.
    fn default() -> Self {
        Self { required: &[], minimal: Preset::IdentityAndState, standard: Preset::Everything }
    }
}

/// What to keep of an answer's data: everything any of its parts keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSelection {
    parts: Vec<Part>,
}

/// One way of choosing fields.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    IdentityAndState,
    Paths(PathTree),
}

/// Selected paths by segment; `whole` when the path ends here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PathTree {
    whole: bool,
    children: BTreeMap<String, PathTree>,
}

impl PathTree {
    fn of(paths: &[&str]) -> Self {
        let mut tree = Self::default();
        for path in paths {
            tree.insert(path);
        }
        tree
    }

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

/// `operation.name`, `operation.endpoint`, `types.name` as
/// `operation: name, endpoint; types: name`.
fn group_paths(paths: &[&str]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for path in paths {
        let (head, rest) = path.split_once('.').unwrap_or((path, ""));
        match groups.iter_mut().find(|(group, _)| *group == head) {
            Some((_, members)) => members.push(rest),
            None => groups.push((head, vec![rest])),
        }
    }
    groups
        .iter()
        .map(|(head, members)| match members.as_slice() {
            [""] => (*head).to_owned(),
            members => format!("{head}: {}", members.join(", ")),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `fields` parameter as introspection lists it on `spec` (which does
/// not declare its own): its two forms, and what this operation's presets
/// keep.
pub fn fields_param(spec: &OperationSpec) -> ParamSpec {
    let presets = &spec.field_presets;
    let required = match presets.required {
        [] => String::new(),
        paths => {
            format!(" Always kept, as the answer's schema requires them: {}.", group_paths(paths))
        }
    };
    let description = format!(
        "Field selection (see type FieldSelection): a list of dot paths to keep in data (e.g. [\"name\", \"settings.theme\"]), or a preset: minimal keeps {}; standard keeps {}; full keeps everything (as without fields).{required} Errors are never trimmed",
        presets.minimal.describe(),
        presets.standard.describe(),
    );
    ParamSpec::optional(FIELDS_PARAM, ParamType::FieldSelection, &description)
}

/// The `FieldSelection` type (`field-selection.md` 5.3): the two forms a
/// `fields` value takes.
pub fn field_selection_type() -> TypeDef {
    TypeDef {
        name: ParamType::FieldSelection.name(),
        description: "The value of the fields parameter every operation takes: a preset name (one of presets) or a list of dot paths (fields). Each operation's details say what its presets keep",
        shape: TypeShape::Object(vec![
            ParamSpec::optional("presets", ParamType::String, "A preset: minimal (identity and state, or what the operation's details say), standard (its common view), full (everything: the answer without fields)").one_of(&PRESETS),
            ParamSpec::optional(FIELDS_PARAM, ParamType::Array, "Dot paths of the fields to keep (e.g. [\"name\", \"settings.theme\"]): a path applies where its first segment is a key, and to each record of a list; metadata (_protocol, pageInfo) is always kept; a path naming nothing is left out"),
        ]),
    }
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
pub fn take_selection<'a>(
    spec: &OperationSpec,
    arguments: &'a Map<String, Value>,
) -> Result<Selected<'a>, AqlError> {
    if !selects_fields(spec) {
        return Ok((Cow::Borrowed(arguments), None));
    }
    let nested = arguments
        .get("params")
        .and_then(Value::as_object)
        .and_then(|params| params.get(FIELDS_PARAM));
    let top = arguments.get(FIELDS_PARAM);
    if nested.is_none() && top.is_none() {
        return Ok((Cow::Borrowed(arguments), None));
    }
    let selection = match nested.filter(|v| !v.is_null()).or(top) {
        Some(value) if !value.is_null() => parse(spec, value)?,
        _ => None,
    };
    let mut rest = arguments.clone();
    rest.remove(FIELDS_PARAM);
    if let Some(Value::Object(params)) = rest.get_mut("params") {
        params.remove(FIELDS_PARAM);
    }
    Ok((Cow::Owned(rest), selection))
}

/// A `fields` value for `spec`: a preset name or a list of dot paths of
/// snake_case (or camelCase, as the dongle's own answers use) segments,
/// with the paths `spec` always keeps. `None` when it keeps everything.
fn parse(spec: &OperationSpec, value: &Value) -> Result<Option<FieldSelection>, AqlError> {
    let operation = spec.name.as_str();
    let presets = &spec.field_presets;
    let asked = match value {
        Value::String(preset) => match preset.as_str() {
            "minimal" => presets.minimal.part(),
            "standard" => presets.standard.part(),
            "full" => None,
            _ => {
                return Err(AqlError::invalid_value(
                    operation,
                    FIELDS_PARAM,
                    &PRESETS.map(Value::from),
                    value,
                ));
            }
        },
        Value::Array(paths) => {
            let mut tree = PathTree::default();
            for path in paths {
                match path.as_str() {
                    Some(path) if is_field_path(path) => tree.insert(path),
                    _ => {
                        return Err(AqlError::bad_value(
                            operation,
                            FIELDS_PARAM,
                            "must be a preset (minimal, standard, full) or a list of dot paths such as \"name\" or \"settings.theme\"",
                        ));
                    }
                }
            }
            Some(Part::Paths(tree))
        }
        other => {
            return Err(AqlError::invalid_type(
                Some(operation),
                FIELDS_PARAM,
                "array of field paths, or a preset name",
                other,
            ));
        }
    };
    Ok(asked.map(|part| {
        let required =
            (!presets.required.is_empty()).then(|| Part::Paths(PathTree::of(presets.required)));
        FieldSelection { parts: std::iter::once(part).chain(required).collect() }
    }))
}

fn is_field_path(path: &str) -> bool {
    path.split('.').all(|segment| {
        let mut chars = segment.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

impl FieldSelection {
    /// `data` with only the selected fields: what any part keeps.
    pub fn apply(&self, data: Value) -> Value {
        self.parts
            .iter()
            .map(|part| select(data.clone(), &part.selector()).unwrap_or(Value::Null))
            .reduce(merge)
            .unwrap_or(data)
    }
}

impl Part {
    fn selector(&self) -> Selector<'_> {
        match self {
            Self::IdentityAndState => Selector::IdentityAndState,
            Self::Paths(tree) => Selector::Tree(tree),
        }
    }
}

/// What to keep at one level of the answer.
#[derive(Clone, Copy)]
enum Selector<'a> {
    IdentityAndState,
    Tree(&'a PathTree),
}

impl<'a> Selector<'a> {
    /// What to keep under `key`: `Some(None)` the whole value, `Some(Some)`
    /// part of it, `None` nothing.
    fn child(self, key: &str) -> Option<Option<Selector<'a>>> {
        match self {
            Self::IdentityAndState => is_identity_or_state(key).then_some(None),
            Self::Tree(tree) => {
                tree.children.get(key).map(|child| (!child.whole).then_some(Self::Tree(child)))
            }
        }
    }
}

fn is_identity_or_state(key: &str) -> bool {
    matches!(key, "id" | "name" | "status" | "continue" | "stopped")
        || key.ends_with("_id")
        || key.ends_with("Id")
}

fn is_metadata(key: &str) -> bool {
    key.starts_with('_') || key == "pageInfo" || key == "pagination"
}

fn is_collection(value: &Value) -> bool {
    matches!(value, Value::Array(items) if items.iter().all(Value::is_object))
}

/// The selected part of `value`; `None` when a path goes deeper than a
/// scalar (the field does not exist). A `null` is kept: the field exists
/// and says there is nothing.
fn select(value: Value, selector: &Selector) -> Option<Value> {
    match value {
        Value::Null => Some(Value::Null),
        Value::Array(items) => Some(Value::Array(
            items
                .into_iter()
                .map(|item| {
                    if item.is_object() { select(item, selector).unwrap_or_default() } else { item }
                })
                .collect(),
        )),
        Value::Object(object) => {
            let unmatched_paths;
            let elsewhere = match selector {
                Selector::IdentityAndState => Some(Selector::IdentityAndState),
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
                            && (items.is_empty()
                                || items
                                    .iter()
                                    .any(|item| item.as_object().is_some_and(|o| !o.is_empty())))
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

/// Two selections of the same answer as one: objects keep the keys of
/// both, lists (of the same items, so of the same length) are merged item
/// by item, and anything else is the same value in both.
fn merge(left: Value, right: Value) -> Value {
    match (left, right) {
        (Value::Object(mut left), Value::Object(right)) => {
            for (key, value) in right {
                match left.get_mut(&key) {
                    Some(slot) => *slot = merge(slot.take(), value),
                    None => {
                        left.insert(key, value);
                    }
                }
            }
            Value::Object(left)
        }
        (Value::Array(left), Value::Array(right)) if left.len() == right.len() => {
            Value::Array(left.into_iter().zip(right).map(|(l, r)| merge(l, r)).collect())
        }
        (Value::Null, right) => right,
        (left, _) => left,
    }
}

/// The paths of `tree` that name no key of `object`: what applies inside
/// its collections. `None` when every path matched here.
fn unmatched(tree: &PathTree, object: &Map<String, Value>) -> Option<PathTree> {
    let children: BTreeMap<String, PathTree> = tree
        .children
        .iter()
        .filter(|(key, _)| !object.contains_key(*key))
        .map(|(key, child)| (key.clone(), child.clone()))
        .collect();
    (!children.is_empty()).then_some(PathTree { whole: false, children })
}

#[cfg(test)]
mod tests;
