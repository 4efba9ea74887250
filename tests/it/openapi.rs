//! `safety-dongle adapter import-openapi` through the real binary: a small
//! YAML document with a recursive schema and credentials to keep out of the
//! parameters, documents it must refuse, and GitHub's real REST API
//! description (`@octokit/openapi`, 13 MB, installed by
//! `tests/downstream/install.sh`).

use std::{
    collections::BTreeSet,
    path::{Path, PathBuf},
};

use marked_yaml::types::{MarkedMappingNode, MarkedScalarNode};
use serde_json::Value;
use tokio::sync::OnceCell;

use super::support::{dongle_command, downstream_packages, scratch_dir};

const PETS: &str = r##"openapi: 3.0.3
info:
  title: Pet Store
  version: 2.0.0
servers:
  - url: https://pets.example.com/v1
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string}
        species: {type: string, enum: [cat, dog], default: cat}
        offspring: {type: array, items: {$ref: '#/components/schemas/Pet'}}
        parent: {$ref: '#/components/schemas/Pet'}
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - {name: limit, in: query, schema: {type: integer, default: 20}}
        - {name: X-API-Key, in: header, required: true, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
    post:
      operationId: createPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Pet'}
  /pets/{petId}:
    delete:
      operationId: deletePet
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
"##;

/// Runs `adapter import-openapi` with `args`; returns exit code, stdout,
/// stderr.
async fn import(args: &[&str]) -> (Option<i32>, String, String) {
    let mut full = vec!["adapter", "import-openapi"];
    full.extend_from_slice(args);
    let output = dongle_command(&full).output().await.expect("run import-openapi");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The YAML front matter of an adapter file.
fn front_matter(text: &str) -> MarkedMappingNode {
    let rest = text.strip_prefix("---\n").expect("starts with ---");
    let end = rest.find("\n---\n").expect("front matter closes with ---");
    marked_yaml::parse_yaml(0, &rest[..end + 1])
        .expect("front matter is YAML")
        .as_mapping()
        .expect("a mapping")
        .clone()
}

fn scalar<'a>(map: &'a MarkedMappingNode, path: &[&str]) -> &'a str {
    let (last, parents) = path.split_last().expect("a path");
    let mut map = map;
    for key in parents {
        map = map.get_mapping(key).unwrap_or_else(|| panic!("no mapping {key}"));
    }
    map.get_scalar(last)
        .map(MarkedScalarNode::as_str)
        .unwrap_or_else(|| panic!("no scalar {path:?}"))
}

/// Every operation of the front matter, with its category.
fn operations(front: &MarkedMappingNode) -> Vec<(String, &MarkedMappingNode)> {
    let categories = front.get_mapping("operations").expect("operations");
    categories
        .iter()
        .flat_map(|(category, list)| {
            list.as_sequence().expect("a list of operations").iter().map(move |op| {
                (category.as_str().to_owned(), op.as_mapping().expect("an operation"))
            })
        })
        .collect()
}

#[tokio::test]
async fn a_yaml_document_with_a_recursive_schema_becomes_an_adapter_file() {
    let dir = scratch_dir();
    let spec = dir.join("pets.yaml");
    std::fs::write(&spec, PETS).unwrap();
    let output = dir.join("pets-adapter.md");
    let (code, stdout, stderr) =
        import(&[spec.to_str().unwrap(), "-o", output.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.is_empty(), "the adapter goes to the file: {stdout}");
    assert!(
        stderr.contains(&format!(
            "imported 3 operations from {} into {}",
            spec.display(),
            output.display()
        )),
        "{stderr}"
    );

    let text = std::fs::read_to_string(&output).unwrap();
    let front = front_matter(&text);
    assert_eq!(scalar(&front, &["name"]), "pet-store");
    assert_eq!(scalar(&front, &["type"]), "adapter");
    assert_eq!(scalar(&front, &["version"]), "2.0.0");
    assert_eq!(scalar(&front, &["target", "base_url"]), "https://pets.example.com/v1");
    assert_eq!(scalar(&front, &["auth", "type"]), "api_key");
    assert_eq!(scalar(&front, &["auth", "header_name"]), "X-API-Key");
    assert_eq!(scalar(&front, &["auth", "key_env"]), "PET_STORE_API_KEY");
    assert_eq!(scalar(&front, &["trust", "level"]), "generated");
    assert_eq!(scalar(&front, &["trust", "generated_by"]), "safety-dongle adapter import-openapi");

    let operations = operations(&front);
    let summary: Vec<(String, &str, &str)> = operations
        .iter()
        .map(|(category, op)| (category.clone(), scalar(op, &["name"]), scalar(op, &["maps_to"])))
        .collect();
    assert_eq!(
        summary,
        [
            ("create".to_owned(), "create_pet", "POST /pets"),
            ("read".to_owned(), "list_pets", "GET /pets"),
            ("delete".to_owned(), "delete_pet", "DELETE /pets/{pet_id}"),
        ]
    );
    let params = |index: usize| operations[index].1.get_mapping("params").expect("params");
    let create = params(0);
    let keys: Vec<&str> = create.keys().map(MarkedScalarNode::as_str).collect();
    assert_eq!(
        keys,
        ["name", "species", "offspring", "parent"],
        "the recursive schema's properties, once"
    );
    assert_eq!(scalar(create, &["name", "required"]), "true");
    assert_eq!(scalar(create, &["offspring", "type"]), "array");
    assert_eq!(scalar(create, &["parent", "type"]), "object");
    assert_eq!(scalar(create, &["species", "default"]), "cat");
    assert_eq!(scalar(create, &["species", "in"]), "body");
    let list = params(1);
    assert_eq!(
        list.keys().map(MarkedScalarNode::as_str).collect::<Vec<_>>(),
        ["limit"],
        "no credential parameter"
    );
    assert_eq!(scalar(list, &["limit", "default"]), "20");
    let delete = params(2);
    assert_eq!(scalar(delete, &["pet_id", "in"]), "path");
    assert_eq!(scalar(delete, &["pet_id", "wire_name"]), "petId");

    // Without -o the same adapter goes to stdout.
    let (code, stdout, stderr) = import(&[spec.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stdout, text);
    assert!(stderr.contains("into standard output"), "{stderr}");
}

#[tokio::test]
async fn bad_documents_exit_one_with_a_clear_message_and_write_nothing() {
    let dir = scratch_dir();
    let cases = [
        ("broken.json", "{\"openapi\": \"3.0.0\", \"paths\": {", "not valid JSON"),
        ("broken.yaml", "openapi: 3.0.0\npaths: [\n", "not valid YAML"),
        (
            "anchors.yaml",
            "openapi: 3.0.0\nx: &a [1, 2]\ny: [*a, *a]\n",
            "YAML anchors and aliases are not supported",
        ),
        ("old.yaml", "swagger: \"1.2\"\n", "unsupported version Swagger 1.2"),
        (
            "remote.yaml",
            &PETS.replace(
                "'#/components/schemas/Pet'}\n  /pets",
                "'https://example.com/pet.yaml'}\n  /pets",
            ),
            "only local references",
        ),
        ("relative.yaml", &PETS.replace("https://pets.example.com/v1", "/v1"), "absolute"),
    ];
    for (file, text, message) in cases {
        let spec = dir.join(file);
        std::fs::write(&spec, text).unwrap();
        let output = dir.join(format!("{file}-adapter.md"));
        let (code, stdout, stderr) =
            import(&[spec.to_str().unwrap(), "-o", output.to_str().unwrap()]).await;
        assert_eq!(code, Some(1), "{file}: {stderr}");
        assert!(stderr.contains(message) && stderr.contains(file), "{file}: {stderr}");
        assert!(stdout.is_empty() && !output.exists(), "{file}: nothing written");
    }
    let (code, _, stderr) = import(&[dir.join("missing.yaml").to_str().unwrap()]).await;
    assert_eq!(code, Some(1));
    assert!(stderr.contains("no such file"), "{stderr}");
}

fn github_description() -> PathBuf {
    downstream_packages().join("@octokit/openapi/generated/api.github.com.json")
}

/// GitHub's description imported once per test process: the adapter file.
async fn github_adapter() -> &'static Path {
    static ADAPTER: OnceCell<PathBuf> = OnceCell::const_new();
    ADAPTER
        .get_or_init(|| async {
            let output = scratch_dir().join("github-api-adapter.md");
            let spec = github_description();
            let (code, _, stderr) = import(&[
                spec.to_str().unwrap(),
                "--name",
                "github-api",
                "-o",
                output.to_str().unwrap(),
            ])
            .await;
            assert_eq!(code, Some(0), "{stderr}");
            assert!(stderr.contains("imported "), "{stderr}");
            output
        })
        .await
}

#[tokio::test]
async fn githubs_description_imports_every_operation_under_a_unique_name() {
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(github_description()).unwrap()).unwrap();
    const METHODS: [&str; 8] =
        ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    let in_document: usize = document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| {
            item.as_object().unwrap().keys().filter(|k| METHODS.contains(&k.as_str())).count()
        })
        .sum();
    assert!(
        in_document > 1_000,
        "GitHub's description has over a thousand operations ({in_document})"
    );

    let text = std::fs::read_to_string(github_adapter().await).unwrap();
    let front = front_matter(&text);
    assert_eq!(scalar(&front, &["name"]), "github-api");
    assert_eq!(scalar(&front, &["target", "base_url"]), "https://api.github.com");
    let operations = operations(&front);
    assert_eq!(operations.len(), in_document, "every operation of the document is imported");
    // Success answers keep their shape: repos/get's body must be an object
    // with full_name, checked at run time.
    let repos_get = text
        .split("    - name: ")
        .find(|block| block.starts_with("repos_get\n"))
        .expect("repos_get is imported");
    let schema_line = repos_get
        .lines()
        .find(|line| line.trim_start().starts_with("response: {schema: "))
        .expect("repos_get has a response schema");
    let schema: Value = serde_json::from_str(
        schema_line
            .trim()
            .strip_prefix("response: {schema: ")
            .and_then(|rest| rest.strip_suffix('}'))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(schema["type"], "object");
    assert!(schema["required"].as_array().unwrap().contains(&Value::from("full_name")), "{schema}");
    assert_eq!(schema["properties"]["full_name"]["type"], "string");
    let mut names = BTreeSet::new();
    for (_, operation) in &operations {
        let name = scalar(operation, &["name"]);
        assert!(name.len() <= 64, "{name} is longer than 64 characters");
        assert!(
            name.starts_with(|c: char| c.is_ascii_lowercase())
                && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}"
        );
        assert!(names.insert(name.to_owned()), "{name} appears twice");
    }
}

fn github_operation_count() -> usize {
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(github_description()).unwrap()).unwrap();
    const METHODS: [&str; 5] = ["get", "put", "post", "delete", "patch"];
    document["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| {
            item.as_object().unwrap().keys().filter(|k| METHODS.contains(&k.as_str())).count()
        })
        .sum()
}

/// The imported adapter passes `check` whole, and a dongle serving it
/// offers every operation through `introspect`.
#[tokio::test]
async fn githubs_imported_adapter_passes_check_and_loads() {
    let adapter = github_adapter().await;
    let expected = github_operation_count();
    let output =
        dongle_command(&["check", adapter.to_str().unwrap()]).output().await.expect("run check");
    assert!(
        output.status.success(),
        "`safety-dongle check` refused the imported adapter:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!("(adapter 'github-api', {expected} operations): ok")),
        "{stdout}"
    );

    let dir = scratch_dir();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "data_dir = \"{}\"\nadapters = [\"{}\"]\n",
            dir.join("state").display(),
            adapter.display()
        ),
    )
    .unwrap();
    let client =
        super::support::stdio_client(&["serve", "--config", config.to_str().unwrap()]).await;
    let (served, largest_page) =
        page_through(&client, serde_json::json!({"query": "operations", "source": "github-api"}))
            .await;
    assert_eq!(served.len(), expected, "every imported operation is served, each once");
    assert!(
        served.iter().all(|name| name.starts_with("github_api__")),
        "the source filter keeps GitHub's operations only"
    );
    assert!(
        largest_page <= PAGE_TARGET_BYTES,
        "a page of {largest_page} bytes is over the {PAGE_TARGET_BYTES}-byte target"
    );
    let (repos, _) = page_through(&client, serde_json::json!({"query": "operations", "name_pattern": "github_api__repos_*", "category": "DELETE", "first": 7})).await;
    assert!(
        !repos.is_empty() && repos.iter().all(|name| name.starts_with("github_api__repos_")),
        "{repos:?}"
    );
    let detail = super::support::introspect(
        &client,
        serde_json::json!({"query": "operations", "name": "github_api__repos_get"}),
    )
    .await;
    assert!(
        detail["data"]
            .to_string()
            .contains("[adapter 'github-api', GET /repos/{owner}/{repo}; danger_level: safe]"),
        "{detail}"
    );
}

/// The most bytes one page of an operation listing may take (its whole
/// envelope, as the agent reads it).
const PAGE_TARGET_BYTES: usize = 8 * 1024;

/// Every operation a listing reaches, following `pageInfo.endCursor`
/// until there is no next page (each page checked against the spec's
/// introspection schema, its cursors against its items and its danger
/// levels against its operations), and the largest page's size in bytes.
async fn page_through(client: &super::support::Client, query: Value) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    let mut largest = 0;
    let mut request = query.clone();
    loop {
        let page = super::support::introspect(client, request.clone()).await;
        super::support::assert_valid(&super::support::introspection_schema(), &page);
        largest = largest.max(page.to_string().len());
        let operations: Vec<String> = page["data"]["operations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["name"].as_str().unwrap().to_owned())
            .collect();
        let info = &page["data"]["_protocol"]["pageInfo"];
        assert_eq!(info["hasPreviousPage"], !names.is_empty(), "{info}");
        assert_eq!(info["startCursor"].as_str(), operations.first().map(String::as_str), "{info}");
        assert_eq!(info["endCursor"].as_str(), operations.last().map(String::as_str), "{info}");
        let levels = page["data"]["_protocol"]["danger_levels"].as_array().unwrap();
        assert!(
            levels.len() == operations.len() && levels.iter().all(Value::is_string),
            "a danger level for each operation of the page: {levels:?}"
        );
        names.extend(operations);
        if info["hasNextPage"] == false {
            assert_eq!(info["totalCount"], names.len(), "{info}");
            return (names, largest);
        }
        request = query.clone();
        request["first"] = query.get("first").cloned().unwrap_or(20.into());
        request["after"] = info["endCursor"].clone();
    }
}
