//! YAML for files users and tools write: parsed by `marked-yaml`, which
//! keeps every node's line and column and refuses anchors, aliases and
//! tags outright (so no alias bomb can expand), duplicate keys included.
//! Only plain scalars are typed (`30`, `true`, `null`); quoted ones stay
//! strings, as YAML 1.2's core schema says.

use marked_yaml::{LoadError, LoaderOptions, Node, Span};
use serde_json::{Map, Number, Value};

/// How deeply a value may nest before it is refused instead of converted.
pub const MAX_DEPTH: usize = 64;

/// A position in the YAML text, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: usize,
    pub col: usize,
}

pub fn position(span: &Span) -> Position {
    span.start().map_or(Position { line: 1, col: 1 }, |m| Position { line: m.line().max(1), col: m.column().max(1) })
}

/// Parses YAML whose top level must be a mapping.
pub fn parse(text: &str) -> Result<Node, (Position, String)> {
    let options = LoaderOptions::default().error_on_duplicate_keys(true).prevent_coercion(true);
    marked_yaml::parse_yaml_with_options(0, text, options).map_err(|error| describe(&error))
}

fn describe(error: &LoadError) -> (Position, String) {
    let at = |marker: &marked_yaml::Marker| Position { line: marker.line().max(1), col: marker.column().max(1) };
    match error {
        LoadError::TopLevelMustBeMapping(m) => (at(m), "the front matter must be a YAML mapping of keys to values".into()),
        LoadError::TopLevelMustBeSequence(m) => (at(m), "expected a YAML sequence".into()),
        LoadError::UnexpectedAnchor(m) => (at(m), "YAML anchors and aliases are not supported (write the value out)".into()),
        LoadError::MappingKeyMustBeScalar(m) => (at(m), "mapping keys must be plain strings".into()),
        LoadError::UnexpectedTag(m) => (at(m), "YAML tags (`!!str`, `!custom`) are not supported".into()),
        LoadError::ScanError(m, scan) => (at(m), format!("YAML syntax error: {}", scan.info())),
        LoadError::DuplicateKey(inner) => {
            let place = inner.prev_key.span().start().map_or_else(|| "earlier".to_owned(), |m| format!("at line {}", m.line()));
            (position(inner.key.span()), format!("duplicate key '{}' (first defined {place})", inner.key.as_str()))
        }
    }
}

/// A scalar's JSON value: plain scalars are typed by the core schema,
/// quoted and block scalars are strings.
pub fn scalar_value(scalar: &marked_yaml::types::MarkedScalarNode) -> Value {
    let text = scalar.as_str();
    if !scalar.may_coerce() {
        return Value::String(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        _ => {}
    }
    if let Some(flag) = scalar.as_bool() {
        return Value::Bool(flag);
    }
    if looks_numeric(text) {
        if let Ok(integer) = text.parse::<i64>() {
            return Value::from(integer);
        }
        if let Some(number) = text.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(number);
        }
    }
    Value::String(text.to_owned())
}

/// YAML 1.2 core-schema numbers (`-12`, `3.5`, `1e3`), not Rust's wider
/// set (`inf`, `NaN`, `+.5e`), so `nan` stays a string.
fn looks_numeric(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    digits.starts_with(|c: char| c.is_ascii_digit() || c == '.')
        && digits.chars().any(|c| c.is_ascii_digit())
        && digits.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '-' | '+'))
}

/// A node as JSON, refusing nesting deeper than [`MAX_DEPTH`].
pub fn to_json(node: &Node) -> Result<Value, Position> {
    to_json_at(node, 0)
}

fn to_json_at(node: &Node, depth: usize) -> Result<Value, Position> {
    if depth > MAX_DEPTH {
        return Err(position(node.span()));
    }
    Ok(match node {
        Node::Scalar(scalar) => scalar_value(scalar),
        Node::Sequence(items) => Value::Array(items.iter().map(|item| to_json_at(item, depth + 1)).collect::<Result<_, _>>()?),
        Node::Mapping(map) => {
            let mut object = Map::new();
            for (key, value) in map.iter() {
                object.insert(key.as_str().to_owned(), to_json_at(value, depth + 1)?);
            }
            Value::Object(object)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value_of(text: &str) -> Value {
        let node = parse(text).unwrap_or_else(|e| panic!("{e:?}"));
        to_json(&node).unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn plain_scalars_are_typed_quoted_ones_are_strings() {
        let value = value_of("a: 30\nb: '30'\nc: true\nd: \"true\"\ne: ~\nf: 2.5\ng: 1.0.0\nh: nan\ni:\nj: [1, x]\n");
        assert_eq!(value, json!({"a": 30, "b": "30", "c": true, "d": "true", "e": null, "f": 2.5, "g": "1.0.0", "h": "nan", "i": null, "j": [1, "x"]}));
    }

    #[test]
    fn anchors_tags_and_duplicate_keys_are_refused_with_positions() {
        let cases = [
            ("a: &x [1]\nb: *x\n", "anchors and aliases are not supported", 1),
            ("a: !!str 1\n", "tags", 1),
            ("a: 1\nb: 2\na: 3\n", "duplicate key 'a' (first defined at line 1)", 3),
            ("a: [1\n", "YAML syntax error", 2),
            ("- 1\n", "must be a YAML mapping", 1),
        ];
        for (text, expected, line) in cases {
            let (at, message) = parse(text).err().unwrap_or_else(|| panic!("{text:?} parsed"));
            assert!(message.contains(expected), "{text:?}: {message}");
            assert_eq!(at.line, line, "{text:?}: {message}");
        }
    }

    #[test]
    fn a_billion_laughs_cannot_expand() {
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
        assert!(parse(bomb).is_err());
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let deep = format!("a: {}{}\n", "[".repeat(MAX_DEPTH + 10), "]".repeat(MAX_DEPTH + 10));
        let node = parse(&deep).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(to_json(&node).is_err());
    }
}
