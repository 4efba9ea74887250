//! Adapter files (`*-adapter.md`): YAML front matter that maps MCP-AQL
//! operations onto an HTTP API, and a Markdown body kept as documentation
//! (`adapter/element-type.md`, runtime seed sections 3 and 4).
//!
//! Loading is parse, don't validate: [`load_file`] either returns a whole
//! [`AdapterDefinition`], in which every field has been checked and every
//! default applied, or every error it found, each with its JSON path
//! (`operations.read[0].params.owner`) and its `file:line:col`. Unknown
//! top-level keys are warnings; unknown keys anywhere else are errors, so a
//! misspelled limit or auth field can never be silently ignored.

mod front_matter;
mod validate;

use crate::names::named_enum;
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use reqwest::Url;
use serde_json::Value;

use crate::{
    adapter::{json_schema::LazySchema, retry::RetryPolicy},
    diagnostics::{Diagnostic, SourceFile},
    protocol::{error::LimitWindow, params::ParamType, registry::Category},
};

use crate::gate::{danger::DangerLevel, trust::TrustLevel};

/// The file name every adapter file has.
pub const FILE_SUFFIX: &str = "-adapter.md";
/// Front matter larger than this is refused before parsing.
pub const MAX_FRONT_MATTER_BYTES: usize = 16 * 1024 * 1024;

/// One validated adapter.
#[derive(Debug, Clone)]
pub struct AdapterDefinition {
    /// The adapter's name as written (`github-api`).
    pub name: String,
    /// The prefix of its operation names: the name with `-` as `_`
    /// (`github_api__get_repo`), since operation names are snake_case.
    pub prefix: String,
    pub version: String,
    pub description: String,
    pub target: Target,
    pub auth: Auth,
    /// `None` when the file declares no trust level: no trust gating.
    pub trust: Option<TrustLevel>,
    pub rate_limits: Vec<RateLimit>,
    pub operations: Vec<OperationDefinition>,
    /// The Markdown body after the front matter.
    pub documentation: String,
    pub file: PathBuf,
}

#[derive(Debug, Clone)]
pub struct Target {
    /// Without a trailing slash; a path prefix (`/v1`) is kept.
    pub base_url: Url,
    pub timeout: Duration,
    /// Retries of idempotent requests after a transport failure, 429 or
    /// 502/503/504 (`max_retries`, `retry_base_ms`).
    pub retry: RetryPolicy,
    pub max_response_bytes: usize,
}

/// How requests authenticate. Secrets are named by environment variable
/// only, read at call time, never stored in the definition.
#[derive(Debug, Clone, PartialEq)]
pub enum Auth {
    None,
    Bearer { token_env: String },
    ApiKey { key_env: String, place: KeyPlace },
    Basic { username_env: String, password_env: String },
}

/// Where an API key travels, by the name the API expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlace {
    Header(String),
    Query(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "GET" => Some(Self::Get),
            "POST" => Some(Self::Post),
            "PUT" => Some(Self::Put),
            "PATCH" => Some(Self::Patch),
            "DELETE" => Some(Self::Delete),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }

    /// Whether leftover parameters travel in a JSON body (seed 000 6.4).
    pub fn has_body(self) -> bool {
        matches!(self, Self::Post | Self::Put | Self::Patch)
    }

    /// RFC 9110 9.2.2: repeating the request has the effect of sending it
    /// once, so it may be retried.
    pub fn idempotent(self) -> bool {
        matches!(self, Self::Get | Self::Put | Self::Delete)
    }
}

/// One operation of an adapter.
#[derive(Debug, Clone)]
pub struct OperationDefinition {
    /// The name in the file (`get_repo`).
    pub name: String,
    pub category: Category,
    pub method: Method,
    /// The path template after the base URL, placeholders `{param}` naming
    /// parameters.
    pub path: String,
    /// Fixed query pairs written in `maps_to` (`POST /sync?force=true`).
    pub fixed_query: Vec<(String, String)>,
    pub description: String,
    pub params: Vec<ParamDefinition>,
    pub danger: DangerLevel,
    pub danger_reasons: Vec<String>,
    /// `requires_confirmation: true`: a human approves every call.
    pub requires_confirmation: bool,
    /// `non_idempotent: true`: never retried, whatever the method.
    pub non_idempotent: bool,
    pub pagination: Option<Pagination>,
    /// `response.schema`: what a 200 or 201 answer's body must match, or
    /// the answer is withheld; compiled on the first call.
    pub response_schema: Option<Arc<LazySchema>>,
}

named_enum! {
    /// Where a parameter goes on the wire.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Location {
        Path => "path",
        Query => "query",
        Header => "header",
        /// A key of the JSON body object.
        Body => "body",
        /// The whole JSON body.
        RawBody => "raw_body",
    }
}

#[derive(Debug, Clone)]
pub struct ParamDefinition {
    pub name: String,
    /// The name sent on the wire (`wire_name`, else `name`).
    pub wire_name: String,
    pub ty: ParamType,
    pub required: bool,
    pub description: String,
    pub default: Option<Value>,
    pub allowed: Option<Vec<Value>>,
    pub location: Location,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Pagination {
    pub style: PageStyle,
    /// Where a page's items are in the response body (a dotted path);
    /// empty when the body is the array of items.
    pub items_field: Vec<String>,
    /// The most pages one `all_pages` call fetches.
    pub max_pages: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PageStyle {
    /// RFC 8288 `Link: <…>; rel="next"`.
    LinkHeader,
    /// The next cursor is read from `next_field` and sent as `param`.
    Cursor { param: String, next_field: Vec<String> },
    /// `offset_param` advances by the number of items received; a page
    /// shorter than `limit_param` ends the listing.
    Offset { offset_param: String, limit_param: String },
}

/// One counted limit of an adapter's request rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub window: RateWindow,
    pub threshold: u64,
    pub kind: LimitKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RateWindow {
    Minute,
    Hour,
    Day,
}

impl RateWindow {
    pub fn metric(self) -> &'static str {
        match self {
            Self::Minute => "requests_per_minute",
            Self::Hour => "requests_per_hour",
            Self::Day => "requests_per_day",
        }
    }

    pub fn parse_metric(text: &str) -> Option<Self> {
        [Self::Minute, Self::Hour, Self::Day].into_iter().find(|w| w.metric() == text)
    }

    pub fn length(self) -> Duration {
        Duration::from_secs(match self {
            Self::Minute => 60,
            Self::Hour => 3_600,
            Self::Day => 86_400,
        })
    }

    /// The window as an error's details name it.
    pub fn window(self) -> LimitWindow {
        match self {
            Self::Minute => LimitWindow::Minute,
            Self::Hour => LimitWindow::Hour,
            Self::Day => LimitWindow::Day,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// The API's own limit (`requests_per_minute: 60`): refused before
    /// sending with `RATE_LIMIT_EXCEEDED`.
    ApiLimit,
    /// A quota's `warn`: the call goes ahead with a
    /// `RATE_LIMIT_QUOTA_WARNING`.
    QuotaWarn,
    /// A quota's `hard_stop`: refused with `RATE_LIMIT_QUOTA_EXHAUSTED`.
    QuotaStop,
}

/// A loaded adapter and the warnings its file produced.
#[derive(Debug)]
pub struct Loaded {
    pub definition: AdapterDefinition,
    pub warnings: Vec<Diagnostic>,
}

/// Loads and validates one adapter file. Like a config or policy file, it
/// is refused when group or others can write it: it decides where the
/// adapter's credentials are sent and how dangerous each operation is.
pub fn load_file(path: &Path) -> Result<Loaded, Vec<Diagnostic>> {
    crate::config::refuse_unsafe_permissions(path).map_err(|d| vec![d])?;
    let source = SourceFile::read(path).map_err(|d| vec![d])?;
    parse(&source)
}

/// Validates an adapter file's text; `source.path` names it in errors.
pub fn parse(source: &SourceFile) -> Result<Loaded, Vec<Diagnostic>> {
    let parts = front_matter::split(source)?;
    validate::definition(source, &parts)
}

/// The adapter files named by config entries: files as given, folders
/// scanned (not recursively) for `*-adapter.md`, in name order. A named
/// path that does not exist is an error, not an empty set.
pub fn discover(entries: &[PathBuf]) -> Result<Vec<PathBuf>, Vec<Diagnostic>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for entry in entries {
        if entry.is_dir() {
            match std::fs::read_dir(entry) {
                Ok(listing) => {
                    let mut found: Vec<PathBuf> = listing
                        .filter_map(Result::ok)
                        .map(|e| e.path())
                        .filter(|p| {
                            p.is_file()
                                && p.file_name()
                                    .and_then(|n| n.to_str())
                                    .is_some_and(|n| n.ends_with(FILE_SUFFIX))
                        })
                        .collect();
                    found.sort();
                    files.extend(found);
                }
                Err(error) => errors.push(Diagnostic::whole_file(
                    entry,
                    format!(
                        "cannot list adapter folder: {}",
                        crate::diagnostics::io_reason(&error)
                    ),
                )),
            }
        } else if entry.is_file() {
            files.push(entry.clone());
        } else {
            errors.push(Diagnostic::whole_file(entry, "no such adapter file or folder"));
        }
    }
    if errors.is_empty() { Ok(files) } else { Err(errors) }
}

/// Loads every adapter the config names. Any error in any file fails the
/// whole set (fail fast: a half-loaded set would silently lack operations),
/// and so do two adapters with the same name.
pub fn load_all(entries: &[PathBuf]) -> Result<Vec<Loaded>, Vec<Diagnostic>> {
    let files = discover(entries)?;
    let mut loaded = Vec::new();
    let mut errors = Vec::new();
    for file in &files {
        match load_file(file) {
            Ok(adapter) => loaded.push(adapter),
            Err(found) => errors.extend(found),
        }
    }
    let mut seen: BTreeMap<&str, &Path> = BTreeMap::new();
    for adapter in &loaded {
        let definition = &adapter.definition;
        if let Some(first) = seen.insert(&definition.name, &definition.file) {
            errors.push(Diagnostic::whole_file(
                &definition.file,
                format!(
                    "name: adapter '{}' is already loaded from {}",
                    definition.name,
                    first.display()
                ),
            ));
        }
    }
    if errors.is_empty() { Ok(loaded) } else { Err(errors) }
}

#[cfg(test)]
mod robustness {
    use proptest::prelude::*;

    use super::*;

    fn check(text: String) -> Result<(), TestCaseError> {
        let source = SourceFile::new("fuzz-adapter.md", text);
        match parse(&source) {
            Ok(loaded) => prop_assert!(!loaded.definition.name.is_empty()),
            Err(errors) => {
                prop_assert!(!errors.is_empty(), "a refusal names at least one error");
                for error in errors {
                    prop_assert!(
                        error.line >= 1 && error.col >= 1 && !error.message.is_empty(),
                        "{error:?}"
                    );
                }
            }
        }
        Ok(())
    }

    /// The public GitHub example, which the mutations start from.
    fn example() -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/spec/examples/github-api-adapter.md");
        std::fs::read_to_string(path).unwrap_or_else(|_| "---\nname: x\n---\n".into())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Arbitrary front matter: always an answer, never a panic.
        #[test]
        fn arbitrary_front_matter_is_answered(yaml in "(\\PC|[\n\t:{}\\[\\]&*!|>'\"#-]){0,300}") {
            check(format!("---\n{yaml}\n---\nbody\n"))?;
        }

        /// A real adapter with bytes replaced, inserted or removed.
        #[test]
        fn mutated_adapters_are_answered(edits in proptest::collection::vec((0usize..16_000, any::<u8>(), 0u8..3), 1..8)) {
            let mut bytes = example().into_bytes();
            for (position, byte, kind) in edits {
                let at = position % (bytes.len() + 1);
                match kind {
                    0 if at < bytes.len() => bytes[at] = byte,
                    1 => bytes.insert(at, byte),
                    _ if at < bytes.len() => { bytes.remove(at); }
                    _ => {}
                }
            }
            check(String::from_utf8_lossy(&bytes).into_owned())?;
        }
    }
}
