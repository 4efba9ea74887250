//! Local `$ref` resolution, lazily and only as deep as a caller asks.
//!
//! A reference is a JSON pointer into the same document (`#/components/
//! schemas/Repo`, `#/definitions/Pet`, with `~1` for `/`, `~0` for `~` and
//! percent-escapes); one pointing at another file or URL is an error, as is
//! one pointing at nothing. Every derivation that follows references
//! carries a [`Walk`]: the chain of references being followed, so a
//! reference already on it (a recursive schema) stops there instead of
//! looping, and a budget of steps, so a document whose references fan out
//! exponentially cannot hang the import.

use std::fmt;

use super::{ImportError, document::Node};

/// Steps one derivation (one parameter's type, one request body's
/// properties) may take. Real documents need a few dozen.
const STEP_BUDGET: u32 = 10_000;

/// How deeply derivations may nest (`allOf` in `allOf`, through
/// references): keeps the recursion far from the stack's end.
const MAX_DEPTH: u32 = 64;

/// Why a reference could not be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefProblem {
    /// Another file or a URL: only `#/...` pointers are followed.
    NotLocal,
    /// The pointer leads nowhere in this document.
    NotFound,
    /// `$ref` is not a string, or not a JSON pointer.
    Malformed,
    /// Following it leads back to it without ever reaching a value.
    Circular,
}

impl fmt::Display for RefProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefProblem::NotLocal => "points outside this document; only local references (#/...) are supported, so bundle the document into one file first",
            RefProblem::NotFound => "points at nothing in this document",
            RefProblem::Malformed => "is not a JSON pointer (#/...)",
            RefProblem::Circular => "leads back to itself without reaching a value",
        })
    }
}

/// The document references resolve against.
#[derive(Clone, Copy)]
pub struct Refs<'d> {
    root: &'d Node,
}

/// The state of one derivation: see the module documentation.
pub struct Walk<'d> {
    chain: Vec<&'d str>,
    steps_left: u32,
    depth: u32,
    /// Set once the budget ran out: the derivation's answer is partial.
    pub exhausted: bool,
}

impl Default for Walk<'_> {
    fn default() -> Self {
        Self { chain: Vec::new(), steps_left: STEP_BUDGET, depth: 0, exhausted: false }
    }
}

impl<'d> Refs<'d> {
    pub fn new(root: &'d Node) -> Self {
        Self { root }
    }

    /// `node`, or what its `$ref` (and the target's, and so on) points at.
    /// For a lookup that keeps nothing on the chain: a parameter, request
    /// body or security scheme that is itself a reference.
    pub fn resolve(&self, node: &'d Node) -> Result<&'d Node, ImportError> {
        let mut walk = Walk::default();
        self.follow(node, &mut walk, |target, _| Ok(target))?.ok_or_else(|| ImportError::Ref {
            reference: node.str_at("$ref").unwrap_or_default().to_owned(),
            problem: RefProblem::Circular,
        })
    }

    /// Calls `derive` with `node`, or with the end of its chain of
    /// references, those references held on the walk's chain meanwhile.
    /// `None` when a reference is already on the chain (a cycle), or the
    /// budget is spent or the nesting too deep.
    pub fn follow<T>(
        &self,
        mut node: &'d Node,
        walk: &mut Walk<'d>,
        derive: impl FnOnce(&'d Node, &mut Walk<'d>) -> Result<T, ImportError>,
    ) -> Result<Option<T>, ImportError> {
        if walk.depth >= MAX_DEPTH {
            walk.exhausted = true;
            return Ok(None);
        }
        walk.depth += 1;
        let chain_len = walk.chain.len();
        let result = loop {
            if walk.steps_left == 0 {
                walk.exhausted = true;
                break Ok(None);
            }
            walk.steps_left -= 1;
            let Some(reference) = node.get("$ref") else {
                break derive(node, walk).map(Some);
            };
            let Some(reference) = reference.as_str() else {
                break Err(ImportError::Ref {
                    reference: "(not a string)".into(),
                    problem: RefProblem::Malformed,
                });
            };
            if walk.chain.contains(&reference) {
                break Ok(None);
            }
            match self.target(reference) {
                Ok(target) => {
                    walk.chain.push(reference);
                    node = target;
                }
                Err(error) => break Err(error),
            }
        };
        walk.chain.truncate(chain_len);
        walk.depth -= 1;
        result
    }

    /// What a local reference points at.
    pub fn target(&self, reference: &str) -> Result<&'d Node, ImportError> {
        let error = |problem| ImportError::Ref { reference: reference.to_owned(), problem };
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(error(RefProblem::NotLocal));
        };
        let pointer = percent_decode(fragment).ok_or_else(|| error(RefProblem::Malformed))?;
        if pointer.is_empty() {
            return Ok(self.root);
        }
        let Some(pointer) = pointer.strip_prefix('/') else {
            return Err(error(RefProblem::Malformed));
        };
        let mut node = self.root;
        for token in pointer.split('/') {
            let token = unescape(token).ok_or_else(|| error(RefProblem::Malformed))?;
            node = match node {
                Node::Object(map) => map.get(token.as_str()),
                Node::Array(items) => array_index(&token).and_then(|i| items.get(i)),
                _ => None,
            }
            .ok_or_else(|| error(RefProblem::NotFound))?;
        }
        Ok(node)
    }
}

/// A JSON-pointer reference token with `~1` -> `/` and `~0` -> `~`; `None`
/// for any other `~` sequence.
fn unescape(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

/// A URI fragment with its `%XX` escapes decoded; `None` when an escape is
/// broken or the result is not UTF-8.
fn percent_decode(fragment: &str) -> Option<String> {
    if !fragment.contains('%') {
        return Some(fragment.to_owned());
    }
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// An array index token: decimal, no leading zeros.
fn array_index(token: &str) -> Option<usize> {
    let well_formed = token == "0"
        || (!token.starts_with('0')
            && !token.is_empty()
            && token.bytes().all(|b| b.is_ascii_digit()));
    if well_formed { token.parse().ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::openapi::document::parse;

    fn document() -> Node {
        parse(
            r##"{"openapi": "3.0.3",
                "paths": {"/users/{id}": {"get": {"operationId": "getUser"}}},
                "components": {"schemas": {
                    "a~b": {"type": "string"}, "Alias": {"$ref": "#/components/schemas/Alias2"},
                    "Alias2": {"type": "integer"}, "Loop": {"$ref": "#/components/schemas/Loop"},
                    "Pair": {"type": "array", "items": [{"type": "boolean"}]}}}}"##,
        )
        .unwrap()
        .root
    }

    #[test]
    fn pointers_follow_escapes_and_indices() {
        let root = document();
        let refs = Refs::new(&root);
        let get = refs.target("#/paths/~1users~1{id}/get").unwrap();
        assert_eq!(get.str_at("operationId"), Some("getUser"));
        assert_eq!(
            refs.target("#/paths/~1users~1%7Bid%7D/get").unwrap(),
            get,
            "percent-escapes decode"
        );
        assert_eq!(
            refs.target("#/components/schemas/a~0b").unwrap().str_at("type"),
            Some("string")
        );
        assert_eq!(
            refs.target("#/components/schemas/Pair/items/0").unwrap().str_at("type"),
            Some("boolean")
        );
        assert_eq!(refs.target("#").unwrap(), &root);
    }

    #[test]
    fn bad_references_are_errors_that_say_why() {
        let root = document();
        let refs = Refs::new(&root);
        let problem = |reference: &str| match refs.target(reference) {
            Err(ImportError::Ref { problem, .. }) => problem,
            other => panic!("{reference}: {:?}", other.map(|_| ())),
        };
        assert_eq!(problem("other.yaml#/components/schemas/Pet"), RefProblem::NotLocal);
        assert_eq!(problem("https://example.com/schemas.json#/Pet"), RefProblem::NotLocal);
        assert_eq!(problem("#/components/schemas/Missing"), RefProblem::NotFound);
        assert_eq!(problem("#/components/schemas/Pair/items/01"), RefProblem::NotFound);
        assert_eq!(problem("#/components/schemas/a~2b"), RefProblem::Malformed);
        assert_eq!(problem("#components"), RefProblem::Malformed);
        let message = refs.target("other.yaml#/Pet").err().unwrap().to_string();
        assert!(
            message.contains("other.yaml#/Pet") && message.contains("only local references"),
            "{message}"
        );
    }

    #[test]
    fn chains_of_references_resolve_and_cycles_stop() {
        let root = document();
        let refs = Refs::new(&root);
        let alias = refs.target("#/components/schemas/Alias").unwrap();
        assert_eq!(refs.resolve(alias).unwrap().str_at("type"), Some("integer"));
        let looping = refs.target("#/components/schemas/Loop").unwrap();
        let mut walk = Walk::default();
        assert_eq!(
            refs.follow(looping, &mut walk, |_, _| Ok(())).unwrap(),
            None,
            "a self-reference is a cycle"
        );
        assert!(!walk.exhausted && walk.chain.is_empty(), "the chain unwinds");
        assert!(matches!(
            refs.resolve(looping),
            Err(ImportError::Ref { problem: RefProblem::Circular, .. })
        ));
    }

    #[test]
    fn an_exhausted_budget_or_deep_nesting_ends_the_walk() {
        let root = document();
        let refs = Refs::new(&root);
        let alias = refs.target("#/components/schemas/Alias").unwrap();
        let mut walk = Walk { steps_left: 1, ..Walk::default() };
        assert_eq!(refs.follow(alias, &mut walk, |_, _| Ok(())).unwrap(), None);
        assert!(walk.exhausted);
        fn nest<'d>(
            refs: &Refs<'d>,
            node: &'d Node,
            walk: &mut Walk<'d>,
        ) -> Result<u32, ImportError> {
            Ok(refs
                .follow(node, walk, |node, walk| nest(refs, node, walk))?
                .map_or(0, |levels| levels + 1))
        }
        let mut walk = Walk::default();
        assert_eq!(nest(&refs, &root, &mut walk).unwrap(), MAX_DEPTH);
        assert!(walk.exhausted && walk.depth == 0);
    }
}
