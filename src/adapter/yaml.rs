//! YAML for files users and tools write (adapter files, OpenAPI
//! documents): parsed by `marked-yaml`, which keeps every node's line and
//! column and refuses anchors, aliases and tags outright (so no alias bomb
//! can expand), duplicate keys included. Text nested deeper than the
//! parser's stack can take is refused before parsing. Only plain scalars
//! are typed (`30`, `true`, `null`); quoted ones stay strings, as YAML
//! 1.2's core schema says.

use marked_yaml::{LoadError, LoaderOptions, Node, Span, types::MarkedScalarNode};
use serde_json::{Map, Number, Value};

/// How deeply a value may nest before it is refused instead of converted.
pub const MAX_DEPTH: usize = 64;
/// The block nesting a text may reach before it is refused unparsed: the
/// parser recurses per level and overflowed the stack near 3,500.
pub const MAX_BLOCK_DEPTH: usize = 512;

/// A position in the YAML text, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: usize,
    pub col: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum YamlError {
    /// Nested deeper than [`MAX_BLOCK_DEPTH`]; not parsed.
    TooDeep,
    /// Not YAML this loader accepts, and where.
    Invalid { at: Position, message: String },
}

pub fn position(span: &Span) -> Position {
    span.start().map_or(Position { line: 1, col: 1 }, |m| Position {
        line: m.line().max(1),
        col: m.column().max(1),
    })
}

/// Parses YAML whose top level must be a mapping.
pub fn parse(text: &str) -> Result<Node, YamlError> {
    if block_depth_bound(text) > MAX_BLOCK_DEPTH {
        return Err(YamlError::TooDeep);
    }
    let options = LoaderOptions::default().error_on_duplicate_keys(true).prevent_coercion(true);
    marked_yaml::parse_yaml_with_options(0, text, options).map_err(|error| {
        let (at, message) = describe(&error);
        YamlError::Invalid { at, message }
    })
}

/// An upper bound on the block nesting of a YAML text. A block collection
/// nested in another starts at a greater column, or at the same one for a
/// sequence that is a mapping's value (so at most two levels per column),
/// and a collection can only start after a line's indentation and its
/// leading `- `, `? `, `: ` indicators. Flow collections add at most 255
/// levels: the scanner refuses more.
fn block_depth_bound(text: &str) -> usize {
    let mut deepest = 0;
    for line in text.lines() {
        let bytes = line.as_bytes();
        let mut column = bytes.iter().take_while(|b| **b == b' ').count();
        while matches!(bytes.get(column..column + 2), Some([b'-' | b'?' | b':', b' ' | b'\t'])) {
            column += 1;
            column += bytes
                .get(column..)
                .unwrap_or_default()
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count();
        }
        deepest = deepest.max(2 * (column + 1));
    }
    deepest
}

fn describe(error: &LoadError) -> (Position, String) {
    let at = |marker: &marked_yaml::Marker| Position {
        line: marker.line().max(1),
        col: marker.column().max(1),
    };
    match error {
        LoadError::TopLevelMustBeMapping(m) | LoadError::TopLevelMustBeSequence(m) => {
            (at(m), "the top level must be a YAML mapping of keys to values".into())
        }
        LoadError::UnexpectedAnchor(m) => {
            (at(m), "YAML anchors and aliases are not supported (write the values out)".into())
        }
        LoadError::MappingKeyMustBeScalar(m) => {
            (at(m), "mapping keys must be plain strings".into())
        }
        LoadError::UnexpectedTag(m) => {
            (at(m), "YAML tags are not supported (`!!str`, `!custom`)".into())
        }
        LoadError::ScanError(m, scan) => {
            // An alias only gets this far when its anchor was never defined.
            let hint = if scan.info().contains("anchor") {
                " (YAML anchors and aliases are not supported)"
            } else {
                ""
            };
            (at(m), format!("YAML syntax error: {}{hint}", scan.info()))
        }
        LoadError::DuplicateKey(inner) => {
            let first = inner
                .prev_key
                .span()
                .start()
                .map_or_else(|| "earlier".to_owned(), |m| format!("at line {}", m.line()));
            (
                position(inner.key.span()),
                format!(
                    "the key `{}` appears twice in one mapping (first {first})",
                    inner.key.as_str()
                ),
            )
        }
    }
}

/// A scalar's JSON value: plain scalars typed by the core schema (null,
/// booleans, integers including `0x` and `0o`, floats JSON can hold),
/// everything else a string.
pub fn scalar_value(scalar: &MarkedScalarNode) -> Value {
    let text = scalar.as_str();
    if !scalar.may_coerce() {
        return Value::String(text.to_owned());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        _ => number(text).map_or_else(|| Value::String(text.to_owned()), Value::Number),
    }
}

fn number(text: &str) -> Option<Number> {
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok().map(Into::into);
    }
    if let Some(octal) = text.strip_prefix("0o") {
        return i64::from_str_radix(octal, 8).ok().map(Into::into);
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit()) {
        let digits = text.strip_prefix('+').unwrap_or(text);
        if let Ok(n) = digits.parse::<i64>() {
            return Some(n.into());
        }
        if let Ok(n) = digits.parse::<u64>() {
            return Some(n.into());
        }
    }
    // Rust's float syntax is wider than YAML's (`inf`, `NaN`): only digits,
    // a point, an exponent and signs may appear.
    let float_chars = unsigned
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if float_chars && unsigned.bytes().any(|b| b.is_ascii_digit()) {
        return text.parse::<f64>().ok().and_then(Number::from_f64);
    }
    None
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
        Node::Sequence(items) => Value::Array(
            items.iter().map(|item| to_json_at(item, depth + 1)).collect::<Result<_, _>>()?,
        ),
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
        let value = value_of(
            "a: 30\nb: '30'\nc: true\nd: \"true\"\ne: ~\nf: 2.5\ng: 1.0.0\nh: nan\ni:\nj: [1, x]\nk: 0x1F\nl: .inf\nm: 12345678901234567890\nn: 1e3\n",
        );
        assert_eq!(
            value,
            json!({"a": 30, "b": "30", "c": true, "d": "true", "e": null, "f": 2.5, "g": "1.0.0", "h": "nan", "i": null, "j": [1, "x"], "k": 31, "l": ".inf", "m": 12345678901234567890u64, "n": 1000.0})
        );
    }

    #[test]
    fn anchors_tags_and_duplicate_keys_are_refused_with_positions() {
        let cases = [
            ("a: &x [1]\nb: *x\n", "anchors and aliases are not supported", 1),
            ("a: !!str 1\n", "tags are not supported", 1),
            ("a: 1\nb: 2\na: 3\n", "the key `a` appears twice in one mapping (first at line 1)", 3),
            ("a: [1\n", "YAML syntax error", 2),
            ("- 1\n", "must be a YAML mapping", 1),
            ("a: *undefined\n", "anchors and aliases are not supported", 1),
        ];
        for (text, expected, line) in cases {
            let Some(YamlError::Invalid { at, message }) = parse(text).err() else {
                panic!("{text:?} parsed")
            };
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
    fn deep_block_nesting_is_refused_before_parsing() {
        let deep_sequence = format!("a:\n{}x\n", "- ".repeat(100_000));
        assert_eq!(parse(&deep_sequence).err(), Some(YamlError::TooDeep));
        let deep_mapping: String =
            (0..2_000).map(|level| format!("{}k:\n", " ".repeat(level))).collect();
        assert_eq!(parse(&deep_mapping).err(), Some(YamlError::TooDeep));
        // A long line is not deep: only indentation and leading indicators count.
        let long_line = format!("a: \"{}\"\n", "note: - ? ".repeat(10_000));
        assert!(parse(&long_line).is_ok());
    }

    #[test]
    fn deep_nesting_is_refused_not_recursed() {
        let deep = format!("a: {}{}\n", "[".repeat(MAX_DEPTH + 10), "]".repeat(MAX_DEPTH + 10));
        let node = parse(&deep).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(to_json(&node).is_err());
    }
}
