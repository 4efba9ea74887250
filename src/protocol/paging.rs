//! Cursor pagination (`features/pagination.md`) over a list ordered by
//! name: `first`/`after` forward, `last`/`before` backward, a default page
//! when neither size is given, and `pageInfo` saying where the page sits.
//!
//! A cursor is the name of an item (the listing order is by name), so it
//! stays meaningful when items are added or removed between pages: `after`
//! means "names after this one", whether or not it still exists. A size
//! over the maximum is clamped to it, not refused (5.3); a size under 1
//! asks for nothing and is refused. The combinations the spec forbids are
//! refused with its `VALIDATION_INVALID_TYPE` shape.

use serde_json::{Value, json};

use super::{
    error::{AqlError, ErrorCode},
    params::{ParamSpec, ParamType},
    request::Params,
};

/// Items on a page when the request names no size.
pub const DEFAULT_PAGE_SIZE: usize = 20;
/// The most items one page may hold.
pub const MAX_PAGE_SIZE: usize = 100;

/// Which part of the list a request wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageRequest {
    /// Up to `size` items after `after` (from the start without it).
    Forward { size: usize, after: Option<String> },
    /// Up to `size` items before `before` (from the end without it).
    Backward { size: usize, before: Option<String> },
}

/// The parameters a paged operation accepts.
pub fn page_params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::optional(
            "first",
            ParamType::Integer,
            &format!(
                "Page forward: at most this many items (at least 1; more than {MAX_PAGE_SIZE} is clamped to {MAX_PAGE_SIZE}; {DEFAULT_PAGE_SIZE} when no size is given)"
            ),
        ),
        ParamSpec::optional(
            "after",
            ParamType::String,
            "Cursor: the items after this one (a page's pageInfo.endCursor); use with first",
        ),
        ParamSpec::optional(
            "last",
            ParamType::Integer,
            &format!(
                "Page backward: at most this many items from the end (at least 1; more than {MAX_PAGE_SIZE} is clamped to {MAX_PAGE_SIZE})"
            ),
        ),
        ParamSpec::optional(
            "before",
            ParamType::String,
            "Cursor: the items before this one (a page's pageInfo.startCursor); use with last",
        ),
    ]
}

/// Whether any paging parameter was given.
pub fn asks_for_a_page(params: &Params) -> bool {
    ["first", "after", "last", "before"].iter().any(|name| params.get(name).is_some())
}

impl PageRequest {
    /// Reads the paging parameters of `operation`.
    pub fn from_params(operation: &str, params: &Params) -> Result<Self, AqlError> {
        let size = |name: &str| -> Result<Option<usize>, AqlError> {
            let Some(value) = params.get(name) else { return Ok(None) };
            match value.as_f64() {
                Some(n) if n >= 1.0 => {
                    Ok(Some(if n >= MAX_PAGE_SIZE as f64 { MAX_PAGE_SIZE } else { n as usize }))
                }
                _ => Err(AqlError::bad_value(
                    operation,
                    name,
                    &format!(
                        "must be at least 1 (sizes over {MAX_PAGE_SIZE} are clamped to {MAX_PAGE_SIZE})"
                    ),
                )),
            }
        };
        let (first, last) = (size("first")?, size("last")?);
        let (after, before) =
            (params.str("after").map(str::to_owned), params.str("before").map(str::to_owned));
        let conflict = match (&first, &last, &after, &before) {
            (Some(_), Some(_), _, _) => Some((
                ["first", "last"],
                "Cannot use 'first' and 'last' together",
                "Use 'first' for forward pagination or 'last' for backward pagination",
            )),
            (Some(_), None, _, Some(_)) => Some((
                ["first", "before"],
                "Cannot use 'first' with 'before'",
                "Use 'first' with 'after', or 'last' with 'before'",
            )),
            (None, Some(_), Some(_), _) => Some((
                ["last", "after"],
                "Cannot use 'last' with 'after'",
                "Use 'first' with 'after', or 'last' with 'before'",
            )),
            (None, None, Some(_), _) => Some((
                ["after", "first"],
                "'after' needs 'first' (the page size)",
                "Add 'first', e.g. first: 20",
            )),
            (None, None, None, Some(_)) => Some((
                ["before", "last"],
                "'before' needs 'last' (the page size)",
                "Add 'last', e.g. last: 20",
            )),
            _ => None,
        };
        if let Some((provided, message, hint)) = conflict {
            let details = json!({ "param_name": "pagination", "expected_type": "valid pagination combination", "actual_type": "conflicting parameters", "provided": provided, "hint": hint, "operation": operation });
            return Err(AqlError::new(ErrorCode::ValidationInvalidType, message, details));
        }
        Ok(match (first, last) {
            (_, Some(size)) => Self::Backward { size, before },
            (first, None) => Self::Forward { size: first.unwrap_or(DEFAULT_PAGE_SIZE), after },
        })
    }

    /// The page of `items` (ordered by `name`) this request wants, and its
    /// `pageInfo`.
    #[expect(
        clippy::indexing_slicing,
        reason = "info is a JSON object built here: indexing it inserts a key"
    )]
    pub fn page<T>(&self, items: Vec<T>, name: impl Fn(&T) -> &str) -> (Vec<T>, Value) {
        let total = items.len();
        let (start, end) = match self {
            Self::Forward { size, after } => {
                let start = after
                    .as_deref()
                    .map_or(0, |cursor| items.partition_point(|item| name(item) <= cursor));
                (start, (start + size).min(total))
            }
            Self::Backward { size, before } => {
                let end = before
                    .as_deref()
                    .map_or(total, |cursor| items.partition_point(|item| name(item) < cursor));
                (end.saturating_sub(*size), end)
            }
        };
        let page: Vec<T> = items.into_iter().skip(start).take(end - start).collect();
        let mut info = json!({ "hasNextPage": end < total, "hasPreviousPage": start > 0, "totalCount": total });
        if let (Some(first), Some(last)) = (page.first(), page.last()) {
            info["startCursor"] = name(first).into();
            info["endCursor"] = name(last).into();
        }
        (page, info)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, json};

    use super::*;
    use crate::protocol::{
        registry::{Category, OperationSpec, ReturnType},
        request::resolve_params,
    };

    fn request(params: Value) -> Result<PageRequest, AqlError> {
        let spec = OperationSpec {
            name: "list".into(),
            category: Category::Read,
            description: String::new(),
            params: page_params(),
            returns: ReturnType { name: "L", kind: "object", description: "" },
            examples: vec![],
            source: None,
            origin: None,
            danger_level: None,
            lifecycle: None,
            field_presets: Default::default(),
        };
        let mut arguments = Map::new();
        arguments.insert("params".into(), params);
        PageRequest::from_params("list", &resolve_params(&spec, &arguments)?)
    }

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("op_{i:03}")).collect()
    }

    #[test]
    fn forward_pages_reach_every_item_once() {
        let items = names(45);
        let mut seen = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page_request = request(match &after {
                Some(cursor) => json!({"first": 20, "after": cursor}),
                None => json!({}),
            })
            .unwrap();
            let (page, info) = page_request.page(items.clone(), |s| s.as_str());
            assert!(page.len() <= DEFAULT_PAGE_SIZE);
            assert_eq!(info["totalCount"], 45);
            assert_eq!(info["hasPreviousPage"], after.is_some());
            seen.extend(page);
            if info["hasNextPage"] == false {
                break;
            }
            after = info["endCursor"].as_str().map(str::to_owned);
        }
        assert_eq!(seen, items);
    }

    #[test]
    fn backward_pages_and_cursors_that_no_longer_exist() {
        let items = names(10);
        let (page, info) = request(json!({"last": 3})).unwrap().page(items.clone(), |s| s.as_str());
        assert_eq!(page, ["op_007", "op_008", "op_009"]);
        assert_eq!(
            (
                info["hasNextPage"].clone(),
                info["hasPreviousPage"].clone(),
                info["startCursor"].clone()
            ),
            (json!(false), json!(true), json!("op_007"))
        );
        let (page, _) = request(json!({"last": 3, "before": "op_007"}))
            .unwrap()
            .page(items.clone(), |s| s.as_str());
        assert_eq!(page, ["op_004", "op_005", "op_006"]);
        // A cursor removed between pages still marks the place.
        let (page, _) = request(json!({"first": 2, "after": "op_0045"}))
            .unwrap()
            .page(items.clone(), |s| s.as_str());
        assert_eq!(page, ["op_005", "op_006"]);
        let (page, info) =
            request(json!({"first": 5, "after": "zzz"})).unwrap().page(items, |s| s.as_str());
        assert!(page.is_empty());
        assert_eq!(info, json!({"hasNextPage": false, "hasPreviousPage": true, "totalCount": 10}));
    }

    #[test]
    fn the_combinations_the_spec_forbids_are_refused() {
        for bad in [
            json!({"first": 2, "last": 2}),
            json!({"after": "a"}),
            json!({"before": "a"}),
            json!({"first": 2, "before": "a"}),
            json!({"last": 2, "after": "a"}),
        ] {
            let error = request(bad.clone()).unwrap_err();
            assert_eq!(error.code, ErrorCode::ValidationInvalidType, "{bad}");
            assert_eq!(error.details["param_name"], "pagination", "{bad}");
        }
        for bad in [json!({"first": 0}), json!({"last": -1}), json!({"first": -500})] {
            assert_eq!(
                request(bad.clone()).unwrap_err().code,
                ErrorCode::ValidationInvalidValue,
                "{bad}"
            );
        }
    }

    #[test]
    fn sizes_over_the_maximum_are_clamped_not_refused() {
        let clamped = |params: Value| request(params).unwrap();
        assert_eq!(
            clamped(json!({"first": MAX_PAGE_SIZE + 1})),
            PageRequest::Forward { size: MAX_PAGE_SIZE, after: None }
        );
        assert_eq!(
            clamped(json!({"first": 500, "after": "op_001"})),
            PageRequest::Forward { size: MAX_PAGE_SIZE, after: Some("op_001".into()) }
        );
        assert_eq!(
            clamped(json!({"last": 1e12})),
            PageRequest::Backward { size: MAX_PAGE_SIZE, before: None }
        );
        assert_eq!(
            clamped(json!({"first": MAX_PAGE_SIZE})),
            PageRequest::Forward { size: MAX_PAGE_SIZE, after: None }
        );
        let (page, info) = clamped(json!({"first": 500})).page(names(150), |s| s.as_str());
        assert_eq!(
            (page.len(), info["hasNextPage"].clone(), info["endCursor"].clone()),
            (MAX_PAGE_SIZE, json!(true), json!("op_099"))
        );
    }
}
