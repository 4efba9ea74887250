//! The adapter's `auth` block from the document's security schemes
//! (`components.securitySchemes` in OpenAPI 3, `securityDefinitions` in
//! Swagger 2.0), and the parameters that carry credentials: those never
//! become parameters an agent fills in, since credentials come from the
//! environment only.
//!
//! One scheme is chosen: the first usable one in sorted name order among
//! those the global `security` requirement names, else among all. HTTP
//! bearer, OAuth2 and OpenID Connect become a bearer token; HTTP basic,
//! basic; an API key in a header or the query, an API key. Cookie keys,
//! digest and mutual TLS are not usable.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    ImportError,
    document::{Dialect, Document, Node},
    refs::Refs,
};
use crate::adapter::definition::KeyPlace;

/// How the runtime authenticates the adapter's calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    Bearer,
    Basic,
    ApiKey(KeyPlace),
}

/// The chosen scheme, and what credential-carrying parameters look like.
#[derive(Debug, Default)]
pub struct Security {
    pub auth: Option<Auth>,
    key_headers: Vec<String>,
    key_queries: Vec<String>,
}

impl Security {
    /// Whether an OpenAPI parameter (`in`, `name`) carries credentials:
    /// any `Authorization` header, and the header or query parameter of any
    /// API-key scheme (headers compared without case, as HTTP does).
    pub fn is_credential(&self, location: &str, name: &str) -> bool {
        match location {
            "header" => {
                name.eq_ignore_ascii_case("authorization")
                    || self.key_headers.iter().any(|h| h.eq_ignore_ascii_case(name))
            }
            "query" => self.key_queries.iter().any(|q| q == name),
            _ => false,
        }
    }
}

/// The document's security, with a warning when schemes exist but none is
/// usable, or when more than one is and the others are left out.
pub fn security(
    document: &Document,
    refs: &Refs<'_>,
    warnings: &mut Vec<String>,
) -> Result<Security, ImportError> {
    let schemes = match document.dialect {
        Dialect::Swagger2 => document.root.entries("securityDefinitions").collect::<Vec<_>>(),
        Dialect::OpenApi30 | Dialect::OpenApi31 => document
            .root
            .get("components")
            .map(|c| c.entries("securitySchemes").collect())
            .unwrap_or_default(),
    };
    let declared = schemes.len();
    let mut security = Security::default();
    let mut usable = BTreeMap::new();
    for (name, scheme) in schemes {
        let scheme =
            refs.resolve(scheme).map_err(|e| e.at(&format!("security scheme `{name}`")))?;
        let Some(auth) = usable_auth(scheme) else { continue };
        match &auth {
            Auth::ApiKey(KeyPlace::Header(header)) => security.key_headers.push(header.clone()),
            Auth::ApiKey(KeyPlace::Query(query)) => security.key_queries.push(query.clone()),
            Auth::Bearer | Auth::Basic => {}
        }
        usable.insert(name.as_str(), auth);
    }
    let required: BTreeSet<&str> = document
        .root
        .items("security")
        .filter_map(Node::as_object)
        .flat_map(|r| r.keys())
        .map(String::as_str)
        .collect();
    let chosen = usable
        .keys()
        .find(|name| required.contains(*name))
        .or_else(|| usable.keys().next())
        .copied();
    if let Some(chosen) = chosen {
        if usable.len() > 1 {
            let names: Vec<&str> = usable.keys().copied().collect();
            warnings.push(format!(
                "security schemes {}: the adapter uses `{chosen}` (an adapter has one scheme)",
                names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        security.auth = usable.remove(chosen);
    } else if declared > 0 {
        warnings.push("no security scheme is of a kind the adapter supports (HTTP bearer or basic, OAuth2, OpenID Connect, an API key in a header or the query): the adapter has no auth".into());
    }
    Ok(security)
}

fn usable_auth(scheme: &Node) -> Option<Auth> {
    match scheme.str_at("type")? {
        "http" => match scheme.str_at("scheme")?.to_ascii_lowercase().as_str() {
            "bearer" => Some(Auth::Bearer),
            "basic" => Some(Auth::Basic),
            _ => None,
        },
        "basic" => Some(Auth::Basic),
        "oauth2" | "openIdConnect" => Some(Auth::Bearer),
        "apiKey" => {
            let name = scheme.str_at("name")?.to_owned();
            match scheme.str_at("in")? {
                "header" => Some(Auth::ApiKey(KeyPlace::Header(name))),
                "query" => Some(Auth::ApiKey(KeyPlace::Query(name))),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::openapi::document::parse;

    fn security_of(text: &str) -> (Security, Vec<String>) {
        let document = parse(text).unwrap();
        let refs = Refs::new(&document.root);
        let mut warnings = Vec::new();
        let security = security(&document, &refs, &mut warnings).unwrap();
        (security, warnings)
    }

    #[test]
    fn each_scheme_kind_maps_to_its_auth() {
        let rows = [
            (r#"{"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}"#, Some(Auth::Bearer)),
            (r#"{"type": "http", "scheme": "Basic"}"#, Some(Auth::Basic)),
            (r#"{"type": "http", "scheme": "digest"}"#, None),
            (r#"{"type": "oauth2", "flows": {}}"#, Some(Auth::Bearer)),
            (
                r#"{"type": "openIdConnect", "openIdConnectUrl": "https://example.com"}"#,
                Some(Auth::Bearer),
            ),
            (
                r#"{"type": "apiKey", "in": "header", "name": "X-API-Key"}"#,
                Some(Auth::ApiKey(KeyPlace::Header("X-API-Key".into()))),
            ),
            (
                r#"{"type": "apiKey", "in": "query", "name": "api_key"}"#,
                Some(Auth::ApiKey(KeyPlace::Query("api_key".into()))),
            ),
            (r#"{"type": "apiKey", "in": "cookie", "name": "session"}"#, None),
            (r#"{"type": "mutualTLS"}"#, None),
        ];
        for (scheme, expected) in rows {
            let (security, warnings) = security_of(&format!(
                r#"{{"openapi": "3.1.0", "components": {{"securitySchemes": {{"only": {scheme}}}}}}}"#
            ));
            assert_eq!(security.auth, expected, "{scheme}");
            assert_eq!(warnings.len(), usize::from(expected.is_none()), "{scheme}: {warnings:?}");
        }
        let (security, _) =
            security_of(r#"{"swagger": "2.0", "securityDefinitions": {"b": {"type": "basic"}}}"#);
        assert_eq!(security.auth, Some(Auth::Basic));
    }

    #[test]
    fn the_globally_required_scheme_wins_else_the_first_by_name() {
        let schemes = r#""securitySchemes": {"zeta": {"type": "http", "scheme": "bearer"}, "alpha": {"type": "http", "scheme": "basic"}}"#;
        let (security, warnings) =
            security_of(&format!(r#"{{"openapi": "3.0.0", "components": {{{schemes}}}}}"#));
        assert_eq!(security.auth, Some(Auth::Basic), "alpha sorts first");
        assert!(warnings[0].contains("uses `alpha`"), "{warnings:?}");
        let (security, _) = security_of(&format!(
            r#"{{"openapi": "3.0.0", "security": [{{"zeta": []}}], "components": {{{schemes}}}}}"#
        ));
        assert_eq!(security.auth, Some(Auth::Bearer));
        let (security, warnings) = security_of(r#"{"openapi": "3.0.0"}"#);
        assert_eq!((security.auth, warnings.len()), (None, 0));
    }

    #[test]
    fn credential_parameters_are_recognised() {
        let (security, _) = security_of(
            r##"{"openapi": "3.0.0", "components": {"securitySchemes": {
                "header": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
                "query": {"$ref": "#/components/x-schemes/query"}},
                "x-schemes": {"query": {"type": "apiKey", "in": "query", "name": "key"}}}}"##,
        );
        assert!(security.is_credential("header", "x-api-key"));
        assert!(security.is_credential("header", "Authorization"));
        assert!(security.is_credential("query", "key"));
        assert!(!security.is_credential("query", "KEY"), "query names are case-sensitive");
        assert!(!security.is_credential("query", "X-API-Key"));
        assert!(!security.is_credential("path", "key"));
        assert!(!security.is_credential("header", "X-Request-Id"));
    }
}
