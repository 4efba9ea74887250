//! OpenAPI import: an OpenAPI 3.0/3.1 or Swagger 2.0 document (JSON or
//! YAML) in, the text of an adapter file (`*-adapter.md`: YAML front
//! matter, Markdown body) out, or an [`ImportError`] saying what is wrong
//! with the document. Never a panic, never a hang: nesting, reference
//! cycles and reference fan-out are all bounded.
//!
//! The adapter starts at trust level `generated`, takes credentials from
//! environment variables named after it, and never exposes a credential
//! as a parameter. References are resolved lazily and only as deep as a
//! parameter's type or a request body's top-level properties need, so
//! GitHub's 13 MB description imports in well under a second.
//!
//! `document` parses; `refs` follows `$ref`s; `schema` reads types and
//! properties; `responses` states the shape of a success answer; `names` makes names; `info` the header; `auth` the
//! credentials; `operations` the operations; `emit` writes the file.

mod auth;
mod document;
mod emit;
mod info;
mod names;
mod operations;
mod refs;
mod responses;
mod schema;

pub use refs::RefProblem;

/// What to import as.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The adapter's name; derived from the document's title when `None`.
    pub name: Option<String>,
    /// The document's file name, mentioned in the adapter's Markdown body.
    pub source: String,
}

/// An imported adapter.
#[derive(Debug)]
pub struct Imported {
    /// The adapter file's text.
    pub text: String,
    /// How many operations it has.
    pub operations: usize,
    /// What was left out or changed on the way, one line each.
    pub warnings: Vec<String>,
}

/// Why a document could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("not valid JSON: {0}")]
    Json(String),
    #[error("not valid YAML: {0}")]
    Yaml(String),
    #[error("nested more than {0} levels deep")]
    TooDeep(usize),
    #[error("not an OpenAPI document: {0}")]
    NotOpenApi(String),
    #[error("unsupported version {0}: supported are OpenAPI 3.0.x and 3.1.x, and Swagger 2.0")]
    UnsupportedVersion(String),
    #[error("$ref \"{reference}\" {problem}")]
    Ref { reference: String, problem: RefProblem },
    #[error(
        "{0}; pass a document whose servers[0].url (OpenAPI 3) or host (Swagger 2.0) makes an absolute http(s) URL"
    )]
    NoServer(String),
    #[error(
        "the adapter name \"{0}\" must match ^[a-z][a-z0-9-]*[a-z0-9]$ and be 2 to 64 characters"
    )]
    InvalidName(String),
    #[error("the document has no operation an adapter can hold (GET, POST, PUT, PATCH or DELETE)")]
    NoOperations,
    #[error("{at}: {error}")]
    At { at: String, error: Box<ImportError> },
}

impl ImportError {
    /// This error, said to be about `at` (an operation, a path, a scheme).
    fn at(self, at: &str) -> Self {
        ImportError::At { at: at.to_owned(), error: Box::new(self) }
    }
}

/// Imports the document `text`.
pub fn import(text: &str, options: &ImportOptions) -> Result<Imported, ImportError> {
    let document = document::parse(text)?;
    let refs = refs::Refs::new(&document.root);
    let mut warnings = Vec::new();
    let header = info::header(&document, options.name.as_deref(), &mut warnings)?;
    let security = auth::security(&document, &refs, &mut warnings)?;
    let operations = operations::operations(&document, &refs, &security, &mut warnings)?;
    if operations.is_empty() {
        return Err(ImportError::NoOperations);
    }
    let text = emit::adapter(&emit::Adapter {
        header: &header,
        auth: security.auth.as_ref(),
        operations: &operations,
        source: &options.source,
        document: &document,
    });
    Ok(Imported { text, operations: operations.len(), warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PETS: &str = r##"
openapi: 3.0.3
info:
  title: Pet Store
  version: 1.2.0
  description: |
    Manage the pets of a store. Everything a pet shop needs.
servers:
  - url: https://{env}.pets.test/v1/
    variables:
      env: {default: api}
security:
  - token: []
components:
  securitySchemes:
    token: {type: http, scheme: bearer}
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string, description: The pet's name.}
        kind: {type: string, enum: [cat, dog], default: cat}
        children: {type: array, items: {$ref: '#/components/schemas/Pet'}}
paths:
  /pets:
    get:
      operationId: listPets
      summary: List pets
      parameters:
        - {name: limit, in: query, schema: {type: integer, default: 20}}
    post:
      operationId: createPet
      summary: Add a pet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Pet'}
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: integer}}
    get:
      operationId: showPetById
      description: "Info for a specific pet.\nMore text."
    delete:
      operationId: deletePet
"##;

    const PETS_ADAPTER: &str = r#"---
name: pet-store
type: adapter
version: "1.2.0"
description: "Pet Store: Manage the pets of a store."
target:
  base_url: "https://api.pets.test/v1"
  transport: http
  protocol: rest
  serialization: json
auth:
  type: bearer
  token_env: PET_STORE_TOKEN
trust:
  level: generated
  generated_by: "safety-dongle adapter import-openapi"
operations:
  create:
    - name: create_pet
      maps_to: "POST /pets"
      description: "Add a pet"
      params:
        name: {type: string, required: true, in: body, description: "The pet's name."}
        kind: {type: string, in: body, default: "cat", enum: ["cat", "dog"]}
        children: {type: array, in: body}
  read:
    - name: list_pets
      maps_to: "GET /pets"
      description: "List pets"
      params:
        limit: {type: integer, in: query, default: 20}
    - name: show_pet_by_id
      maps_to: "GET /pets/{pet_id}"
      description: "Info for a specific pet."
      params:
        pet_id: {type: integer, required: true, in: path, wire_name: "petId"}
  delete:
    - name: delete_pet
      maps_to: "DELETE /pets/{pet_id}"
      description: "DELETE /pets/{petId}"
      params:
        pet_id: {type: integer, required: true, in: path, wire_name: "petId"}
---

# Pet Store

Generated by `safety-dongle adapter import-openapi` from `pets.yaml` (OpenAPI 3.0.3): 4 operations (1 create, 2 read, 0 update, 1 delete) against https://api.pets.test/v1.

Calls carry a bearer token read from the environment variable `PET_STORE_TOKEN`. Credentials never appear in this file or in an operation's parameters.

Trust level `generated`: until a human reviews this file and promotes it, only read operations pass the trust matrix.
"#;

    fn options() -> ImportOptions {
        ImportOptions { name: None, source: "pets.yaml".into() }
    }

    #[test]
    fn the_adapter_file_has_the_contracted_shape() {
        let imported = import(PETS, &options()).unwrap();
        assert_eq!(imported.text, PETS_ADAPTER);
        assert_eq!(imported.operations, 4);
        assert!(imported.warnings.is_empty(), "{:?}", imported.warnings);
    }

    #[test]
    fn the_auth_block_for_each_scheme_kind() {
        let rows = [
            (
                "{type: http, scheme: bearer}",
                Some("auth:\n  type: bearer\n  token_env: PETS_TOKEN\n"),
            ),
            ("{type: oauth2, flows: {}}", Some("auth:\n  type: bearer\n  token_env: PETS_TOKEN\n")),
            (
                "{type: http, scheme: basic}",
                Some(
                    "auth:\n  type: basic\n  username_env: PETS_USERNAME\n  password_env: PETS_PASSWORD\n",
                ),
            ),
            (
                "{type: apiKey, in: header, name: X-API-Key}",
                Some(
                    "auth:\n  type: api_key\n  header_name: \"X-API-Key\"\n  key_env: PETS_API_KEY\n",
                ),
            ),
            (
                "{type: apiKey, in: query, name: api_key}",
                Some(
                    "auth:\n  type: api_key\n  query_param: \"api_key\"\n  key_env: PETS_API_KEY\n",
                ),
            ),
            ("{type: apiKey, in: cookie, name: sid}", None),
        ];
        for (scheme, block) in rows {
            let text =
                PETS.replace("token: {type: http, scheme: bearer}", &format!("token: {scheme}"));
            let options = ImportOptions { name: Some("pets".into()), ..options() };
            let imported = import(&text, &options).unwrap();
            match block {
                Some(block) => assert!(
                    imported.text.contains(&format!("serialization: json\n{block}trust:\n")),
                    "{scheme}:\n{}",
                    imported.text
                ),
                None => assert!(
                    !imported.text.contains("auth:")
                        && imported.text.contains("calls go out without credentials"),
                    "{scheme}"
                ),
            }
        }
    }

    #[test]
    fn bad_documents_are_errors_that_say_where_and_why() {
        let non_local =
            PETS.replace("'#/components/schemas/Pet'}\n  /pets/", "'pet.yaml#/Pet'}\n  /pets/");
        assert_ne!(non_local, PETS);
        let message = import(&non_local, &options()).unwrap_err().to_string();
        assert_eq!(
            message,
            "POST /pets: $ref \"pet.yaml#/Pet\" points outside this document; only local references (#/...) are supported, so bundle the document into one file first"
        );
        let dangling = PETS.replace(
            "$ref: '#/components/schemas/Pet'}\n  /pets/",
            "$ref: '#/components/schemas/Missing'}\n  /pets/",
        );
        let message = import(&dangling, &options()).unwrap_err().to_string();
        assert!(message.contains("#/components/schemas/Missing\" points at nothing"), "{message}");
        let no_server = PETS.replace("servers:", "x-servers:");
        assert!(import(&no_server, &options()).unwrap_err().to_string().contains("no `servers`"));
        let only_head =
            "openapi: 3.0.0\nservers: [{url: 'https://x.test'}]\npaths:\n  /x:\n    head: {}\n";
        assert!(matches!(import(only_head, &options()), Err(ImportError::NoOperations)));
        let named = ImportOptions { name: Some("Pets!".into()), ..options() };
        assert!(matches!(import(PETS, &named), Err(ImportError::InvalidName(_))));
    }
}
