//! The adapter file's text: YAML front matter in a fixed shape, then a
//! short Markdown body.
//!
//! Strings are written as double-quoted scalars with JSON's escapes plus
//! escapes for what YAML may not carry raw (DEL, C1 controls, U+2028,
//! ...), so any JSON-compatible YAML reader reads them back exactly. Each
//! parameter is one flow mapping on one line, which keeps large adapters
//! small and quick to load. No anchors, no tags. Names that YAML would
//! read as something other than a string (`null`, `true`, `on`...) are
//! quoted.

use std::fmt::Write as _;

use super::{
    auth::Auth,
    document::{Document, Node},
    info::Header,
    names::env_prefix,
    operations::{Operation, Param},
};
use crate::{adapter::definition::KeyPlace, protocol::registry::Category};

/// The tool that generated an adapter, as its `trust.generated_by` says.
pub const GENERATED_BY: &str = "safety-dongle adapter import-openapi";

/// Length limits of descriptions, in characters.
const MAX_OPERATION_DESCRIPTION: usize = 300;
const MAX_PARAM_DESCRIPTION: usize = 200;

/// Everything the adapter file says.
pub struct Adapter<'a> {
    pub header: &'a Header,
    pub auth: Option<&'a Auth>,
    pub operations: &'a [Operation],
    /// The document's file name, for the Markdown body.
    pub source: &'a str,
    pub document: &'a Document,
}

/// `text` on one line (every run of whitespace one space), at most `max`
/// characters, ending in `...` when it was cut.
pub fn one_line(text: &str, max: usize) -> String {
    let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > max {
        let keep = line.char_indices().nth(max.saturating_sub(3)).map_or(line.len(), |(at, _)| at);
        line.truncate(keep);
        line.truncate(line.trim_end().len());
        line.push_str("...");
    }
    line
}

/// The whole adapter file.
pub fn adapter(adapter: &Adapter<'_>) -> String {
    let header = adapter.header;
    let mut out = String::with_capacity(256 + adapter.operations.len() * 512);
    out.push_str("---\n");
    let _ = writeln!(out, "name: {}", plain(&header.name));
    out.push_str("type: adapter\n");
    let _ = writeln!(out, "version: {}", quoted(&header.version));
    let _ = writeln!(out, "description: {}", quoted(&header.description));
    out.push_str("target:\n");
    let _ = writeln!(out, "  base_url: {}", quoted(&header.base_url));
    out.push_str("  transport: http\n  protocol: rest\n  serialization: json\n");
    let env = env_prefix(&header.name);
    if let Some(auth) = adapter.auth {
        out.push_str("auth:\n");
        match auth {
            Auth::Bearer => {
                let _ = writeln!(out, "  type: bearer\n  token_env: {env}_TOKEN");
            }
            Auth::Basic => {
                let _ = writeln!(
                    out,
                    "  type: basic\n  username_env: {env}_USERNAME\n  password_env: {env}_PASSWORD"
                );
            }
            Auth::ApiKey(place) => {
                out.push_str("  type: api_key\n");
                let _ = match place {
                    KeyPlace::Header(name) => writeln!(out, "  header_name: {}", quoted(name)),
                    KeyPlace::Query(name) => writeln!(out, "  query_param: {}", quoted(name)),
                };
                let _ = writeln!(out, "  key_env: {env}_API_KEY");
            }
        }
    }
    out.push_str("trust:\n  level: generated\n");
    let _ = writeln!(out, "  generated_by: {}", quoted(GENERATED_BY));
    out.push_str("operations:\n");
    for category in Category::ALL {
        let mut in_category =
            adapter.operations.iter().filter(|op| op.category == category).peekable();
        if in_category.peek().is_none() {
            continue;
        }
        let _ = writeln!(out, "  {}:", category.family());
        for operation in in_category {
            write_operation(&mut out, operation);
        }
    }
    out.push_str("---\n\n");
    write_body(&mut out, adapter, &env);
    out
}

fn write_operation(out: &mut String, operation: &Operation) {
    let _ = writeln!(out, "    - name: {}", plain(&operation.name));
    let _ = writeln!(out, "      maps_to: {}", quoted(&operation.maps_to));
    let _ = writeln!(
        out,
        "      description: {}",
        quoted(&one_line(&operation.description, MAX_OPERATION_DESCRIPTION))
    );
    if let Some(schema) = &operation.response_schema {
        // JSON is YAML's flow style: one line, read back as written.
        let _ = writeln!(out, "      response: {{schema: {schema}}}");
    }
    if operation.params.is_empty() {
        return;
    }
    out.push_str("      params:\n");
    for param in &operation.params {
        let _ = writeln!(out, "        {}: {}", plain(&param.name), param_line(param));
    }
}

/// `{type: ..., required: true, in: ..., wire_name: ..., default: ...,
/// enum: [...], description: ...}`, leaving out what does not apply.
pub(super) fn param_line(param: &Param) -> String {
    let mut line = format!("{{type: {}", param.ty.name());
    if param.required {
        line.push_str(", required: true");
    }
    let _ = write!(line, ", in: {}", param.location.name());
    if let Some(wire_name) = &param.wire_name {
        let _ = write!(line, ", wire_name: {}", quoted(wire_name));
    }
    if let Some(default) = &param.default {
        line.push_str(", default: ");
        write_value(&mut line, default);
    }
    if let Some(values) = &param.enum_values {
        line.push_str(", enum: ");
        write_value(&mut line, &Node::Array(values.clone()));
    }
    if let Some(description) = &param.description {
        let description = one_line(description, MAX_PARAM_DESCRIPTION);
        if !description.is_empty() {
            let _ = write!(line, ", description: {}", quoted(&description));
        }
    }
    line.push('}');
    line
}

fn write_body(out: &mut String, adapter: &Adapter<'_>, env: &str) {
    let header = adapter.header;
    let count =
        |category: Category| adapter.operations.iter().filter(|op| op.category == category).count();
    let _ = writeln!(out, "# {}\n", header.title);
    let _ = writeln!(
        out,
        "Generated by `{GENERATED_BY}` from `{}` ({}): {} operations ({} create, {} read, {} update, {} delete) against {}.\n",
        adapter.source.replace('`', "'"),
        adapter.document,
        adapter.operations.len(),
        count(Category::Create),
        count(Category::Read),
        count(Category::Update),
        count(Category::Delete),
        header.base_url,
    );
    let credentials = match adapter.auth {
        None => "The document declares no authentication the adapter supports, so calls go out without credentials.".to_owned(),
        Some(Auth::Bearer) => format!("Calls carry a bearer token read from the environment variable `{env}_TOKEN`."),
        Some(Auth::Basic) => format!("Calls carry HTTP basic credentials read from the environment variables `{env}_USERNAME` and `{env}_PASSWORD`."),
        Some(Auth::ApiKey(_)) => format!("Calls carry an API key read from the environment variable `{env}_API_KEY`."),
    };
    let _ = writeln!(
        out,
        "{credentials} Credentials never appear in this file or in an operation's parameters.\n"
    );
    out.push_str("Trust level `generated`: until a human reviews this file and promotes it, only read operations pass the trust matrix.\n");
}

/// A name written bare (`^[a-z][a-z0-9_-]*$` needs no quoting) unless a
/// YAML reader would take it for null or a boolean.
fn plain(name: &str) -> String {
    const AMBIGUOUS: [&str; 9] = ["null", "true", "false", "yes", "no", "on", "off", "y", "n"];
    if AMBIGUOUS.contains(&name) { quoted(name) } else { name.to_owned() }
}

/// A YAML double-quoted scalar that is also a JSON string.
fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Not printable in YAML, or a line break to YAML 1.1 readers.
            '\u{0}'..='\u{1f}'
            | '\u{7f}'..='\u{9f}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{feff}'
            | '\u{fffe}'
            | '\u{ffff}' => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value as JSON-style flow YAML.
fn write_value(out: &mut String, value: &Node) {
    match value {
        Node::Null => out.push_str("null"),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Number(n) => out.push_str(&n.to_string()),
        Node::String(s) => out.push_str(&quoted(s)),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Node::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&quoted(key));
                out.push_str(": ");
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_strings_read_back_as_json_and_as_yaml() {
        let nasty = "a \"quote\" \\ back\nnew\ttab \u{7f}\u{85}\u{2028} é 😀 {x}: - # &a *b";
        let written = quoted(nasty);
        assert_eq!(serde_json::from_str::<String>(&written).unwrap(), nasty);
        assert!(
            !written.contains('\u{85}')
                && !written.contains('\u{2028}')
                && !written.contains('\u{7f}'),
            "{written}"
        );
        let yaml = marked_yaml::parse_yaml(0, format!("k: {written}\n")).unwrap();
        assert_eq!(yaml.as_mapping().unwrap().get_scalar("k").unwrap().as_str(), nasty);
    }

    #[test]
    fn names_yaml_would_misread_are_quoted() {
        assert_eq!(plain("repos_get"), "repos_get");
        assert_eq!(plain("null"), "\"null\"");
        assert_eq!(plain("on"), "\"on\"");
    }

    #[test]
    fn one_line_collapses_and_caps() {
        assert_eq!(one_line("  a\n\n b\t c  ", 100), "a b c");
        let capped = one_line(&"é".repeat(50), 10);
        assert_eq!(capped, format!("{}...", "é".repeat(7)));
        assert_eq!(one_line("abc", 3), "abc");
    }

    #[test]
    fn values_are_flow_json() {
        let value: Node =
            serde_json::from_str(r#"{"b": [1, 2.5, true, null, "x\ny"], "a": {}}"#).unwrap();
        let mut out = String::new();
        write_value(&mut out, &value);
        assert_eq!(out, r#"{"b": [1, 2.5, true, null, "x\ny"], "a": {}}"#);
    }
}
