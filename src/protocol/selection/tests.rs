use serde_json::{Value, json};

use super::*;
use crate::protocol::{
    error::ErrorCode,
    registry::{Category, ReturnType},
};

fn spec(params: Vec<ParamSpec>) -> OperationSpec {
    OperationSpec {
        name: "get_thing".into(),
        category: Category::Read,
        description: "test".into(),
        params,
        returns: ReturnType { name: "Thing", kind: "object", description: "" },
        examples: vec![],
        source: None,
        origin: None,
        danger_level: None,
        lifecycle: None,
        field_presets: FieldPresets::default(),
    }
}

fn selection(fields: Value) -> FieldSelection {
    parse(&spec(vec![]), &fields).unwrap().unwrap()
}

fn minimal() -> FieldSelection {
    selection(json!("minimal"))
}

#[test]
fn paths_keep_structure_and_skip_what_does_not_exist() {
    let data = json!({"id": "1", "name": "a", "settings": {"theme": "dark", "language": "en"}, "tags": ["x"], "count": 3});
    let kept =
        selection(json!(["id", "settings.theme", "missing", "count.deeper"])).apply(data.clone());
    assert_eq!(kept, json!({"id": "1", "settings": {"theme": "dark"}}));
    // A whole field wins over a path inside it, in either order.
    assert_eq!(
        selection(json!(["settings.theme", "settings"])).apply(data.clone())["settings"],
        data["settings"]
    );
    assert_eq!(
        selection(json!(["settings", "settings.theme"])).apply(data.clone())["settings"],
        data["settings"]
    );
}

#[test]
fn collections_are_selected_item_by_item_and_metadata_is_kept() {
    let data = json!({
        "_protocol": {"version": "1.0.0-draft"},
        "operations": [{"name": "a", "endpoint": "read", "description": "d"}, {"name": "b", "endpoint": "create", "description": "e"}],
        "pageInfo": {"hasNextPage": false},
    });
    let by_item = selection(json!(["name"])).apply(data.clone());
    assert_eq!(
        by_item,
        json!({"_protocol": {"version": "1.0.0-draft"}, "operations": [{"name": "a"}, {"name": "b"}], "pageInfo": {"hasNextPage": false}})
    );
    assert_eq!(selection(json!(["operations.name"])).apply(data.clone()), by_item);
    assert_eq!(
        selection(json!(["name"])).apply(json!([{"name": "a", "x": 1}, 7])),
        json!([{"name": "a"}, 7])
    );
    // An empty collection stays, so a page with nothing on it still says so.
    assert_eq!(
        selection(json!(["name"])).apply(json!({"operations": []})),
        json!({"operations": []})
    );
}

#[test]
fn a_field_of_the_record_does_not_pull_in_its_nested_lists() {
    let directive = json!({"continue": false, "reason": "r", "factors": ["stage 3"], "notifications": [{"type": "autonomy_pause", "metadata": {}}]});
    assert_eq!(
        selection(json!(["continue", "reason"])).apply(directive.clone()),
        json!({"continue": false, "reason": "r"})
    );
    assert_eq!(
        selection(json!(["continue", "notifications"])).apply(directive.clone())["notifications"],
        directive["notifications"]
    );
}

#[test]
fn minimal_keeps_identity_and_state() {
    let data = json!({"execution_id": "e", "status": "running", "steps": 4, "stepsRemaining": 6, "approvalId": "a"});
    assert_eq!(
        minimal().apply(data),
        json!({"execution_id": "e", "status": "running", "approvalId": "a"})
    );
    let list = json!({"operations": [{"name": "a", "description": "d"}]});
    assert_eq!(minimal().apply(list), json!({"operations": [{"name": "a"}]}));
}

#[test]
fn bad_values_are_refused_and_full_presets_select_nothing() {
    for full in ["standard", "full"] {
        assert_eq!(parse(&spec(vec![]), &json!(full)).unwrap(), None);
    }
    for (bad, code) in [
        (json!("tiny"), ErrorCode::ValidationInvalidValue),
        (json!(["a..b"]), ErrorCode::ValidationInvalidValue),
        (json!([3]), ErrorCode::ValidationInvalidValue),
        (json!({"a": 1}), ErrorCode::ValidationInvalidType),
    ] {
        let error = parse(&spec(vec![]), &bad).unwrap_err();
        assert_eq!(error.code, code, "{bad}");
        assert_eq!(error.details["param_name"], "fields", "{bad}");
    }
}

#[test]
fn the_selection_is_taken_out_of_the_request_unless_the_operation_declares_fields() {
    let request = |v: Value| v.as_object().unwrap().clone();
    let plain = spec(vec![ParamSpec::required("id", ParamType::String, "id")]);
    let asked = request(
        json!({"operation": "get_thing", "fields": ["id"], "params": {"id": "1", "fields": ["name"]}}),
    );
    let (rest, chosen) = take_selection(&plain, &asked).unwrap();
    assert_eq!(chosen, Some(selection(json!(["name"]))), "params.fields wins over the top level");
    assert_eq!(*rest, request(json!({"operation": "get_thing", "params": {"id": "1"}})));
    let none = request(json!({"operation": "get_thing", "params": {"id": "1"}}));
    assert!(matches!(take_selection(&plain, &none).unwrap(), (Cow::Borrowed(_), None)));

    let own = spec(vec![ParamSpec::optional("fields", ParamType::String, "the tool's own")]);
    let passed = request(json!({"operation": "get_thing", "params": {"fields": "a,b"}}));
    let (rest, chosen) = take_selection(&own, &passed).unwrap();
    assert_eq!((rest.into_owned(), chosen), (passed, None));
}

/// An answer with a schema: records that must keep `name` and `kind`,
/// presets of its own.
fn schema_bound() -> OperationSpec {
    let mut spec = spec(vec![]);
    spec.field_presets = FieldPresets {
        required: &["item.name", "item.kind", "list.name"],
        minimal: Preset::Paths(&[]),
        standard: Preset::Paths(&["item.notes"]),
    };
    spec
}

#[test]
fn what_the_schema_requires_survives_every_selection() {
    let spec = schema_bound();
    let select = |fields: Value, data: Value| {
        parse(&spec, &fields).unwrap().map_or(data.clone(), |s| s.apply(data))
    };
    let item = json!({"item": {"name": "n", "kind": "k", "notes": "long", "examples": [{"a": 1}]}});
    assert_eq!(select(json!("minimal"), item.clone()), json!({"item": {"name": "n", "kind": "k"}}));
    assert_eq!(
        select(json!("standard"), item.clone()),
        json!({"item": {"name": "n", "kind": "k", "notes": "long"}})
    );
    assert_eq!(select(json!("full"), item.clone()), item);
    assert_eq!(
        select(json!(["item.examples"]), item.clone()),
        json!({"item": {"name": "n", "kind": "k", "examples": [{"a": 1}]}})
    );
    // A record that is null stays null, so "not found" still reads so.
    assert_eq!(select(json!("minimal"), json!({"item": null})), json!({"item": null}));
    // In a list, a path of the request and the required ones apply to each record.
    let list =
        json!({"_meta": 1, "list": [{"name": "a", "x": 1, "y": 2}, {"name": "b", "x": 3, "y": 4}]});
    assert_eq!(
        select(json!(["x"]), list.clone()),
        json!({"_meta": 1, "list": [{"name": "a", "x": 1}, {"name": "b", "x": 3}]})
    );
    assert_eq!(
        select(json!("minimal"), list),
        json!({"_meta": 1, "list": [{"name": "a"}, {"name": "b"}]})
    );
}

#[test]
fn the_fields_parameter_says_what_this_operation_keeps() {
    let default = fields_param(&spec(vec![]));
    assert_eq!((default.ty.name(), default.required), ("FieldSelection", false));
    assert!(
        default.description.contains("minimal keeps each record's identity and state")
            && default.description.contains("standard keeps everything"),
        "{}",
        default.description
    );
    let bound = fields_param(&schema_bound()).description;
    assert!(
        bound.contains(
            "Always kept, as the answer's schema requires them: item: name, kind; list: name"
        ),
        "{bound}"
    );
    assert!(
        bound.contains(
            "minimal keeps nothing beyond what is always kept; standard keeps item: notes"
        ),
        "{bound}"
    );
}

#[test]
fn field_selection_is_a_described_type() {
    let details = field_selection_type().details();
    assert_eq!(
        (details["name"].clone(), details["kind"].clone()),
        (json!("FieldSelection"), json!("object"))
    );
    let presets =
        details["fields"].as_array().unwrap().iter().find(|f| f["name"] == "presets").unwrap();
    assert_eq!(presets["enum"], json!(["minimal", "standard", "full"]));
}
