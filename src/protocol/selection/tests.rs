use serde_json::{Value, json};

use super::*;
use crate::protocol::{
    error::ErrorCode,
    registry::{Category, ReturnType},
};

fn spec(params: Vec<ParamSpec>) -> OperationSpec {
    OperationSpec { name: "get_thing".into(), category: Category::Read, description: "test".into(), params, returns: ReturnType { name: "Thing", kind: "object", description: "" }, examples: vec![], source: None, origin: None, danger_level: None, }
}

fn selection(fields: Value) -> FieldSelection {
    parse("get_thing", &fields).unwrap().unwrap()
}

#[test]
fn paths_keep_structure_and_skip_what_does_not_exist() {
    let data = json!({"id": "1", "name": "a", "settings": {"theme": "dark", "language": "en"}, "tags": ["x"], "count": 3});
    let kept = selection(json!(["id", "settings.theme", "missing", "count.deeper"])).apply(data.clone());
    assert_eq!(kept, json!({"id": "1", "settings": {"theme": "dark"}}));
    // A whole field wins over a path inside it, in either order.
    assert_eq!(selection(json!(["settings.theme", "settings"])).apply(data.clone())["settings"], data["settings"]);
    assert_eq!(selection(json!(["settings", "settings.theme"])).apply(data.clone())["settings"], data["settings"]);
}

#[test]
fn collections_are_selected_item_by_item_and_metadata_is_kept() {
    let data = json!({
        "_protocol": {"version": "1.0.0-draft"},
        "operations": [{"name": "a", "endpoint": "read", "description": "d"}, {"name": "b", "endpoint": "create", "description": "e"}],
        "pageInfo": {"hasNextPage": false},
    });
    let by_item = selection(json!(["name"])).apply(data.clone());
    assert_eq!(by_item, json!({"_protocol": {"version": "1.0.0-draft"}, "operations": [{"name": "a"}, {"name": "b"}], "pageInfo": {"hasNextPage": false}}));
    assert_eq!(selection(json!(["operations.name"])).apply(data.clone()), by_item);
    assert_eq!(selection(json!(["name"])).apply(json!([{"name": "a", "x": 1}, 7])), json!([{"name": "a"}, 7]));
    // An empty collection stays, so a page with nothing on it still says so.
    assert_eq!(selection(json!(["name"])).apply(json!({"operations": []})), json!({"operations": []}));
}

#[test]
fn a_field_of_the_record_does_not_pull_in_its_nested_lists() {
    let directive = json!({"continue": false, "reason": "r", "factors": ["stage 3"], "notifications": [{"type": "autonomy_pause", "metadata": {}}]});
    assert_eq!(selection(json!(["continue", "reason"])).apply(directive.clone()), json!({"continue": false, "reason": "r"}));
    assert_eq!(selection(json!(["continue", "notifications"])).apply(directive.clone())["notifications"], directive["notifications"]);
}

#[test]
fn minimal_keeps_identity_and_state() {
    let data = json!({"execution_id": "e", "status": "running", "steps": 4, "stepsRemaining": 6, "approvalId": "a"});
    assert_eq!(FieldSelection::Minimal.apply(data), json!({"execution_id": "e", "status": "running", "approvalId": "a"}));
    let list = json!({"operations": [{"name": "a", "description": "d"}]});
    assert_eq!(FieldSelection::Minimal.apply(list), json!({"operations": [{"name": "a"}]}));
}

#[test]
fn bad_values_are_refused_and_full_presets_select_nothing() {
    for full in ["standard", "full"] {
        assert_eq!(parse("get_thing", &json!(full)).unwrap(), None);
    }
    for (bad, code) in [(json!("tiny"), ErrorCode::ValidationInvalidValue), (json!(["a..b"]), ErrorCode::ValidationInvalidValue), (json!([3]), ErrorCode::ValidationInvalidValue), (json!({"a": 1}), ErrorCode::ValidationInvalidType)] {
        let error = parse("get_thing", &bad).unwrap_err();
        assert_eq!(error.code, code, "{bad}");
        assert_eq!(error.details["param_name"], "fields", "{bad}");
    }
}

#[test]
fn the_selection_is_taken_out_of_the_request_unless_the_operation_declares_fields() {
    let request = |v: Value| v.as_object().unwrap().clone();
    let plain = spec(vec![ParamSpec::required("id", ParamType::String, "id")]);
    let asked = request(json!({"operation": "get_thing", "fields": ["id"], "params": {"id": "1", "fields": ["name"]}}));
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
