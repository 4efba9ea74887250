//! The adapter's header from the document's `info` and server: its name
//! (given, else from the title), version (the API's when it is semver,
//! else 1.0.0), one-line description, and the absolute base URL every
//! operation's path is appended to.

use super::{
    ImportError,
    document::{Dialect, Document, Node},
    emit::one_line,
    names,
};

/// The adapter description's length limit (the format's recommendation).
pub const MAX_DESCRIPTION: usize = 200;

/// The version an adapter gets when the API's is not semver.
const DEFAULT_VERSION: &str = "1.0.0";

#[derive(Debug)]
pub struct Header {
    pub name: String,
    pub version: String,
    pub description: String,
    /// The document's title on one line, for the Markdown body.
    pub title: String,
    pub base_url: String,
}

pub fn header(
    document: &Document,
    name: Option<&str>,
    warnings: &mut Vec<String>,
) -> Result<Header, ImportError> {
    let info = document.root.get("info").unwrap_or(&Node::Null);
    let title = Some(one_line(info.str_at("title").unwrap_or_default(), MAX_DESCRIPTION))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "Imported API".into());
    let name = match name {
        Some(name) if names::is_adapter_name(name) => name.to_owned(),
        Some(name) => return Err(ImportError::InvalidName(name.to_owned())),
        None => names::adapter_name(&title),
    };
    let version = match info.get("version") {
        Some(Node::String(version)) if is_semver(version) => version.clone(),
        Some(other) => {
            let shown =
                other.as_str().map_or_else(|| "(not a string)".to_owned(), |v| format!("\"{v}\""));
            warnings.push(format!("info.version {shown} is not a semantic version (X.Y.Z): the adapter's version is {DEFAULT_VERSION}"));
            DEFAULT_VERSION.to_owned()
        }
        None => DEFAULT_VERSION.to_owned(),
    };
    let summary = info
        .str_at("summary")
        .or_else(|| info.str_at("description"))
        .map(first_sentence)
        .unwrap_or_default();
    let description = if summary.is_empty() {
        format!("{title} (imported from {document})")
    } else {
        format!("{title}: {summary}")
    };
    let base_url = base_url(document)?;
    if base_url.starts_with("http://") && !is_loopback(&base_url) {
        warnings.push(format!("the base URL {base_url} is plain http; the adapter format requires https except for localhost"));
    }
    Ok(Header {
        name,
        version,
        description: one_line(&description, MAX_DESCRIPTION),
        title,
        base_url,
    })
}

/// `X.Y.Z` or `X.Y.Z-pre` as semver 2.0 defines them (no leading zeros in
/// numbers, dot-separated pre-release identifiers).
fn is_semver(version: &str) -> bool {
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let numeric = |part: &str| {
        !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'))
    };
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|p| numeric(p))
        && pre.is_none_or(|pre| {
            pre.split('.').all(|id| {
                !id.is_empty()
                    && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && (!id.bytes().all(|b| b.is_ascii_digit()) || numeric(id))
            })
        })
}

/// The first line of `text`, and of that the first sentence.
fn first_sentence(text: &str) -> &str {
    let line = text.trim().lines().next().unwrap_or_default();
    match line.find(". ") {
        Some(end) => line.get(..=end).unwrap_or_default(),
        None => line,
    }
}

/// OpenAPI 3: `servers[0].url` with its `{variables}` set to their
/// defaults; Swagger 2.0: scheme (https unless only http is offered),
/// `host` and `basePath`. Never with a trailing slash.
fn base_url(document: &Document) -> Result<String, ImportError> {
    let root = &document.root;
    let url = match document.dialect {
        Dialect::Swagger2 => {
            let host = root
                .str_at("host")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| ImportError::NoServer("the document has no `host`".into()))?;
            let schemes: Vec<&str> = root.items("schemes").filter_map(Node::as_str).collect();
            let scheme = if schemes.contains(&"https") || !schemes.contains(&"http") {
                "https"
            } else {
                "http"
            };
            format!("{scheme}://{host}{}", root.str_at("basePath").unwrap_or_default())
        }
        Dialect::OpenApi30 | Dialect::OpenApi31 => {
            let server = root
                .items("servers")
                .next()
                .ok_or_else(|| ImportError::NoServer("the document has no `servers`".into()))?;
            let url = server
                .str_at("url")
                .ok_or_else(|| ImportError::NoServer("servers[0] has no `url`".into()))?;
            substitute_variables(url, server)?
        }
    };
    let absolute = ["https://", "http://"].iter().any(|scheme| {
        url.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme))
            && url.len() > scheme.len()
    });
    if !absolute {
        return Err(ImportError::NoServer(format!(
            "the server URL `{url}` is not an absolute http(s) URL"
        )));
    }
    Ok(url.trim_end_matches('/').to_owned())
}

fn substitute_variables(url: &str, server: &Node) -> Result<String, ImportError> {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(open) = rest.find('{') {
        let close =
            rest.get(open..).unwrap_or_default().find('}').map(|c| open + c).ok_or_else(|| {
                ImportError::NoServer(format!("the server URL `{url}` has an unclosed `{{`"))
            })?;
        let variable = rest.get(open + 1..close).unwrap_or_default();
        let default = server
            .get("variables")
            .and_then(|v| v.get(variable))
            .and_then(|v| v.str_at("default"))
            .ok_or_else(|| {
                ImportError::NoServer(format!(
                    "the server URL variable `{variable}` has no default"
                ))
            })?;
        out.push_str(rest.get(..open).unwrap_or_default());
        out.push_str(default);
        rest = rest.get(close + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    Ok(out)
}

fn is_loopback(url: &str) -> bool {
    let host = url.split_once("://").map_or("", |(_, rest)| rest);
    let host = host.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host
        .rsplit_once(':')
        .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
        .map_or(host, |(host, _)| host);
    matches!(host, "localhost" | "[::1]") || host.starts_with("127.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::openapi::document::parse;

    fn header_of(text: &str) -> Result<(Header, Vec<String>), ImportError> {
        let document = parse(text)?;
        let mut warnings = Vec::new();
        header(&document, None, &mut warnings).map(|h| (h, warnings))
    }

    #[test]
    fn base_urls_from_servers_and_hosts() {
        let rows = [
            (
                r#"{"openapi": "3.0.0", "servers": [{"url": "https://api.github.com/"}, {"url": "http://other"}]}"#,
                "https://api.github.com",
            ),
            (
                r#"{"openapi": "3.0.0", "servers": [{"url": "https://{region}.example.com/{base}", "variables": {"region": {"default": "eu"}, "base": {"default": "v2"}}}]}"#,
                "https://eu.example.com/v2",
            ),
            (
                r#"{"swagger": "2.0", "host": "petstore.swagger.io", "basePath": "/v2", "schemes": ["http", "https"]}"#,
                "https://petstore.swagger.io/v2",
            ),
            (
                r#"{"swagger": "2.0", "host": "localhost:8080", "basePath": "/", "schemes": ["http"]}"#,
                "http://localhost:8080",
            ),
            (r#"{"swagger": "2.0", "host": "api.example.com"}"#, "https://api.example.com"),
        ];
        for (text, expected) in rows {
            let (header, warnings) = header_of(text).unwrap();
            assert_eq!(header.base_url, expected, "{text}");
            assert!(warnings.iter().all(|w| !w.contains("plain http")), "{warnings:?}");
        }
        let (_, warnings) =
            header_of(r#"{"openapi": "3.0.0", "servers": [{"url": "http://api.example.com"}]}"#)
                .unwrap();
        assert!(warnings.iter().any(|w| w.contains("plain http")), "{warnings:?}");
    }

    #[test]
    fn a_missing_or_relative_server_is_an_error_that_says_what_to_pass() {
        for text in [
            r#"{"openapi": "3.0.0"}"#,
            r#"{"openapi": "3.0.0", "servers": [{"url": "/v1"}]}"#,
            r#"{"openapi": "3.0.0", "servers": [{"url": "//api.example.com"}]}"#,
            r#"{"openapi": "3.0.0", "servers": [{"url": "https://{host}/"}]}"#,
            r#"{"swagger": "2.0", "basePath": "/v1"}"#,
        ] {
            let error = header_of(text).err().unwrap();
            assert!(matches!(error, ImportError::NoServer(_)), "{text}: {error}");
            assert!(error.to_string().contains("absolute"), "{error}");
        }
    }

    #[test]
    fn name_version_and_description() {
        let (header, warnings) = header_of(
            r#"{"openapi": "3.0.0", "servers": [{"url": "https://x.test"}],
                "info": {"title": "Pet  Store\nAPI", "version": "2.1.0-beta.1", "description": "Manage pets. And owners.\nMore."}}"#,
        )
        .unwrap();
        assert_eq!(
            (header.name.as_str(), header.version.as_str()),
            ("pet-store-api", "2.1.0-beta.1")
        );
        assert_eq!(header.description, "Pet Store API: Manage pets.");
        assert!(warnings.is_empty(), "{warnings:?}");
        let (header, warnings) = header_of(r#"{"openapi": "3.0.0", "servers": [{"url": "https://x.test"}], "info": {"title": "T", "version": "2024-01-01"}}"#).unwrap();
        assert_eq!((header.name.as_str(), header.version.as_str()), ("imported-api", "1.0.0"));
        assert_eq!(header.description, "T (imported from OpenAPI 3.0.0)");
        assert!(warnings[0].contains("\"2024-01-01\" is not a semantic version"), "{warnings:?}");
        let long = format!(
            r#"{{"openapi": "3.0.0", "servers": [{{"url": "https://x.test"}}], "info": {{"title": "{}"}}}}"#,
            "word ".repeat(100)
        );
        assert!(header_of(&long).unwrap().0.description.chars().count() <= MAX_DESCRIPTION);
        let document =
            parse(r#"{"openapi": "3.0.0", "servers": [{"url": "https://x.test"}]}"#).unwrap();
        let error = super::header(&document, Some("Bad_Name"), &mut Vec::new()).err().unwrap();
        assert!(matches!(error, ImportError::InvalidName(_)), "{error}");
        assert_eq!(
            super::header(&document, Some("my-api"), &mut Vec::new()).unwrap().name,
            "my-api"
        );
    }

    #[test]
    fn semver_table() {
        for good in [
            "1.0.0",
            "0.0.1",
            "10.20.30",
            "1.0.0-alpha",
            "1.0.0-alpha.1",
            "1.0.0-0.3.7",
            "1.0.0-x-y",
        ] {
            assert!(is_semver(good), "{good}");
        }
        for bad in [
            "1.0",
            "1.0.0.0",
            "01.0.0",
            "1.0.0-",
            "1.0.0-01",
            "1.0.0+build",
            "v1.0.0",
            "1.0.0-a..b",
            "",
        ] {
            assert!(!is_semver(bad), "{bad}");
        }
    }
}
