//! Loading a TOML document into typed settings while collecting every error
//! with its location, not just the first.
//!
//! Syntax errors come from the parser's recovering mode. Type and key
//! errors come from serde one at a time, so after each one the entry that
//! caused it is pruned from the document and deserialisation is tried
//! again, until it succeeds or nothing more can be pruned. The typed value
//! is returned only when there were no errors at all.

use std::ops::Range;

use serde::de::DeserializeOwned;
use toml::{
    Spanned,
    de::{DeArray, DeTable, DeValue, ValueDeserializer},
};

use super::{Diagnostic, SourceFile};

/// Deserialises `source` into `T`, or returns every error found.
pub fn load<T: DeserializeOwned>(source: &SourceFile) -> Result<T, Vec<Diagnostic>> {
    match load_partial(source) {
        (Some(value), errors) if errors.is_empty() => Ok(value),
        (_, errors) => Err(errors),
    }
}

/// Every error found, and the value deserialised from what remained after
/// pruning the entries in error (if anything could be), so callers can run
/// their own checks on the rest and report those errors too.
pub fn load_partial<T: DeserializeOwned>(source: &SourceFile) -> (Option<T>, Vec<Diagnostic>) {
    let (root, syntax_errors) = DeTable::parse_recoverable(&source.text);
    if !syntax_errors.is_empty() {
        let errors = syntax_errors
            .iter()
            .map(|e| source.at(e.span().unwrap_or(0..0), e.message()))
            .collect();
        return (None, sorted(errors));
    }
    let span = root.span();
    let mut document = DeValue::Table(root.into_inner());
    let mut errors = Vec::new();
    // Spans of the tables an entry was pruned from: a later "missing field"
    // there is a consequence of the pruning, not an error of its own.
    let mut pruned_from: Vec<Range<usize>> = Vec::new();
    loop {
        let attempt = Spanned::new(span.clone(), document.clone());
        match T::deserialize(ValueDeserializer::from(attempt)) {
            Ok(value) => return (Some(value), sorted(errors)),
            Err(e) => {
                let at = e.span().unwrap_or(0..0);
                let cascade = e.message().starts_with("missing field")
                    && pruned_from.iter().any(|span| contains(span, at.start));
                if !cascade {
                    errors.push(source.at(at.clone(), e.message()));
                }
                // Without a span nothing can be pruned safely: stop here.
                match e.span().and_then(|_| prune(&mut document, span.clone(), at.start)) {
                    Some(container) => pruned_from.push(container),
                    None => return (None, sorted(errors)),
                }
            }
        }
    }
}

fn sorted(mut errors: Vec<Diagnostic>) -> Vec<Diagnostic> {
    errors.sort_by_key(|d| (d.line, d.col));
    errors
}

fn contains(span: &Range<usize>, at: usize) -> bool {
    span.start <= at && at < span.end.max(span.start + 1)
}

/// Removes the innermost entry or array element at byte `at`, returning
/// the span of the container it was removed from.
fn prune(value: &mut DeValue<'_>, span: Range<usize>, at: usize) -> Option<Range<usize>> {
    match value {
        DeValue::Table(table) => prune_table(table, span, at),
        DeValue::Array(array) => prune_array(array, span, at),
        _ => None,
    }
}

// Children are searched whatever their span: the span of a `[table]` or
// `[[array]]` section covers only its header, not its body.
fn prune_table(table: &mut DeTable<'_>, span: Range<usize>, at: usize) -> Option<Range<usize>> {
    for (_, child) in table.iter_mut() {
        let child_span = child.span();
        if let Some(container) = prune(child.get_mut(), child_span, at) {
            return Some(container);
        }
    }
    let culprit = table
        .iter()
        .find(|(key, child)| contains(&key.span(), at) || contains(&child.span(), at))
        .map(|(key, _)| key.get_ref().to_string())?;
    table.remove(culprit.as_str()).map(|_| span)
}

fn prune_array(array: &mut DeArray<'_>, span: Range<usize>, at: usize) -> Option<Range<usize>> {
    for child in array.iter_mut() {
        let child_span = child.span();
        if let Some(container) = prune(child.get_mut(), child_span, at) {
            return Some(container);
        }
    }
    let mut kept = DeArray::new();
    let mut removed = false;
    for child in array.iter() {
        if contains(&child.span(), at) {
            removed = true;
        } else {
            kept.push(child.clone());
        }
    }
    *array = kept;
    removed.then_some(span)
}
#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Settings {
        name: Option<String>,
        count: Option<u32>,
        #[serde(default)]
        items: Vec<Item>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Item {
        size: u32,
    }

    fn load_text(text: &str) -> Result<Settings, Vec<Diagnostic>> {
        load(&SourceFile::new("s.toml", text))
    }

    #[test]
    fn every_key_error_is_reported_with_its_location() {
        let errors =
            load_text("name = 3\ncolour = \"red\"\ncount = \"many\"\n[[items]]\nsize = -1\n")
                .expect_err("four errors");
        let lines: Vec<usize> = errors.iter().map(|d| d.line).collect();
        assert_eq!(errors.len(), 4, "{errors:#?}");
        for line in [1, 2, 3, 5] {
            assert!(lines.contains(&line), "no error on line {line}: {errors:#?}");
        }
        assert!(errors.iter().any(|d| d.message.contains("colour")));
    }

    #[test]
    fn syntax_errors_are_all_reported() {
        let errors = load_text("name = \ncount = = 2\n").expect_err("syntax errors");
        let lines: Vec<usize> = errors.iter().map(|d| d.line).collect();
        assert!(lines.contains(&1) && lines.contains(&2), "{errors:#?}");
        assert!(lines.is_sorted());
    }

    #[test]
    fn a_valid_document_loads() {
        let settings = load_text("name = \"x\"\n[[items]]\nsize = 2\n").expect("valid");
        assert_eq!(settings.items.len(), 1);
    }
}
