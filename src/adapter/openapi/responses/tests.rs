use serde_json::json;

use super::*;
use crate::adapter::openapi::document::parse;

const DOCUMENT: &str = r##"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
    "/repo": {
        "get": {"responses": {"200": {"description": "ok", "content": {"application/json; charset=utf-8": {"schema": {"$ref": "#/components/schemas/Repo"}}}}}},
        "post": {"responses": {"201": {"$ref": "#/components/responses/Created"}}},
        "put": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}}}},
        "delete": {"responses": {"204": {"description": "gone"}}}
    },
    "/tree": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Tree"}}}}}}},
    "/text": {"get": {"responses": {"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}}}}
}, "components": {
    "responses": {"Created": {"description": "made", "content": {"application/json": {"schema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}}}},
    "schemas": {
        "Owner": {"type": "object", "properties": {"login": {"type": "string"}}, "required": ["login"]},
        "Base": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
        "Repo": {"allOf": [{"$ref": "#/components/schemas/Base"}, {"type": "object", "required": ["name", "owner"], "properties": {
            "name": {"type": "string"},
            "owner": {"$ref": "#/components/schemas/Owner"},
            "license": {"type": "string", "nullable": true, "enum": ["mit", "apache-2.0"]},
            "topics": {"type": "array", "items": {"type": "string"}},
            "parents": {"type": "array", "items": {"$ref": "#/components/schemas/Owner"}},
            "choice": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        }}]},
        "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Tree"}}}}
    }
}}"##;

fn schema_of(path: &str, method: &str) -> Option<Value> {
    let document = parse(DOCUMENT).unwrap();
    let refs = Refs::new(&document.root);
    let operation = document.root.get("paths").unwrap().get(path).unwrap().get(method).unwrap();
    success_schema(&refs, operation, document.dialect).unwrap()
}

#[test]
fn the_success_shape_is_the_body_and_one_level_down() {
    assert_eq!(
        schema_of("/repo", "get"),
        Some(json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string"},
                "owner": {"type": "object"},
                "license": {"type": ["string", "null"], "enum": ["mit", "apache-2.0", null]},
                "topics": {"type": "array", "items": {"type": "string"}},
                "parents": {"type": "array", "items": {"type": "object"}}
            },
            "required": ["id", "name", "owner"]
        }))
    );
    assert_eq!(
        schema_of("/repo", "post"),
        Some(
            json!({"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]})
        ),
        "a 201 through a $ref"
    );
}

#[test]
fn choices_other_media_missing_bodies_and_cycles_constrain_nothing_they_cannot_state() {
    assert_eq!(schema_of("/repo", "put"), None, "oneOf");
    assert_eq!(schema_of("/repo", "delete"), None, "204 only");
    assert_eq!(schema_of("/text", "get"), None, "not JSON");
    assert_eq!(
        schema_of("/tree", "get"),
        Some(json!({"type": "object", "properties": {"children": {"type": "array"}}})),
        "the tree's items are the tree again: a cycle, left open"
    );
}

#[test]
fn every_schema_made_compiles_and_judges_answers() {
    let schema = crate::adapter::json_schema::LazySchema::new(schema_of("/repo", "get").unwrap());
    let good = json!({"id": 1, "name": "r", "owner": {"login": "o"}, "license": null, "topics": ["a"], "parents": [{}], "choice": 3});
    assert_eq!(schema.problems(&good), Ok(vec![]));
    let bad = json!({"id": "1", "name": "r", "license": "gpl"});
    assert_eq!(
        schema.problems(&bad).unwrap().len(),
        3,
        "id's type, the missing owner, the license outside its enum"
    );
}
