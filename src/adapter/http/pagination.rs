//! Following an operation's pages (`pagination` in the adapter file):
//! where a page's items are, and the request for the next page by the
//! declared style — the `Link: <…>; rel="next"` header (only within the
//! adapter's own origin, so credentials never go elsewhere), a cursor read
//! from the body, or an offset advanced by the items received.

use reqwest::Url;
use serde_json::Value;

use super::{
    super::definition::{PageStyle, Pagination},
    request::PreparedRequest,
};

/// The items of one page, or `None` when the body has no list where the
/// adapter says.
pub fn items<'v>(pagination: &Pagination, body: &'v Value) -> Option<&'v Vec<Value>> {
    field(body, &pagination.items_field)?.as_array()
}

fn field<'v>(body: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(body, |value, key| value.get(key))
}

/// The request for the page after `page`, or `None` when it was the last.
pub fn next_request(
    pagination: &Pagination,
    base: &Url,
    sent: &PreparedRequest,
    link: Option<&str>,
    body: &Value,
    received: usize,
) -> Option<PreparedRequest> {
    match &pagination.style {
        PageStyle::LinkHeader => {
            let next = next_link(link?)?;
            let url = sent.url.join(&next).ok()?;
            if url.origin() != base.origin() {
                tracing::warn!(
                    "a next-page link points outside the adapter's origin; not followed"
                );
                return None;
            }
            Some(PreparedRequest { url, ..sent.clone() })
        }
        PageStyle::Cursor { param, next_field } => {
            let cursor = match field(body, next_field)? {
                Value::String(s) if !s.is_empty() => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            Some(with_value(sent, param, Value::String(cursor)))
        }
        PageStyle::Offset { offset_param, limit_param } => {
            if received == 0 {
                return None;
            }
            let limit = current(sent, limit_param).and_then(|v| v.parse::<usize>().ok());
            if limit.is_some_and(|limit| received < limit) {
                return None;
            }
            let offset =
                current(sent, offset_param).and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
            Some(with_value(sent, offset_param, Value::from(offset + received)))
        }
    }
}

/// The `rel="next"` target of a `Link` header (RFC 8288).
pub fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|link| {
        let (target, params) = link.split_once(';')?;
        let is_next = params.split(';').any(|p| {
            let p = p.trim().replace(' ', "");
            p == "rel=\"next\"" || p == "rel=next"
        });
        let target = target.trim().strip_prefix('<')?.strip_suffix('>')?;
        is_next.then(|| target.to_owned())
    })
}

/// A parameter's value as sent: from the query, else the JSON body.
fn current(sent: &PreparedRequest, name: &str) -> Option<String> {
    sent.url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned()).or_else(|| {
        sent.body.as_ref()?.get(name).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    })
}

/// `sent` with `name` set to `value`: in the JSON body when the request has
/// one, else in the query (replacing an earlier value).
fn with_value(sent: &PreparedRequest, name: &str, value: Value) -> PreparedRequest {
    let mut next = sent.clone();
    if let Some(Value::Object(body)) = &mut next.body {
        body.insert(name.to_owned(), value);
        return next;
    }
    let kept: Vec<(String, String)> = sent
        .url
        .query_pairs()
        .filter(|(k, _)| k != name)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let text = match value {
        Value::String(s) => s,
        other => other.to_string(),
    };
    next.url.query_pairs_mut().clear().extend_pairs(kept).append_pair(name, &text);
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_links_are_found_among_others() {
        let header = r#"<https://api.example.com/items?page=1>; rel="prev", <https://api.example.com/items?page=3>; rel="next", <https://api.example.com/items?page=9>; rel="last""#;
        assert_eq!(next_link(header).as_deref(), Some("https://api.example.com/items?page=3"));
        assert_eq!(next_link(r#"<https://a/x>; rel="last""#), None);
        assert_eq!(next_link("garbage"), None);
    }
}
