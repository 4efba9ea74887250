//! The document's operations as adapter operations, in document order.
//!
//! The method picks the CRUDE category (GET read, POST create, PUT and
//! PATCH update, DELETE delete; HEAD, OPTIONS and TRACE are skipped with a
//! warning). Names are snake_case, at most 64 characters, unique across
//! the adapter (later collisions get `_2`, `_3`). Path, query and header
//! parameters keep their location; a request body that is an object
//! becomes one `in: body` parameter per top-level property, any other body
//! one `raw_body` parameter named `body`. A parameter whose name had to
//! change carries the original as `wire_name`, and path placeholders are
//! renamed to match. Credential parameters are left out (see `auth`);
//! defaults and enums that do not fit the parameter's type are dropped.

use std::collections::BTreeSet;

use super::{
    ImportError,
    auth::Security,
    document::{Dialect, Document, Node},
    names::{MAX_NAME, fit},
    refs::{Refs, Walk},
    responses,
    schema::{self, Shape},
};
use crate::{
    adapter::naming::snake_case,
    adapter::{definition::Location, naming::claim},
    protocol::{params::ParamType, registry::Category},
};

/// One adapter operation.
#[derive(Debug)]
pub struct Operation {
    pub category: Category,
    pub name: String,
    /// `METHOD /path/{param}`, placeholders named as the parameters are.
    pub maps_to: String,
    pub description: String,
    pub params: Vec<Param>,
    /// What a 200 (or 201) answer's body must match (`response.schema`).
    pub response_schema: Option<serde_json::Value>,
}

/// One adapter parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// The name the API expects, when it is not `name`.
    pub wire_name: Option<String>,
    pub ty: ParamType,
    pub required: bool,
    pub location: Location,
    pub description: Option<String>,
    pub default: Option<Node>,
    pub enum_values: Option<Vec<Node>>,
}

/// The methods of a path item in the order OpenAPI lists them, with their
/// category; `None` for those the adapter format has no place for.
const METHODS: [(&str, &str, Option<Category>); 8] = [
    ("get", "GET", Some(Category::Read)),
    ("put", "PUT", Some(Category::Update)),
    ("post", "POST", Some(Category::Create)),
    ("delete", "DELETE", Some(Category::Delete)),
    ("options", "OPTIONS", None),
    ("head", "HEAD", None),
    ("patch", "PATCH", Some(Category::Update)),
    ("trace", "TRACE", None),
];

/// Every operation of the document, in document order.
pub fn operations(
    document: &Document,
    refs: &Refs<'_>,
    security: &Security,
    warnings: &mut Vec<String>,
) -> Result<Vec<Operation>, ImportError> {
    let mut names = BTreeSet::new();
    let mut operations = Vec::new();
    for (path, item) in document.root.entries("paths") {
        let item = refs.resolve(item).map_err(|e| e.at(path))?;
        for (key, operation) in item.as_object().into_iter().flatten() {
            let Some(&(_, method, category)) = METHODS.iter().find(|(name, _, _)| name == key)
            else {
                continue;
            };
            let at = format!("{method} {path}");
            let Some(category) = category else {
                warnings.push(format!("{at}: skipped: adapters have no {method} operations"));
                continue;
            };
            let mut builder = Builder {
                document,
                refs: *refs,
                security,
                warnings: &mut *warnings,
                at: &at,
                params: Vec::new(),
                taken: BTreeSet::new(),
            };
            let built = builder
                .build(method, path, item, operation, category, &mut names)
                .map_err(|e| e.at(&at))?;
            operations.push(built);
        }
    }
    Ok(operations)
}

/// The state of converting one operation.
struct Builder<'a, 'd> {
    document: &'d Document,
    refs: Refs<'d>,
    security: &'a Security,
    warnings: &'a mut Vec<String>,
    at: &'a str,
    params: Vec<Param>,
    /// Parameter names given out so far.
    taken: BTreeSet<String>,
}

/// A request body: its schema (if any), whether it is required, its
/// description.
struct Body<'d> {
    schema: Option<&'d Node>,
    required: bool,
    description: Option<&'d str>,
}

impl<'d> Builder<'_, 'd> {
    fn build(
        &mut self,
        method: &str,
        path: &str,
        item: &'d Node,
        operation: &'d Node,
        category: Category,
        names: &mut BTreeSet<String>,
    ) -> Result<Operation, ImportError> {
        let mut body = None;
        let mut form_fields = Vec::new();
        for parameter in self.parameters(item, operation)? {
            let (Some(location), Some(name)) = (parameter.str_at("in"), parameter.str_at("name"))
            else {
                self.warn("a parameter without `name` or `in` is skipped");
                continue;
            };
            match location {
                "path" | "query" | "header" => self.add_parameter(location, name, parameter)?,
                "body" => body = Some(Body { schema: parameter.get("schema"), required: is_true(parameter, "required"), description: parameter.str_at("description") }),
                "formData" => form_fields.push((name, parameter)),
                other => self.warn(&format!("the {other} parameter `{name}` is skipped: adapters cannot send {other} parameters")),
            }
        }
        if let Some(request_body) = operation.get("requestBody") {
            body = Some(self.request_body(request_body)?);
        }
        if !form_fields.is_empty() {
            self.warn("form fields become fields of a JSON body: the runtime sends JSON");
            for (name, field) in form_fields {
                let shape = self.shape(field)?;
                self.add_body_field(
                    name,
                    &shape,
                    is_true(field, "required"),
                    field.str_at("description"),
                );
            }
        }
        if let Some(body) = body {
            self.add_body(body)?;
        }
        let maps_to = format!("{method} {}", self.path_template(path));
        let raw_name = operation
            .str_at("operationId")
            .map_or_else(|| snake_case(&format!("{method} {path}")), snake_case);
        let name = claim(names, &fit(&raw_name, MAX_NAME), MAX_NAME);
        let response_schema =
            responses::success_schema(&self.refs, operation, self.document.dialect)?;
        Ok(Operation {
            category,
            name,
            maps_to,
            description: description(operation, method, path),
            params: std::mem::take(&mut self.params),
            response_schema,
        })
    }

    /// The path item's parameters then the operation's, each resolved; an
    /// operation parameter replaces the path item's of the same name and
    /// location.
    fn parameters(
        &self,
        item: &'d Node,
        operation: &'d Node,
    ) -> Result<Vec<&'d Node>, ImportError> {
        let mut merged: Vec<&'d Node> = Vec::new();
        for parameter in item.items("parameters").chain(operation.items("parameters")) {
            let parameter = self.refs.resolve(parameter)?;
            let key =
                |p: &Node| (p.str_at("name").map(str::to_owned), p.str_at("in").map(str::to_owned));
            match merged.iter_mut().find(|known| key(known) == key(parameter)) {
                Some(known) => *known = parameter,
                None => merged.push(parameter),
            }
        }
        Ok(merged)
    }

    fn add_parameter(
        &mut self,
        location: &str,
        name: &str,
        parameter: &'d Node,
    ) -> Result<(), ImportError> {
        // OpenAPI: header parameters named Accept, Content-Type or
        // Authorization "SHALL be ignored"; credentials come from `auth`.
        let ignored_header = location == "header"
            && (name.eq_ignore_ascii_case("accept") || name.eq_ignore_ascii_case("content-type"));
        if ignored_header || self.security.is_credential(location, name) {
            return Ok(());
        }
        let location = match location {
            "path" => Location::Path,
            "query" => Location::Query,
            _ => Location::Header,
        };
        // Header names are case-insensitive: their capitals mark no words.
        let base = if location == Location::Header {
            snake_case(&name.to_ascii_lowercase())
        } else {
            snake_case(name)
        };
        let shape = match self.document.dialect {
            Dialect::Swagger2 => self.shape(parameter)?,
            Dialect::OpenApi30 | Dialect::OpenApi31 => {
                let schema = parameter
                    .get("schema")
                    .or_else(|| parameter.get("content").and_then(first_media_schema));
                match schema {
                    Some(schema) => self.shape(schema)?,
                    None => Shape::default(),
                }
            }
        };
        let required = location == Location::Path || is_true(parameter, "required");
        let description = parameter.str_at("description").or(shape.description);
        self.push_param(&fit(&base, MAX_NAME), name, &shape, required, location, description);
        Ok(())
    }

    /// A 3.x `requestBody`: the JSON media type's schema (`application/json`,
    /// else a `+json` type, else the first one offered, with a warning).
    fn request_body(&mut self, request_body: &'d Node) -> Result<Body<'d>, ImportError> {
        let request_body = self.refs.resolve(request_body)?;
        let content = request_body.get("content").and_then(Node::as_object);
        let media = content.and_then(responses::json_media);
        if let Some((media, _)) = media {
            let json = media.to_ascii_lowercase().contains("json");
            if !json {
                self.warn(&format!("the request body is {media}: the runtime sends it as JSON"));
            }
        }
        Ok(Body {
            schema: media.and_then(|(_, media)| media.get("schema")),
            required: is_true(request_body, "required"),
            description: request_body.str_at("description"),
        })
    }

    /// A body whose schema is an object with properties: one `body`
    /// parameter per property; any other: one `raw_body` parameter.
    fn add_body(&mut self, body: Body<'d>) -> Result<(), ImportError> {
        if let Some(schema) = body.schema {
            let mut walk = Walk::default();
            let properties = schema::properties(&self.refs, schema, &mut walk)?;
            self.note_exhausted(&walk);
            if let Some(properties) = properties {
                for (name, property) in properties.entries {
                    let shape = self.shape(property)?;
                    self.add_body_field(name, &shape, properties.required.contains(&name), None);
                }
                return Ok(());
            }
        }
        let shape = match body.schema {
            Some(schema) => self.shape(schema)?,
            None => Shape::default(),
        };
        let description = body.description.or(shape.description);
        self.push_param("body", "body", &shape, body.required, Location::RawBody, description);
        Ok(())
    }

    /// A field of a JSON body; named `body_<name>` when a path, query or
    /// header parameter already has its name.
    fn add_body_field(
        &mut self,
        name: &str,
        shape: &Shape<'d>,
        required: bool,
        description: Option<&str>,
    ) {
        let base = snake_case(name);
        let clashes = self.params.iter().any(|p| p.location != Location::Body && p.name == base);
        let base = if clashes { format!("body_{base}") } else { base };
        self.push_param(
            &fit(&base, MAX_NAME),
            name,
            shape,
            required,
            Location::Body,
            description.or(shape.description),
        );
    }

    /// Adds a parameter under a unique name made from `base`, with `wire`
    /// as its `wire_name` when they differ; returns the name.
    fn push_param(
        &mut self,
        base: &str,
        wire: &str,
        shape: &Shape<'d>,
        required: bool,
        location: Location,
        description: Option<&str>,
    ) -> String {
        let name = claim(&mut self.taken, base, MAX_NAME);
        let enum_values: Option<Vec<Node>> = shape
            .enum_values
            .map(|values| {
                values.iter().filter(|v| schema::accepts(shape.ty, v)).cloned().collect::<Vec<_>>()
            })
            .filter(|values| !values.is_empty());
        let default = shape
            .default
            .filter(|d| {
                !required
                    && schema::accepts(shape.ty, d)
                    && enum_values.as_ref().is_none_or(|values| values.contains(d))
            })
            .cloned();
        self.params.push(Param {
            wire_name: (name != wire && location != Location::RawBody).then(|| wire.to_owned()),
            name: name.clone(),
            ty: shape.ty,
            required,
            location,
            description: description.map(str::to_owned),
            default,
            enum_values,
        });
        name
    }

    /// The path with each `{placeholder}` renamed to its parameter's name.
    /// A placeholder without a declared parameter gets a required string
    /// one; a declared path parameter the path does not use is dropped.
    /// Both with a warning: the document contradicts itself.
    fn path_template(&mut self, path: &str) -> String {
        let mut template = String::with_capacity(path.len());
        let mut used = Vec::new();
        let mut rest = path;
        while let Some(open) = rest.find('{') {
            let Some(close) = rest.get(open..).unwrap_or_default().find('}').map(|c| open + c)
            else {
                break;
            };
            let placeholder = rest.get(open + 1..close).unwrap_or_default();
            let declared = self.params.iter().find(|p| {
                p.location == Location::Path
                    && p.wire_name.as_deref().unwrap_or(&p.name) == placeholder
            });
            let name = match declared {
                Some(param) => param.name.clone(),
                None => {
                    self.warn(&format!("the path placeholder {{{placeholder}}} has no parameter: it is imported as a required string"));
                    self.push_param(
                        &fit(&snake_case(placeholder), MAX_NAME),
                        placeholder,
                        &Shape { ty: ParamType::String, ..Shape::default() },
                        true,
                        Location::Path,
                        None,
                    )
                }
            };
            template.push_str(rest.get(..open).unwrap_or_default());
            template.push('{');
            template.push_str(&name);
            template.push('}');
            used.push(name);
            rest = rest.get(close + 1..).unwrap_or_default();
        }
        template.push_str(rest);
        let unused: Vec<String> = self
            .params
            .iter()
            .filter(|p| p.location == Location::Path && !used.contains(&p.name))
            .map(|p| p.name.clone())
            .collect();
        for name in unused {
            self.warn(&format!("the path parameter `{name}` is not in the path: it is skipped"));
            self.params.retain(|p| p.name != name);
        }
        template
    }

    fn shape(&mut self, schema: &'d Node) -> Result<Shape<'d>, ImportError> {
        let mut walk = Walk::default();
        let shape = schema::shape(&self.refs, schema, &mut walk)?;
        self.note_exhausted(&walk);
        Ok(shape)
    }

    fn note_exhausted(&mut self, walk: &Walk<'_>) {
        if walk.exhausted {
            self.warn("a schema nests or refers too deeply to follow: the part not followed is imported as `any`");
        }
    }

    fn warn(&mut self, message: &str) {
        self.warnings.push(format!("{}: {message}", self.at));
    }
}

/// The operation's description: its summary, else the first line of its
/// description, else `METHOD path`; marked when deprecated.
fn description(operation: &Node, method: &str, path: &str) -> String {
    let text = non_empty(operation.str_at("summary"))
        .or_else(|| {
            non_empty(operation.str_at("description").and_then(|d| d.trim().lines().next()))
        })
        .map_or_else(|| format!("{method} {path}"), str::to_owned);
    if is_true(operation, "deprecated") { format!("Deprecated: {text}") } else { text }
}

fn non_empty(text: Option<&str>) -> Option<&str> {
    text.map(str::trim).filter(|t| !t.is_empty())
}

/// The schema of a `content` map's first media type.
fn first_media_schema(content: &Node) -> Option<&Node> {
    content.as_object()?.values().next()?.get("schema")
}

fn is_true(node: &Node, key: &str) -> bool {
    node.get(key).and_then(Node::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::openapi::{auth, document::parse, emit::param_line};

    fn convert(text: &str) -> (Vec<Operation>, Vec<String>) {
        let document = parse(text).unwrap();
        let refs = Refs::new(&document.root);
        let mut warnings = Vec::new();
        let security = auth::security(&document, &refs, &mut warnings).unwrap();
        let operations = operations(&document, &refs, &security, &mut warnings).unwrap();
        (operations, warnings)
    }

    /// Each parameter as the adapter file writes it.
    fn lines(operation: &Operation) -> Vec<String> {
        operation.params.iter().map(|p| format!("{}: {}", p.name, param_line(p))).collect()
    }

    #[test]
    fn swagger_2_body_and_form_data_parameters() {
        let (operations, warnings) = convert(
            r##"
swagger: "2.0"
info: {title: Pets, version: 1.0.0}
host: pets.test
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, type: integer}
    put:
      operationId: updatePet
      parameters:
        - {name: body, in: body, required: true, schema: {$ref: '#/definitions/Pet'}}
    post:
      operationId: uploadPhoto
      consumes: [multipart/form-data]
      parameters:
        - {name: file, in: formData, type: file, required: true}
        - {name: caption, in: formData, type: string, default: none}
  /pets:
    post:
      operationId: addPets
      parameters:
        - {name: pets, in: body, schema: {type: array, items: {$ref: '#/definitions/Pet'}}}
definitions:
  Pet:
    type: object
    required: [name]
    properties:
      petId: {type: integer}
      name: {type: string}
      tags: {type: array, items: {type: string}}
"##,
        );
        assert_eq!(operations.len(), 3);
        let update = &operations[0];
        assert_eq!(
            (update.name.as_str(), update.maps_to.as_str(), update.category),
            ("update_pet", "PUT /pets/{pet_id}", Category::Update)
        );
        assert_eq!(
            lines(update),
            [
                r#"pet_id: {type: integer, required: true, in: path, wire_name: "petId"}"#,
                r#"body_pet_id: {type: integer, in: body, wire_name: "petId"}"#,
                r#"name: {type: string, required: true, in: body}"#,
                r#"tags: {type: array, in: body}"#,
            ]
        );
        let upload = &operations[1];
        assert_eq!((upload.name.as_str(), upload.category), ("upload_photo", Category::Create));
        assert_eq!(
            lines(upload),
            [
                r#"pet_id: {type: integer, required: true, in: path, wire_name: "petId"}"#,
                r#"file: {type: any, required: true, in: body}"#,
                r#"caption: {type: string, in: body, default: "none"}"#,
            ]
        );
        assert_eq!(lines(&operations[2]), [r#"body: {type: array, in: raw_body}"#]);
        assert_eq!(
            warnings,
            [
                "POST /pets/{petId}: form fields become fields of a JSON body: the runtime sends JSON"
            ]
        );
    }

    #[test]
    fn parameter_types_defaults_enums_and_credentials() {
        let (operations, warnings) = convert(
            r##"
openapi: 3.1.0
info: {title: T, version: 1.0.0}
servers: [{url: "https://t.test"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
    query_key: {type: apiKey, in: query, name: api_key}
  parameters:
    PerPage: {name: per_page, in: query, schema: {type: integer, default: 30}}
paths:
  /items:
    get:
      operationId: listItems
      parameters:
        - {name: cursor, in: query, schema: {type: [string, "null"]}}
        - {name: limit, in: query, schema: {type: integer, default: "ten", enum: [10, 20, "x", null, 2.5]}}
        - {$ref: "#/components/parameters/PerPage"}
        - {name: sort, in: query, required: true, schema: {type: string, default: name, enum: [name, date]}}
        - {name: order, in: query, schema: {type: string, default: up, enum: [asc, desc]}}
        - {name: flags, in: query, schema: {type: string, enum: [1, 2]}}
        - {name: anything, in: query, schema: {oneOf: [{type: string}, {type: integer}]}, description: "Either\n  kind"}
        - {name: filter, in: query, content: {application/json: {schema: {type: object}}}}
        - {name: X-API-Key, in: header, schema: {type: string}}
        - {name: api_key, in: query, schema: {type: string}}
        - {name: Authorization, in: header, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: X-GitHub-Api-Version, in: header, schema: {type: string, default: "2022-11-28"}}
        - {name: session, in: cookie, schema: {type: string}}
    head:
      operationId: headItems
"##,
        );
        assert_eq!(operations.len(), 1);
        assert_eq!(
            lines(&operations[0]),
            [
                r#"cursor: {type: string, in: query}"#,
                r#"limit: {type: integer, in: query, enum: [10, 20]}"#,
                r#"per_page: {type: integer, in: query, default: 30}"#,
                r#"sort: {type: string, required: true, in: query, enum: ["name", "date"]}"#,
                r#"order: {type: string, in: query, enum: ["asc", "desc"]}"#,
                r#"flags: {type: string, in: query}"#,
                r#"anything: {type: any, in: query, description: "Either kind"}"#,
                r#"filter: {type: object, in: query}"#,
                r#"x_github_api_version: {type: string, in: header, wire_name: "X-GitHub-Api-Version", default: "2022-11-28"}"#,
            ]
        );
        assert_eq!(
            warnings,
            [
                "security schemes `key`, `query_key`: the adapter uses `key` (an adapter has one scheme)",
                "GET /items: the cookie parameter `session` is skipped: adapters cannot send cookie parameters",
                "HEAD /items: skipped: adapters have no HEAD operations",
            ]
        );
    }

    #[test]
    fn request_bodies_prefer_json_and_fall_back_to_a_raw_body() {
        let (operations, warnings) = convert(
            r##"
openapi: 3.0.3
info: {title: T, version: 1.0.0}
servers: [{url: "https://t.test"}]
components:
  requestBodies:
    Tree: {required: true, content: {application/json: {schema: {$ref: "#/components/schemas/Node"}}}}
  schemas:
    Node:
      type: object
      properties:
        label: {type: string, enum: [a, b], default: a}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
paths:
  /trees:
    post:
      operationId: createTree
      parameters: [{name: label, in: query, schema: {type: string}}]
      requestBody: {$ref: "#/components/requestBodies/Tree"}
  /lists:
    put:
      operationId: replaceList
      requestBody:
        required: true
        description: The whole list.
        content:
          text/plain: {schema: {type: string}}
          application/vnd.api+json; charset=utf-8: {schema: {type: array, items: {type: string}}}
  /notes:
    patch:
      operationId: patchNote
      requestBody: {content: {text/markdown: {schema: {type: string}}}}
"##,
        );
        assert_eq!(
            lines(&operations[0]),
            [
                r#"label: {type: string, in: query}"#,
                r#"body_label: {type: string, in: body, wire_name: "label", default: "a", enum: ["a", "b"]}"#,
                r#"children: {type: array, in: body}"#,
            ]
        );
        assert_eq!(
            lines(&operations[1]),
            [
                r#"body: {type: array, required: true, in: raw_body, description: "The whole list."}"#
            ]
        );
        assert_eq!(lines(&operations[2]), [r#"body: {type: string, in: raw_body}"#]);
        assert_eq!(
            warnings,
            ["PATCH /notes: the request body is text/markdown: the runtime sends it as JSON"]
        );
    }

    #[test]
    fn names_are_unique_in_document_order_and_placeholders_follow_parameters() {
        let (operations, warnings) = convert(
            r##"
openapi: 3.0.3
info: {title: T, version: 1.0.0}
servers: [{url: "https://t.test"}]
paths:
  /things/{thingId}/parts/{part-no}:
    get:
      operationId: getThing
      parameters:
        - {name: thingId, in: path, required: true, schema: {type: integer}}
        - {name: unused, in: path, required: true, schema: {type: string}}
        - {name: thing_id, in: query, schema: {type: string}}
    delete:
      operationId: get-thing
  /things:
    get:
      summary: "  "
      description: "Lists things.\nIn pages."
      deprecated: true
"##,
        );
        let names: Vec<_> = operations.iter().map(|op| op.name.as_str()).collect();
        assert_eq!(names, ["get_thing", "get_thing_2", "get_things"]);
        assert_eq!(operations[0].maps_to, "GET /things/{thing_id}/parts/{part_no}");
        assert_eq!(
            lines(&operations[0]),
            [
                r#"thing_id: {type: integer, required: true, in: path, wire_name: "thingId"}"#,
                r#"thing_id_2: {type: string, in: query, wire_name: "thing_id"}"#,
                r#"part_no: {type: string, required: true, in: path, wire_name: "part-no"}"#,
            ]
        );
        assert_eq!(operations[1].maps_to, "DELETE /things/{thing_id}/parts/{part_no}");
        assert_eq!(operations[2].description, "Deprecated: Lists things.");
        assert_eq!(operations[0].description, "GET /things/{thingId}/parts/{part-no}");
        assert_eq!(
            warnings,
            [
                "GET /things/{thingId}/parts/{part-no}: the path placeholder {part-no} has no parameter: it is imported as a required string",
                "GET /things/{thingId}/parts/{part-no}: the path parameter `unused` is not in the path: it is skipped",
                "DELETE /things/{thingId}/parts/{part-no}: the path placeholder {thingId} has no parameter: it is imported as a required string",
                "DELETE /things/{thingId}/parts/{part-no}: the path placeholder {part-no} has no parameter: it is imported as a required string",
            ]
        );
    }
}
