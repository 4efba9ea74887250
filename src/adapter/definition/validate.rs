//! Validation of an adapter's front matter into an [`AdapterDefinition`]:
//! every field of runtime seed section 4 and `adapter/element-type.md`,
//! every error collected (not just the first), each as
//! `file:line:col: <json path>: <message> (expected …, received …)`.

use std::{collections::BTreeMap, fmt::Display, ops::RangeInclusive, sync::Arc, time::Duration};

use marked_yaml::{Node, types::MarkedMappingNode};
use reqwest::Url;
use serde_json::Value;

use crate::{
    adapter::{
        json_schema::LazySchema,
        retry::{MAX_RETRIES, MAX_RETRY_BASE_MS, RetryPolicy},
        yaml::{self, YamlError},
    },
    diagnostics::{Diagnostic, SourceFile},
    gate::{danger::DangerLevel, trust::TrustLevel},
    protocol::{params::ParamType, registry::Category},
};

use super::{
    AdapterDefinition, Auth, KeyPlace, LimitKind, Loaded, Location, Method, OperationDefinition,
    PageStyle, Pagination, ParamDefinition, RateLimit, RateWindow, Target, front_matter::Parts,
};

const TOP_LEVEL: [&str; 14] = [
    "name",
    "type",
    "version",
    "description",
    "target",
    "auth",
    "operations",
    "trust",
    "rate_limits",
    "author",
    "tags",
    "triggers",
    "created",
    "modified",
];
const TARGET_KEYS: [&str; 8] = [
    "base_url",
    "transport",
    "protocol",
    "serialization",
    "timeout_secs",
    "max_retries",
    "retry_base_ms",
    "max_response_bytes",
];
const OPERATION_KEYS: [&str; 10] = [
    "name",
    "maps_to",
    "description",
    "params",
    "danger_level",
    "danger",
    "requires_confirmation",
    "non_idempotent",
    "pagination",
    "response",
];
const PARAM_KEYS: [&str; 7] =
    ["type", "required", "description", "default", "enum", "in", "wire_name"];
const DANGER_KEYS: [&str; 6] = [
    "level",
    "reasons",
    "confirmation_message",
    "cooldown_seconds",
    "requires_reauth",
    "audit_context",
];
const PAGINATION_KEYS: [&str; 7] = [
    "style",
    "items_field",
    "cursor_param",
    "next_cursor_field",
    "offset_param",
    "limit_param",
    "max_pages",
];
/// Parameter names the runtime adds to paginated operations.
pub const PAGING_PARAMS: [&str; 2] = ["all_pages", "page_limit"];

const DEFAULT_TIMEOUT_SECS: u64 = 30;
const DEFAULT_MAX_RESPONSE_BYTES: u64 = 10 * 1024 * 1024;
const DEFAULT_MAX_PAGES: u64 = 10;

pub fn definition(source: &SourceFile, parts: &Parts<'_>) -> Result<Loaded, Vec<Diagnostic>> {
    let mut walker =
        Walker { source, line_offset: parts.line_offset, errors: Vec::new(), warnings: Vec::new() };
    let root = match yaml::parse(parts.yaml) {
        Ok(root) => root,
        Err(YamlError::Invalid { at, message }) => {
            return Err(vec![walker.diagnostic(at, message)]);
        }
        Err(YamlError::TooDeep) => {
            let message =
                format!("the front matter nests deeper than {} levels", yaml::MAX_BLOCK_DEPTH);
            return Err(vec![walker.diagnostic(yaml::Position { line: 1, col: 1 }, message)]);
        }
    };
    let built = walker.adapter(&root, parts.body);
    match built {
        Some(definition) if walker.errors.is_empty() => {
            Ok(Loaded { definition, warnings: walker.warnings })
        }
        _ => {
            walker.errors.sort_by_key(|d| (d.line, d.col));
            Err(walker.errors)
        }
    }
}

struct Walker<'s> {
    source: &'s SourceFile,
    line_offset: usize,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
}

/// What a node holds, for "received …" in messages.
fn received(node: &Node) -> String {
    match node {
        Node::Scalar(s) if s.may_coerce() && s.as_str().is_empty() => "nothing".into(),
        Node::Scalar(s) => {
            let text: String = s.as_str().chars().take(60).collect();
            format!("'{text}'")
        }
        Node::Sequence(_) => "a list".into(),
        Node::Mapping(_) => "a mapping".into(),
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

impl Walker<'_> {
    fn diagnostic(&self, at: yaml::Position, message: String) -> Diagnostic {
        let line = at.line + self.line_offset;
        let source_line =
            self.source.text.lines().nth(line - 1).map(|l| l.trim_end_matches('\r').to_owned());
        Diagnostic { file: self.source.path.clone(), line, col: at.col, message, source_line }
    }

    fn error(&mut self, node: &Node, path: &str, message: impl Display) {
        let diagnostic = self.diagnostic(yaml::position(node.span()), format!("{path}: {message}"));
        self.errors.push(diagnostic);
    }

    fn expected(&mut self, node: &Node, path: &str, message: impl Display, expected: &str) {
        let got = received(node);
        self.error(node, path, format!("{message} (expected {expected}, received {got})"));
    }

    /// Reported where the mapping that lacks the field begins (its first
    /// key: a mapping's own mark can point past it).
    fn missing(&mut self, parent: &Node, path: &str, expected: &str) {
        let at = match parent {
            Node::Mapping(map) => map.iter().next().map_or_else(
                || yaml::position(parent.span()),
                |(key, _)| yaml::position(key.span()),
            ),
            other => yaml::position(other.span()),
        };
        let diagnostic =
            self.diagnostic(at, format!("{path}: required field is missing (expected {expected})"));
        self.errors.push(diagnostic);
    }

    fn mapping<'n>(&mut self, node: &'n Node, path: &str) -> Option<&'n MarkedMappingNode> {
        match node {
            Node::Mapping(map) => Some(map),
            other => {
                self.expected(other, path, "must be a mapping", "a mapping of keys to values");
                None
            }
        }
    }

    /// Keys outside `known` are errors (`strict`) or warnings.
    fn keys(&mut self, map: &MarkedMappingNode, path: &str, known: &[&str], strict: bool) {
        for (key, _) in map.iter() {
            if known.contains(&key.as_str()) {
                continue;
            }
            let at = yaml::position(key.span());
            let key_path = child(path, key.as_str());
            if strict {
                let hint = if key.as_str().contains("token")
                    || key.as_str().contains("key")
                    || key.as_str().contains("password")
                {
                    "; credentials are never written in adapter files, only the names of environment variables that hold them"
                } else {
                    ""
                };
                let message =
                    format!("{key_path}: unknown key (expected one of {}){hint}", known.join(", "));
                self.errors.push(self.diagnostic(at, message));
            } else {
                let message = format!("{key_path}: unknown top-level key, ignored");
                self.warnings.push(self.diagnostic(at, message));
            }
        }
    }

    fn string(
        &mut self,
        parent: &Node,
        map: &MarkedMappingNode,
        path: &str,
        key: &str,
        required: bool,
    ) -> Option<String> {
        let field = child(path, key);
        match map.get_node(key) {
            None => {
                if required {
                    self.missing(parent, &field, "a string");
                }
                None
            }
            Some(Node::Scalar(s)) if !(s.may_coerce() && s.as_str().is_empty()) => {
                Some(s.as_str().to_owned())
            }
            Some(other) => {
                self.expected(other, &field, "must be a string", "a string");
                None
            }
        }
    }

    fn non_empty(
        &mut self,
        parent: &Node,
        map: &MarkedMappingNode,
        path: &str,
        key: &str,
    ) -> Option<String> {
        let value = self.string(parent, map, path, key, true)?;
        if value.trim().is_empty() {
            if let Some(node) = map.get_node(key) {
                self.expected(node, &child(path, key), "must not be empty", "a non-empty string");
            }
            return None;
        }
        Some(value)
    }

    fn boolean(&mut self, map: &MarkedMappingNode, path: &str, key: &str) -> Option<bool> {
        let node = map.get_node(key)?;
        match yaml_scalar(node) {
            Some(Value::Bool(flag)) => Some(flag),
            _ => {
                self.expected(node, &child(path, key), "must be true or false", "a boolean");
                None
            }
        }
    }

    /// A whole number in `range`, or `default` when absent.
    fn count(
        &mut self,
        map: &MarkedMappingNode,
        path: &str,
        key: &str,
        default: u64,
        range: RangeInclusive<u64>,
    ) -> u64 {
        let Some(node) = map.get_node(key) else { return default };
        match yaml_scalar(node).and_then(|v| v.as_u64()) {
            Some(n) if range.contains(&n) => n,
            _ => {
                self.expected(
                    node,
                    &child(path, key),
                    "must be a whole number in range",
                    &format!("{} to {}", range.start(), range.end()),
                );
                default
            }
        }
    }

    fn adapter(&mut self, root: &Node, body: &str) -> Option<AdapterDefinition> {
        let map = self.mapping(root, "")?;
        self.keys(map, "", &TOP_LEVEL, false);
        let name = self.non_empty(root, map, "", "name");
        if let (Some(name), Some(node)) = (&name, map.get_node("name"))
            && !adapter_name_ok(name)
        {
            self.expected(node, "name", "is not a valid adapter name", "lowercase letters, digits and '-', starting with a letter, not ending with '-', 2-64 characters");
        }
        match (self.string(root, map, "", "type", true), map.get_node("type")) {
            (Some(kind), Some(node)) if kind != "adapter" => {
                self.expected(node, "type", "this file is not an adapter", "'adapter'")
            }
            _ => {}
        }
        let version = self.non_empty(root, map, "", "version");
        if let (Some(version), Some(node)) = (&version, map.get_node("version"))
            && !is_semver(version)
        {
            self.expected(
                node,
                "version",
                "is not a semantic version",
                "MAJOR.MINOR.PATCH, quoted, like \"1.0.0\"",
            );
        }
        let description = self.non_empty(root, map, "", "description");
        let target = match map.get_node("target") {
            Some(node) => self.target(node),
            None => {
                self.missing(
                    root,
                    "target",
                    "a mapping with base_url, transport, protocol and serialization",
                );
                None
            }
        };
        let Some(target) = target else {
            // Without a usable target (an unsupported transport, say) the
            // operations cannot be understood; their errors would be noise.
            return None;
        };
        let auth = map.get_node("auth").map_or(Some(Auth::None), |node| self.auth(node));
        let trust = map.get_node("trust").and_then(|node| self.trust(node));
        let rate_limits =
            map.get_node("rate_limits").map(|node| self.rate_limits(node)).unwrap_or_default();
        let operations = match map.get_node("operations") {
            Some(node) => self.operations(node),
            None => {
                self.missing(
                    root,
                    "operations",
                    "a mapping of create/read/update/delete/execute lists",
                );
                Vec::new()
            }
        };
        Some(AdapterDefinition {
            prefix: name.as_deref().unwrap_or_default().replace('-', "_"),
            name: name?,
            version: version?,
            description: description?,
            target,
            auth: auth?,
            trust,
            rate_limits,
            operations,
            documentation: body.to_owned(),
            file: self.source.path.clone(),
        })
    }

    fn target(&mut self, node: &Node) -> Option<Target> {
        let map = self.mapping(node, "target")?;
        self.keys(map, "target", &TARGET_KEYS, true);
        let transport = self.string(node, map, "target", "transport", true);
        let protocol = self.string(node, map, "target", "protocol", true);
        let serialization = self.string(node, map, "target", "serialization", true);
        let mut supported = transport.is_some() && protocol.is_some() && serialization.is_some();
        for (key, value, only) in [
            ("transport", &transport, "http"),
            ("protocol", &protocol, "rest"),
            ("serialization", &serialization, "json"),
        ] {
            if let (Some(value), Some(at)) = (value, map.get_node(key))
                && value != only
            {
                supported = false;
                self.error(at, &format!("target.{key}"), format!("unsupported {key} '{value}': this runtime runs only {key} '{only}' adapters, so this adapter's operations were not loaded"));
            }
        }
        let base_url = self.string(node, map, "target", "base_url", true);
        let timeout_secs =
            self.count(map, "target", "timeout_secs", DEFAULT_TIMEOUT_SECS, 1..=3_600);
        let defaults = RetryPolicy::default();
        let max_retries = self.count(
            map,
            "target",
            "max_retries",
            u64::from(defaults.max_retries),
            0..=u64::from(MAX_RETRIES),
        );
        let retry_base_ms = self.count(
            map,
            "target",
            "retry_base_ms",
            defaults.base.as_millis() as u64,
            1..=MAX_RETRY_BASE_MS,
        );
        let max_response_bytes = self.count(
            map,
            "target",
            "max_response_bytes",
            DEFAULT_MAX_RESPONSE_BYTES,
            1..=1 << 30,
        );
        if !supported {
            return None;
        }
        let base_url = self.base_url(map, base_url?)?;
        Some(Target {
            base_url,
            timeout: Duration::from_secs(timeout_secs),
            retry: RetryPolicy {
                max_retries: u32::try_from(max_retries).unwrap_or(0),
                base: Duration::from_millis(retry_base_ms),
            },
            max_response_bytes: usize::try_from(max_response_bytes).unwrap_or(usize::MAX),
        })
    }

    fn base_url(&mut self, map: &MarkedMappingNode, text: String) -> Option<Url> {
        let node = map.get_node("base_url")?;
        let path = "target.base_url";
        let url = match Url::parse(&text) {
            Ok(url) => url,
            Err(error) => {
                self.expected(
                    node,
                    path,
                    format!("is not a valid URL ({error})"),
                    "an absolute URL such as \"https://api.example.com\"",
                );
                return None;
            }
        };
        let problem = if url.host().is_none() {
            Some("has no host")
        } else if url.scheme() != "https" && !(url.scheme() == "http" && is_loopback(&url)) {
            Some("must use https (plain http only for localhost)")
        } else if text.ends_with('/') {
            Some("must not end with '/' (operation paths start with one)")
        } else if url.query().is_some() || url.fragment().is_some() {
            Some("must not carry a query or fragment")
        } else if !url.username().is_empty() || url.password().is_some() {
            Some("must not embed credentials")
        } else {
            None
        };
        match problem {
            Some(problem) => {
                self.expected(node, path, problem, "\"https://host[/prefix]\"");
                None
            }
            None => Some(url),
        }
    }

    fn auth(&mut self, node: &Node) -> Option<Auth> {
        let map = self.mapping(node, "auth")?;
        let kind = self.string(node, map, "auth", "type", true)?;
        let keys: &[&str] = match kind.as_str() {
            "none" => &["type"],
            "bearer" => &["type", "token_env"],
            "api_key" => &["type", "key_env", "header_name", "query_param"],
            "basic" => &["type", "username_env", "password_env"],
            other => {
                let at = map.get_node("type").unwrap_or(node);
                self.expected(
                    at,
                    "auth.type",
                    format!("unsupported auth type '{other}'"),
                    "none, bearer, api_key or basic",
                );
                return None;
            }
        };
        self.keys(map, "auth", keys, true);
        let env = |walker: &mut Self, key: &str| -> Option<String> {
            let name = walker.non_empty(node, map, "auth", key)?;
            if !env_name_ok(&name) {
                let at = map.get_node(key).unwrap_or(node);
                walker.expected(
                    at,
                    &child("auth", key),
                    "is not an environment variable name",
                    "letters, digits and '_', not starting with a digit",
                );
                return None;
            }
            Some(name)
        };
        match kind.as_str() {
            "bearer" => Some(Auth::Bearer { token_env: env(self, "token_env")? }),
            "basic" => {
                let username_env = env(self, "username_env");
                let password_env = env(self, "password_env");
                Some(Auth::Basic { username_env: username_env?, password_env: password_env? })
            }
            "api_key" => {
                let key_env = env(self, "key_env");
                let header = self.string(node, map, "auth", "header_name", false);
                let query = self.string(node, map, "auth", "query_param", false);
                let place = match (header, query) {
                    (Some(header), None) if header_name_ok(&header) => KeyPlace::Header(header),
                    (Some(_), None) => {
                        let at = map.get_node("header_name").unwrap_or(node);
                        self.expected(
                            at,
                            "auth.header_name",
                            "is not an HTTP header name",
                            "a token such as X-API-Key",
                        );
                        return None;
                    }
                    (None, Some(query)) => KeyPlace::Query(query),
                    _ => {
                        self.error(
                            node,
                            "auth",
                            "an api_key needs exactly one of header_name or query_param",
                        );
                        return None;
                    }
                };
                Some(Auth::ApiKey { key_env: key_env?, place })
            }
            _ => Some(Auth::None),
        }
    }

    fn trust(&mut self, node: &Node) -> Option<TrustLevel> {
        let map = self.mapping(node, "trust")?;
        let level = self.string(node, map, "trust", "level", true)?;
        let parsed = TrustLevel::parse(&level);
        if parsed.is_none() {
            let at = map.get_node("level").unwrap_or(node);
            let names: Vec<&str> = TrustLevel::ALL.iter().map(|l| l.name()).collect();
            self.expected(at, "trust.level", "unknown trust level", &names.join(", "));
        }
        parsed
    }

    fn rate_limits(&mut self, node: &Node) -> Vec<RateLimit> {
        let mut limits = Vec::new();
        let Some(map) = self.mapping(node, "rate_limits") else { return limits };
        self.keys(
            map,
            "rate_limits",
            &["requests_per_minute", "requests_per_hour", "requests_per_day", "quotas"],
            true,
        );
        for window in [RateWindow::Minute, RateWindow::Hour, RateWindow::Day] {
            if map.get_node(window.metric()).is_some() {
                let threshold =
                    self.count(map, "rate_limits", window.metric(), 0, 1..=u64::from(u32::MAX));
                if threshold > 0 {
                    limits.push(RateLimit { window, threshold, kind: LimitKind::ApiLimit });
                }
            }
        }
        let Some(quotas) = map.get_node("quotas") else { return limits };
        let Some(quota_map) = self.mapping(quotas, "rate_limits.quotas") else { return limits };
        self.keys(quota_map, "rate_limits.quotas", &["enabled", "limits"], true);
        if self.boolean(quota_map, "rate_limits.quotas", "enabled") == Some(false) {
            return limits;
        }
        let Some(list) = quota_map.get_node("limits") else {
            self.missing(
                quotas,
                "rate_limits.quotas.limits",
                "a list of {metric, warn, hard_stop}",
            );
            return limits;
        };
        let Node::Sequence(items) = list else {
            self.expected(
                list,
                "rate_limits.quotas.limits",
                "must be a list",
                "a list of {metric, warn, hard_stop}",
            );
            return limits;
        };
        for (index, item) in items.iter().enumerate() {
            let path = format!("rate_limits.quotas.limits[{index}]");
            let Some(limit) = self.mapping(item, &path) else { continue };
            self.keys(limit, &path, &["metric", "warn", "hard_stop"], true);
            let Some(metric) = self.string(item, limit, &path, "metric", true) else { continue };
            let Some(window) = RateWindow::parse_metric(&metric) else {
                let at = limit.get_node("metric").unwrap_or(item);
                self.expected(
                    at,
                    &child(&path, "metric"),
                    "unsupported quota metric",
                    "requests_per_minute, requests_per_hour or requests_per_day",
                );
                continue;
            };
            let warn = limit
                .get_node("warn")
                .map(|_| self.count(limit, &path, "warn", 0, 1..=u64::from(u32::MAX)));
            let stop = limit
                .get_node("hard_stop")
                .map(|_| self.count(limit, &path, "hard_stop", 0, 1..=u64::from(u32::MAX)));
            match (warn, stop) {
                (None, None) => self.error(item, &path, "a quota needs warn, hard_stop or both"),
                (Some(warn), Some(stop)) if warn >= stop => self.error(
                    item,
                    &path,
                    format!("warn ({warn}) must be below hard_stop ({stop})"),
                ),
                _ => {}
            }
            limits.extend(warn.map(|threshold| RateLimit {
                window,
                threshold,
                kind: LimitKind::QuotaWarn,
            }));
            limits.extend(stop.map(|threshold| RateLimit {
                window,
                threshold,
                kind: LimitKind::QuotaStop,
            }));
        }
        limits
    }

    fn operations(&mut self, node: &Node) -> Vec<OperationDefinition> {
        let mut operations = Vec::new();
        let Some(map) = self.mapping(node, "operations") else { return operations };
        let names: Vec<&str> = Category::ALL.iter().map(|c| c.family()).collect();
        self.keys(map, "operations", &names, true);
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for category in Category::ALL {
            let Some(list) = map.get_node(category.family()) else { continue };
            let path = format!("operations.{}", category.family());
            let items = match list {
                Node::Sequence(items) => items.iter().collect::<Vec<_>>(),
                Node::Scalar(s) if s.may_coerce() && s.as_str().is_empty() => Vec::new(),
                other => {
                    self.expected(other, &path, "must be a list of operations", "a list");
                    continue;
                }
            };
            for (index, item) in items.into_iter().enumerate() {
                let op_path = format!("{path}[{index}]");
                let Some(operation) = self.operation(item, &op_path, category) else { continue };
                let line = yaml::position(item.span()).line + self.line_offset;
                if let Some(first) = seen.insert(operation.name.clone(), line) {
                    let at = match item {
                        Node::Mapping(m) => m.get_node("name").unwrap_or(item),
                        _ => item,
                    };
                    self.error(at, &child(&op_path, "name"), format!("duplicate operation name '{}' (first defined at line {first}); names are unique across all categories", operation.name));
                    continue;
                }
                operations.push(operation);
            }
        }
        if operations.is_empty() && self.errors.is_empty() {
            let message = "operations: the adapter defines no operations".to_owned();
            self.warnings.push(self.diagnostic(yaml::position(node.span()), message));
        }
        operations
    }

    fn operation(
        &mut self,
        node: &Node,
        path: &str,
        category: Category,
    ) -> Option<OperationDefinition> {
        let map = self.mapping(node, path)?;
        self.keys(map, path, &OPERATION_KEYS, true);
        let name = self.non_empty(node, map, path, "name");
        if let (Some(name), Some(at)) = (&name, map.get_node("name"))
            && !crate::protocol::registry::is_snake_case(name)
        {
            self.expected(
                at,
                &child(path, "name"),
                "is not a valid operation name",
                "^[a-z][a-z0-9_]*$",
            );
        }
        let maps_to = self.non_empty(node, map, path, "maps_to");
        let mapping = maps_to.and_then(|text| {
            let at = map.get_node("maps_to").unwrap_or(node);
            match parse_maps_to(&text) {
                Ok(mapping) => Some(mapping),
                Err(problem) => {
                    self.expected(
                        at,
                        &child(path, "maps_to"),
                        problem,
                        "\"METHOD /path/{param}\" with METHOD one of GET, POST, PUT, PATCH, DELETE",
                    );
                    None
                }
            }
        });
        let description = self.string(node, map, path, "description", false).unwrap_or_default();
        let requires_confirmation =
            self.boolean(map, path, "requires_confirmation").unwrap_or(false);
        let non_idempotent = self.boolean(map, path, "non_idempotent").unwrap_or(false);
        let (explicit_danger, danger_reasons) = self.danger(node, map, path);
        let pagination = map
            .get_node("pagination")
            .and_then(|at| self.pagination(at, &child(path, "pagination")));
        let response_schema = map
            .get_node("response")
            .and_then(|at| self.response_schema(at, &child(path, "response")));
        let mapping = mapping?;
        let params = match map.get_node("params") {
            Some(at) => self.params(at, &child(path, "params"), &mapping, pagination.is_some())?,
            None => Vec::new(),
        };
        for placeholder in &mapping.placeholders {
            if !params.iter().any(|p| &p.name == placeholder) {
                let at = map.get_node("maps_to").unwrap_or(node);
                self.error(
                    at,
                    &child(path, "maps_to"),
                    format!(
                        "placeholder {{{placeholder}}} names no parameter; declare it under params"
                    ),
                );
            }
        }
        let name = name?;
        let danger = explicit_danger.unwrap_or_else(|| DangerLevel::classify(category, &name));
        Some(OperationDefinition {
            name,
            category,
            method: mapping.method,
            path: mapping.path,
            fixed_query: mapping.query,
            description,
            params,
            danger,
            danger_reasons,
            requires_confirmation,
            non_idempotent,
            pagination,
            response_schema,
        })
    }

    /// `response.schema`: the JSON Schema of a 200 or 201 answer's body,
    /// written as YAML (`type`, `description` and other keys of `response`
    /// are the spec's free-form notes).
    fn response_schema(&mut self, node: &Node, path: &str) -> Option<Arc<LazySchema>> {
        let map = self.mapping(node, path)?;
        let at = map.get_node("schema")?;
        match yaml::to_json(at) {
            Ok(schema @ (Value::Object(_) | Value::Bool(_))) => {
                Some(Arc::new(LazySchema::new(schema)))
            }
            _ => {
                self.expected(at, &child(path, "schema"), "must be a JSON Schema", "a mapping");
                None
            }
        }
    }

    /// `danger_level: X` or `danger: {level: X, reasons: [...]}`; an
    /// explicit level overrides the name patterns (`danger-levels.md` 5.3).
    fn danger(
        &mut self,
        node: &Node,
        map: &MarkedMappingNode,
        path: &str,
    ) -> (Option<DangerLevel>, Vec<String>) {
        let short = map
            .get_node("danger_level")
            .and_then(|at| self.danger_level(at, &child(path, "danger_level")));
        let Some(block) = map.get_node("danger") else { return (short, Vec::new()) };
        let block_path = child(path, "danger");
        let Some(block_map) = self.mapping(block, &block_path) else { return (short, Vec::new()) };
        self.keys(block_map, &block_path, &DANGER_KEYS, true);
        let level = match block_map.get_node("level") {
            Some(at) => self.danger_level(at, &child(&block_path, "level")),
            None => {
                self.missing(block, &child(&block_path, "level"), "a danger level");
                None
            }
        };
        let reasons = match block_map.get_node("reasons").map(yaml::to_json) {
            Some(Ok(Value::Array(items))) if items.iter().all(Value::is_string) => {
                items.into_iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
            }
            Some(_) => {
                let at = block_map.get_node("reasons").unwrap_or(block);
                self.expected(
                    at,
                    &child(&block_path, "reasons"),
                    "must be a list of strings",
                    "a list of strings",
                );
                Vec::new()
            }
            None => Vec::new(),
        };
        if let (Some(a), Some(b)) = (short, level)
            && a != b
        {
            self.error(
                node,
                path,
                format!("danger_level '{}' and danger.level '{}' disagree", a.name(), b.name()),
            );
        }
        (level.or(short), reasons)
    }

    fn danger_level(&mut self, node: &Node, path: &str) -> Option<DangerLevel> {
        let parsed = match node {
            Node::Scalar(s) => DangerLevel::parse(s.as_str()),
            _ => None,
        };
        if parsed.is_none() {
            self.expected(
                node,
                path,
                "unknown danger level",
                "safe, reversible, destructive, dangerous or forbidden",
            );
        }
        parsed
    }

    fn pagination(&mut self, node: &Node, path: &str) -> Option<Pagination> {
        let map = self.mapping(node, path)?;
        self.keys(map, path, &PAGINATION_KEYS, true);
        let style_name = self.string(node, map, path, "style", true)?;
        let dotted = |text: Option<String>| {
            text.map(|t| t.split('.').map(str::to_owned).collect::<Vec<_>>()).unwrap_or_default()
        };
        let items_field = dotted(self.string(node, map, path, "items_field", false));
        let max_pages = self.count(map, path, "max_pages", DEFAULT_MAX_PAGES, 1..=1_000);
        let style = match style_name.as_str() {
            "link_header" => PageStyle::LinkHeader,
            "cursor" => {
                let param = self.non_empty(node, map, path, "cursor_param");
                let next = self.non_empty(node, map, path, "next_cursor_field");
                PageStyle::Cursor { param: param?, next_field: dotted(next) }
            }
            "offset" => PageStyle::Offset {
                offset_param: self
                    .string(node, map, path, "offset_param", false)
                    .unwrap_or_else(|| "offset".into()),
                limit_param: self
                    .string(node, map, path, "limit_param", false)
                    .unwrap_or_else(|| "limit".into()),
            },
            other => {
                let at = map.get_node("style").unwrap_or(node);
                self.expected(
                    at,
                    &child(path, "style"),
                    format!("unsupported pagination style '{other}'"),
                    "link_header, cursor or offset",
                );
                return None;
            }
        };
        Some(Pagination {
            style,
            items_field,
            max_pages: u32::try_from(max_pages).unwrap_or(1_000),
        })
    }

    fn params(
        &mut self,
        node: &Node,
        path: &str,
        mapping: &MapsTo,
        paginated: bool,
    ) -> Option<Vec<ParamDefinition>> {
        let map = match node {
            Node::Scalar(s) if s.may_coerce() && s.as_str().is_empty() => return Some(Vec::new()),
            other => self.mapping(other, path)?,
        };
        let mut params = Vec::new();
        let mut ok = true;
        for (key, value) in map.iter() {
            let param_path = child(path, key.as_str());
            match self.param(key.as_str(), value, &param_path, mapping, paginated) {
                Some(param) => params.push(param),
                None => ok = false,
            }
        }
        let raw_bodies = params.iter().filter(|p| p.location == Location::RawBody).count();
        let body_keys = params.iter().filter(|p| p.location == Location::Body).count();
        if raw_bodies > 1 || (raw_bodies == 1 && body_keys > 0) {
            self.error(node, path, "a raw_body parameter is the whole body: it cannot be combined with another raw_body or body parameter");
            ok = false;
        }
        ok.then_some(params)
    }

    fn param(
        &mut self,
        name: &str,
        node: &Node,
        path: &str,
        mapping: &MapsTo,
        paginated: bool,
    ) -> Option<ParamDefinition> {
        if !param_name_ok(name) {
            self.expected(
                node,
                path,
                "is not a valid parameter name",
                "letters, digits and '_', starting with a letter",
            );
            return None;
        }
        if paginated && PAGING_PARAMS.contains(&name) {
            self.error(
                node,
                path,
                format!("'{name}' is reserved on paginated operations (the runtime adds it)"),
            );
            return None;
        }
        let map = self.mapping(node, path)?;
        self.keys(map, path, &PARAM_KEYS, true);
        let type_name = self.string(node, map, path, "type", true)?;
        let Some(ty) = param_type(&type_name) else {
            let at = map.get_node("type").unwrap_or(node);
            self.expected(
                at,
                &child(path, "type"),
                "unknown parameter type",
                "string, integer, number, boolean, array, object or any",
            );
            return None;
        };
        let required = self.boolean(map, path, "required").unwrap_or(false);
        let description = self.string(node, map, path, "description", false).unwrap_or_default();
        let default = match map.get_node("default") {
            Some(at) => Some(self.typed_value(at, &child(path, "default"), ty)?),
            None => None,
        };
        let allowed = match map.get_node("enum") {
            Some(at) => Some(self.allowed_values(at, &child(path, "enum"), ty)?),
            None => None,
        };
        if let (Some(default), Some(allowed), Some(at)) =
            (&default, &allowed, map.get_node("default"))
            && !allowed.contains(default)
        {
            self.expected(
                at,
                &child(path, "default"),
                "is not one of the enum values",
                "a value listed under enum",
            );
            return None;
        }
        let location = self.location(node, map, path, name, mapping)?;
        if location == Location::Path && !required && default.is_none() {
            self.error(
                node,
                path,
                "a path parameter must be required or have a default (a URL cannot leave it out)",
            );
            return None;
        }
        let wire_name = match map.get_node("wire_name") {
            Some(_) => self.non_empty(node, map, path, "wire_name")?,
            None => name.to_owned(),
        };
        if location == Location::Header
            && (!header_name_ok(&wire_name)
                || wire_name.eq_ignore_ascii_case("authorization")
                || wire_name.eq_ignore_ascii_case("host"))
        {
            self.expected(
                node,
                path,
                "cannot be sent as a header",
                "a header name other than Authorization and Host",
            );
            return None;
        }
        if wire_name.chars().any(char::is_control) {
            self.expected(
                node,
                &child(path, "wire_name"),
                "contains control characters",
                "printable text",
            );
            return None;
        }
        Some(ParamDefinition {
            name: name.to_owned(),
            wire_name,
            ty,
            required,
            description,
            default,
            allowed,
            location,
        })
    }

    fn location(
        &mut self,
        node: &Node,
        map: &MarkedMappingNode,
        path: &str,
        name: &str,
        mapping: &MapsTo,
    ) -> Option<Location> {
        let in_template = mapping.placeholders.iter().any(|p| p == name);
        let declared = match map.get_node("in") {
            Some(at) => {
                let text = self.string(node, map, path, "in", true)?;
                let Some(location) = Location::parse(&text) else {
                    self.expected(
                        at,
                        &child(path, "in"),
                        "unknown parameter location",
                        "path, query, header, body or raw_body",
                    );
                    return None;
                };
                Some(location)
            }
            None => None,
        };
        let location = match declared {
            Some(location) => location,
            None if in_template => Location::Path,
            None if mapping.method.has_body() => Location::Body,
            None => Location::Query,
        };
        let problem = match location {
            Location::Path if !in_template => {
                Some(format!("is declared in: path but maps_to has no {{{name}}} placeholder"))
            }
            other if other != Location::Path && in_template => Some(format!(
                "maps_to has a {{{name}}} placeholder, so it must be a path parameter"
            )),
            // DELETE may carry a body when declared (GitHub's API has
            // such operations); GET may not.
            Location::Body | Location::RawBody if mapping.method == Method::Get => {
                Some("GET requests carry no body".to_owned())
            }
            _ => None,
        };
        match problem {
            Some(problem) => {
                self.error(node, path, problem);
                None
            }
            None => Some(location),
        }
    }

    fn typed_value(&mut self, node: &Node, path: &str, ty: ParamType) -> Option<Value> {
        let value = match yaml::to_json(node) {
            Ok(value) => value,
            Err(at) => {
                let message = format!("{path}: nested more than {} levels deep", yaml::MAX_DEPTH);
                self.errors.push(self.diagnostic(at, message));
                return None;
            }
        };
        if ty.admits(&value) {
            Some(value)
        } else {
            self.expected(
                node,
                path,
                "does not match the parameter's type",
                &format!("a value of type {}", ty.name()),
            );
            None
        }
    }

    fn allowed_values(&mut self, node: &Node, path: &str, ty: ParamType) -> Option<Vec<Value>> {
        let Node::Sequence(items) = node else {
            self.expected(node, path, "must be a list of allowed values", "a non-empty list");
            return None;
        };
        if items.is_empty() {
            self.expected(node, path, "must not be empty", "a non-empty list");
            return None;
        }
        let mut values = Vec::new();
        for (index, item) in items.iter().enumerate() {
            values.push(self.typed_value(item, &format!("{path}[{index}]"), ty)?);
        }
        Some(values)
    }
}

/// A plain scalar's typed value; `None` for anything else.
fn yaml_scalar(node: &Node) -> Option<Value> {
    match node {
        Node::Scalar(s) => Some(yaml::scalar_value(s)),
        _ => None,
    }
}

fn param_type(name: &str) -> Option<ParamType> {
    use ParamType as T;
    [T::String, T::Integer, T::Number, T::Boolean, T::Array, T::Object, T::Any]
        .into_iter()
        .find(|t| t.name() == name)
}

/// `maps_to` taken apart.
struct MapsTo {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    placeholders: Vec<String>,
}

fn parse_maps_to(text: &str) -> Result<MapsTo, String> {
    let (method, target) =
        text.trim().split_once(' ').ok_or("must be a method and a path separated by a space")?;
    let method = Method::parse(method).ok_or_else(|| format!("unsupported method '{method}'"))?;
    let target = target.trim();
    if !target.starts_with('/') {
        return Err("the path must start with '/'".into());
    }
    if target.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the path must not contain spaces or control characters".into());
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut placeholders: Vec<String> = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find(['{', '}']) {
        if rest.get(open..).unwrap_or_default().starts_with('}') {
            return Err("unbalanced '}' in the path".into());
        }
        let after = rest.get(open + 1..).unwrap_or_default();
        let close = after.find('}').ok_or("unclosed '{' in the path")?;
        let name = after.get(..close).unwrap_or_default();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("placeholder '{{{name}}}' must be a parameter name"));
        }
        if placeholders.iter().any(|p| p == name) {
            return Err(format!("placeholder '{{{name}}}' appears twice"));
        }
        placeholders.push(name.to_owned());
        rest = after.get(close + 1..).unwrap_or_default();
    }
    let query = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key.to_owned(), value.to_owned())
        })
        .collect();
    Ok(MapsTo { method, path: path.to_owned(), query, placeholders })
}

fn adapter_name_ok(name: &str) -> bool {
    (2..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn param_name_ok(name: &str) -> bool {
    name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn env_name_ok(name: &str) -> bool {
    !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// RFC 9110 token characters.
pub fn header_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

fn is_semver(text: &str) -> bool {
    let (core, _build) = text.split_once('+').unwrap_or((text, ""));
    let (core, pre) = core.split_once('-').map_or((core, None), |(c, p)| (c, Some(p)));
    let numbers: Vec<&str> = core.split('.').collect();
    let number_ok = |n: &&str| {
        !n.is_empty()
            && n.chars().all(|c| c.is_ascii_digit())
            && (n.len() == 1 || !n.starts_with('0'))
    };
    numbers.len() == 3
        && numbers.iter().all(number_ok)
        && pre.is_none_or(|p| {
            !p.is_empty()
                && p.split('.').all(|id| {
                    !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        })
}

/// Plain HTTP is allowed for these hosts only (element-type 5.2).
pub fn is_loopback(url: &Url) -> bool {
    match url.host_str() {
        Some("localhost" | "[::1]") => true,
        Some(host) => host.parse::<std::net::Ipv4Addr>().is_ok_and(|ip| ip.is_loopback()),
        None => false,
    }
}
