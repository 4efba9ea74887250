//! The OpenAPI document as read: JSON or YAML text parsed into a [`Node`]
//! tree whose mappings keep the document's key order (operations come out,
//! and name collisions settle, in the order the author wrote them), and the
//! dialect it declares.
//!
//! Text whose first character is `{` is JSON; anything else is YAML, read
//! with marked-yaml, which refuses anchors, aliases and tags, so no alias
//! can expand into a bomb. Nesting is bounded before either parser sees
//! deep input (serde_json stops at 128 levels itself; YAML nesting is
//! estimated from indentation first), so a hostile document is an error,
//! never a stack overflow.

use std::fmt;

use indexmap::IndexMap;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::ImportError;
use crate::adapter::yaml::{self, YamlError};

/// A value of the document. Mappings keep their key order; a key given
/// twice in JSON keeps its first position and its last value.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(IndexMap<String, Node>),
}

impl Node {
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(map) => map.get(key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&IndexMap<String, Node>> {
        match self {
            Node::Object(map) => Some(map),
            _ => None,
        }
    }

    /// The string under `key`, if it is one.
    pub fn str_at(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::as_str)
    }

    /// The entries of the mapping under `key`; none when it is missing or
    /// not a mapping.
    pub fn entries(&self, key: &str) -> impl Iterator<Item = (&String, &Node)> {
        self.get(key).and_then(Node::as_object).into_iter().flatten()
    }

    /// The items of the sequence under `key`; none when it is missing or
    /// not a sequence.
    pub fn items(&self, key: &str) -> impl Iterator<Item = &Node> {
        self.get(key).and_then(Node::as_array).into_iter().flatten()
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, value: bool) -> Result<Node, E> {
        Ok(Node::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Node, E> {
        Ok(Node::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Node, E> {
        Ok(Node::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Node, E> {
        // JSON has no NaN or infinity, so every f64 it yields is finite.
        Ok(serde_json::Number::from_f64(value).map_or(Node::Null, Node::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Node, E> {
        Ok(Node::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Node, E> {
        Ok(Node::String(value))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = IndexMap::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((key, value)) = map.next_entry::<String, Node>()? {
            entries.insert(key, value);
        }
        Ok(Node::Object(entries))
    }
}

/// What the document declares itself to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Swagger2,
    OpenApi30,
    OpenApi31,
}

/// A parsed document: its root mapping, dialect and declared version.
pub struct Document {
    pub root: Node,
    pub dialect: Dialect,
    /// The `openapi` or `swagger` field as written, for messages.
    pub declared: String,
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.dialect {
            Dialect::Swagger2 => write!(f, "Swagger {}", self.declared),
            Dialect::OpenApi30 | Dialect::OpenApi31 => write!(f, "OpenAPI {}", self.declared),
        }
    }
}

/// Parses `text` and detects its dialect.
pub fn parse(text: &str) -> Result<Document, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Node>(text).map_err(|e| ImportError::Json(e.to_string()))?
    } else {
        parse_yaml(text)?
    };
    if root.as_object().is_none() {
        return Err(ImportError::NotOpenApi("the top level is not a mapping".into()));
    }
    let (dialect, declared) = dialect(&root)?;
    Ok(Document { root, dialect, declared })
}

fn dialect(root: &Node) -> Result<(Dialect, String), ImportError> {
    if let Some(version) = root.get("openapi") {
        let Some(version) = version.as_str() else {
            return Err(ImportError::UnsupportedVersion(
                "`openapi` must be a string such as \"3.0.3\"".into(),
            ));
        };
        let dialect = if version.starts_with("3.0.") {
            Dialect::OpenApi30
        } else if version.starts_with("3.1.") {
            Dialect::OpenApi31
        } else {
            return Err(ImportError::UnsupportedVersion(format!("OpenAPI {version}")));
        };
        return Ok((dialect, version.to_owned()));
    }
    match root.get("swagger") {
        // `swagger: 2.0` unquoted in YAML reads as a number; accept it.
        Some(Node::String(v)) if v == "2.0" => Ok((Dialect::Swagger2, "2.0".into())),
        Some(Node::Number(n)) if n.as_f64() == Some(2.0) => Ok((Dialect::Swagger2, "2.0".into())),
        Some(other) => {
            Err(ImportError::UnsupportedVersion(format!("Swagger {}", scalar_text(other))))
        }
        None => {
            Err(ImportError::NotOpenApi("it has neither an `openapi` nor a `swagger` field".into()))
        }
    }
}

fn scalar_text(node: &Node) -> String {
    match node {
        Node::String(s) => s.clone(),
        Node::Number(n) => n.to_string(),
        Node::Bool(b) => b.to_string(),
        _ => "(not a version)".into(),
    }
}

fn parse_yaml(text: &str) -> Result<Node, ImportError> {
    match yaml::parse(text) {
        Ok(node) => Ok(from_yaml(&node)),
        Err(YamlError::TooDeep) => Err(ImportError::TooDeep(yaml::MAX_BLOCK_DEPTH)),
        Err(YamlError::Invalid { at, message }) => {
            Err(ImportError::Yaml(format!("line {} column {}: {message}", at.line, at.col)))
        }
    }
}

fn from_yaml(node: &marked_yaml::Node) -> Node {
    match node {
        marked_yaml::Node::Scalar(scalar) => match yaml::scalar_value(scalar) {
            serde_json::Value::Null => Node::Null,
            serde_json::Value::Bool(flag) => Node::Bool(flag),
            serde_json::Value::Number(number) => Node::Number(number),
            serde_json::Value::String(text) => Node::String(text),
            // A scalar is never a list or a mapping.
            _ => Node::Null,
        },
        marked_yaml::Node::Sequence(items) => Node::Array(items.iter().map(from_yaml).collect()),
        marked_yaml::Node::Mapping(map) => Node::Object(
            map.iter().map(|(key, value)| (key.as_str().to_owned(), from_yaml(value))).collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Result<Node, ImportError> {
        parse_yaml(text)
    }

    #[test]
    fn json_and_yaml_keep_the_key_order_of_the_document() {
        let json =
            parse(r#"{"openapi": "3.0.3", "paths": {"/z": {}, "/a": {}, "/m": {}}}"#).unwrap();
        let keys: Vec<_> = json.root.entries("paths").map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["/z", "/a", "/m"]);
        let yaml = parse("openapi: 3.1.0\npaths:\n  /z: {}\n  /a: {}\n  /m: {}\n").unwrap();
        let keys: Vec<_> = yaml.root.entries("paths").map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["/z", "/a", "/m"]);
        assert_eq!(yaml.dialect, Dialect::OpenApi31);
    }

    #[test]
    fn plain_yaml_scalars_are_typed_and_quoted_ones_stay_strings() {
        let node = yaml(
            "a: ~\nb:\nc: null\nd: true\ne: False\nf: 42\ng: -7\nh: 2.5\ni: 1e3\nj: 0x1F\nk: '42'\nl: \"true\"\nm: 1.0.0\nn: .inf\no: 12345678901234567890\np: abc\n",
        )
        .unwrap();
        let expected = serde_json::json!({
            "a": null, "b": null, "c": null, "d": true, "e": false, "f": 42, "g": -7, "h": 2.5, "i": 1000.0,
            "j": 31, "k": "42", "l": "true", "m": "1.0.0", "n": ".inf", "o": 12345678901234567890u64, "p": "abc"
        });
        for (key, value) in expected.as_object().unwrap() {
            let got = node.get(key).unwrap();
            let got = match got {
                Node::Null => serde_json::Value::Null,
                Node::Bool(b) => (*b).into(),
                Node::Number(n) => serde_json::Value::Number(n.clone()),
                Node::String(s) => s.clone().into(),
                other => panic!("{key}: {other:?}"),
            };
            assert_eq!(&got, value, "{key}");
        }
    }

    #[test]
    fn anchors_aliases_and_tags_are_refused_with_a_clear_message() {
        let bomb = "a: &a [x, x, x]\nb: &b [*a, *a, *a]\nc: [*b, *b, *b]\n";
        let error = yaml(bomb).unwrap_err().to_string();
        assert!(
            error.contains("anchors and aliases are not supported") && error.contains("line 1"),
            "{error}"
        );
        let error = yaml("a: *undefined\n").unwrap_err().to_string();
        assert!(error.contains("anchors and aliases are not supported"), "{error}");
        let error = yaml("a: !custom x\n").unwrap_err().to_string();
        assert!(error.contains("tags are not supported"), "{error}");
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        for text in [
            "{\"openapi\": ",
            "{\"openapi\": \"3.0.0\",}",
            "a: [b\n",
            "a: b\n a: c: d\n",
            "- a\n- b\n",
            "just text",
            "a: 1\na: 2\n",
        ] {
            assert!(parse(text).is_err(), "{text:?}");
        }
        assert!(matches!(parse("[1, 2]"), Err(ImportError::Yaml(_))));
        let error = parse("a: 1\na: 2\n").err().unwrap().to_string();
        assert!(error.contains("`a` appears twice"), "{error}");
    }

    #[test]
    fn deep_nesting_is_refused_before_it_can_overflow_the_stack() {
        let deep_json = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(parse(&format!("{{\"a\": {deep_json}}}")), Err(ImportError::Json(_))));
        let deep_sequence = format!("a:\n{}x\n", "- ".repeat(100_000));
        assert!(matches!(parse(&deep_sequence), Err(ImportError::TooDeep(_))));
        let mut deep_mapping = String::new();
        for level in 0..2_000 {
            deep_mapping.push_str(&format!("{}k:\n", " ".repeat(level)));
        }
        assert!(matches!(parse(&deep_mapping), Err(ImportError::TooDeep(_))));
        // A long line is not deep: only indentation and leading indicators count.
        let long_line =
            format!("openapi: 3.0.0\ninfo:\n  description: \"{}\"\n", "note: - ? ".repeat(10_000));
        assert!(parse(&long_line).is_ok());
    }

    proptest::proptest! {
        /// Whatever the text, parsing answers: a document or an error.
        #[test]
        fn any_text_parses_or_errs_without_panicking(text in "[-a-z0-9 :{}\\[\\],'\"&*!?|>#~.\n\t]{0,80}") {
            let _ = parse(&text);
            let _ = parse(&format!("openapi: 3.0.0\n{text}"));
        }
    }

    #[test]
    fn versions_are_detected_and_unsupported_ones_named() {
        assert_eq!(parse("{\"swagger\": \"2.0\"}").unwrap().dialect, Dialect::Swagger2);
        assert_eq!(parse("swagger: 2.0\n").unwrap().dialect, Dialect::Swagger2);
        assert_eq!(parse("openapi: 3.0.3\n").unwrap().to_string(), "OpenAPI 3.0.3");
        for (text, named) in [
            ("openapi: 2.0.0\n", "OpenAPI 2.0.0"),
            ("openapi: 3.2.0\n", "OpenAPI 3.2.0"),
            ("swagger: \"1.2\"\n", "Swagger 1.2"),
        ] {
            let error = parse(text).err().unwrap().to_string();
            assert!(error.contains(named), "{error}");
        }
        let error = parse("info: {title: x}\n").err().unwrap().to_string();
        assert!(error.contains("neither an `openapi` nor a `swagger`"), "{error}");
    }
}
