//! The operation registry: every operation the server offers, by name, with
//! its semantic category, parameters and handler.
//!
//! Operations are data plus a handler object, so built-in operations and
//! those loaded at run time (adapters, downstream servers) register the same
//! way and pass through the same validation and routing. Registration
//! rejects duplicate and malformed names, so every operation is reachable
//! through exactly one semantic endpoint and through `mcp_aql`.

use crate::names::named_enum;
use std::{
    collections::BTreeMap,
    fmt,
    future::Future,
    pin::Pin,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::analysis::WorkingFolder;

use super::{
    error::AqlError,
    params::ParamSpec,
    request::Params,
    router::Router,
    selection::FieldPresets,
    types::{TypeDef, protocol_types},
};

named_enum! {
    /// The five standard semantic categories (spec 6.1).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Category {
        Create => "CREATE",
        Read => "READ",
        Update => "UPDATE",
        Delete => "DELETE",
        Execute => "EXECUTE",
    }
}

impl Category {
    /// The lowercase endpoint-family name of the CRUDE profile.
    pub fn family(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Read => "read",
            Self::Update => "update",
            Self::Delete => "delete",
            Self::Execute => "execute",
        }
    }

    pub fn read_only(self) -> bool {
        self == Self::Read
    }

    /// Spec 6.1: UPDATE, DELETE and EXECUTE may destroy state.
    pub fn destructive(self) -> bool {
        matches!(self, Self::Update | Self::Delete | Self::Execute)
    }
}

/// The return type of an operation, as introspection's `TypeInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReturnType {
    pub name: &'static str,
    pub kind: &'static str,
    pub description: &'static str,
}

/// The execution lifecycle an operation manages (spec 8.4.5), as
/// introspection's `lifecycle`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    /// The states its executions pass through.
    pub states: Vec<&'static str>,
    pub supports_cancel: bool,
    /// Whether a failed execution can run again.
    pub supports_retry: bool,
    /// Whether it sends progress while it runs.
    pub progress_reporting: bool,
}

impl Lifecycle {
    /// `LifecycleInfo`.
    pub fn info(&self) -> Value {
        json!({
            "states": self.states,
            "supports_cancel": self.supports_cancel,
            "supports_retry": self.supports_retry,
            "progress_reporting": self.progress_reporting,
        })
    }
}

/// Everything introspection and validation need to know about an operation.
#[derive(Debug, Clone)]
pub struct OperationSpec {
    pub name: String,
    pub category: Category,
    pub description: String,
    pub params: Vec<ParamSpec>,
    pub returns: ReturnType,
    /// Example `params` objects, shown by introspection as full requests.
    pub examples: Vec<(String, Value)>,
    /// The adapter or downstream server the operation comes from; `None`
    /// for the server's own operations.
    pub source: Option<String>,
    /// Where the operation comes from, for its details: `adapter 'x', GET
    /// /path` or `downstream server 'y', tool 'z'`. Lists leave it out
    /// (their descriptions are brief; the name's prefix names the source).
    pub origin: Option<String>,
    /// The danger level its calls are judged at (`adapter/danger-levels.md`);
    /// `None` for the server's own operations, which the loop judges.
    pub danger_level: Option<&'static str>,
    /// The execution lifecycle it manages, if it manages one.
    pub lifecycle: Option<Lifecycle>,
    /// What field selection keeps of its answers.
    pub field_presets: FieldPresets,
}

impl OperationSpec {
    /// The parameter `key` names, by its name or an alias.
    pub fn param(&self, key: &str) -> Option<&ParamSpec> {
        self.params.iter().find(|p| p.is_named(key))
    }

    /// The description with where the operation comes from and its danger
    /// level, as details show it: `Get a repository [adapter 'github-api',
    /// GET /repos/{owner}/{repo}; danger_level: safe]`.
    pub fn detailed_description(&self) -> String {
        let notes: Vec<String> = self
            .origin
            .iter()
            .cloned()
            .chain(self.danger_level.map(|level| format!("danger_level: {level}")))
            .collect();
        match notes.as_slice() {
            [] => self.description.clone(),
            notes => format!("{} [{}]", self.description, notes.join("; ")).trim_start().to_owned(),
        }
    }

    /// A minimal call: the required parameters with example values, for
    /// an operation nobody wrote examples for.
    pub fn minimal_example(&self) -> (String, Value) {
        let params: Map<String, Value> = self
            .params
            .iter()
            .filter(|p| p.required)
            .map(|p| (p.name.clone(), p.example_value()))
            .collect();
        let description = if params.is_empty() {
            "A call with no parameters (none is required)"
        } else {
            "A minimal call: the required parameters (replace the <placeholders>)"
        };
        (description.into(), Value::Object(params))
    }

    pub fn example_requests(&self) -> Vec<Value> {
        self.examples
            .iter()
            .map(|(description, params)| {
                json!({
                    "description": description,
                    "request": { "operation": self.name, "params": params },
                })
            })
            .collect()
    }
}

/// What an operation handler returns: the `data` of a success envelope, or
/// the error to report.
pub type OperationResult = Result<Value, AqlError>;
pub type OperationFuture<'a> = Pin<Box<dyn Future<Output = OperationResult> + Send + 'a>>;

/// One progress report of a long call (MCP `notifications/progress`).
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Where a call's progress goes: back to the client that asked for it.
pub trait ProgressSink: Send + Sync {
    fn report(&self, update: Progress) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>>;
}

/// Non-fatal conditions a call met on its way (a rate-limit quota
/// nearing its end), reported in the success envelope's `warnings` array
/// (`features/warnings.md`). Shared by clones of one call's context.
#[derive(Clone, Default)]
pub struct Warnings(Arc<Mutex<Vec<Value>>>);

impl Warnings {
    pub fn push(&self, code: &str, message: impl Into<String>, details: Value) {
        let warning = json!({ "code": code, "message": message.into(), "details": details });
        // A poisoned list still holds whole warnings: each push is one call.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(warning);
    }

    pub fn take(&self) -> Vec<Value> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }
}

/// Raised by an operation whose success still tells the agent not to go
/// on (a directive with `continue: false`), so a batch halts there as it
/// does at a refusal. Shared by clones of one call's context.
#[derive(Clone, Default)]
pub struct HaltSignal(Arc<AtomicBool>);

impl HaltSignal {
    pub fn raise(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn raised(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Who is calling: facts about the MCP connection a request came through,
/// established by the server, never taken from the request.
#[derive(Clone)]
pub struct CallContext {
    /// Generated when the MCP session starts; one per connection.
    pub session_id: String,
    /// The client's own name from `initialize` (`clientInfo.name`).
    pub client: Option<String>,
    /// Set when the client asked for progress reports on this request.
    pub progress: Option<Arc<dyn ProgressSink>>,
    /// Cancelled when the client gives up on this request.
    pub cancelled: CancellationToken,
    /// Where the call's warnings collect.
    pub warnings: Warnings,
    /// Raised when the call's answer tells the agent to stop.
    pub halt: HaltSignal,
    /// Where the action runs, when the client says (a hook's `cwd`); MCP
    /// sessions leave it to relative paths.
    pub working_folder: WorkingFolder,
    /// When this request must have answered, at the latest, because its
    /// client is likely to give up on it soon after: every wait for anyone
    /// (a human) while serving it, a batch's items' together, ends by
    /// then. `None`: only the configured waits bound them (a hook, whose
    /// own deadline bounds those; the demo).
    pub answer_by: Option<tokio::time::Instant>,
}

impl CallContext {
    /// A context for `session_id` with no client name, no progress
    /// reporting, a cancellation nobody triggers and no warnings yet.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            client: None,
            progress: None,
            cancelled: CancellationToken::new(),
            warnings: Warnings::default(),
            halt: HaltSignal::default(),
            working_folder: WorkingFolder::Project,
            answer_by: None,
        }
    }

    /// `wait`, or less when this request must answer sooner
    /// ([`CallContext::answer_by`]).
    pub fn wait_within_answer_time(&self, wait: Duration) -> Duration {
        self.answer_by
            .map_or(wait, |by| wait.min(by.saturating_duration_since(tokio::time::Instant::now())))
    }

    /// Runs `work`, telling the client how it goes every `every` while it
    /// waits, when the client asked for progress and has not given up on
    /// the request; `describe` makes a report from the time elapsed. The
    /// first report goes out as soon as `work` has to wait, none when it
    /// finishes at once.
    pub async fn reporting_progress<T>(
        &self,
        work: impl Future<Output = T>,
        every: Duration,
        describe: impl Fn(Duration) -> Progress,
    ) -> T {
        let Some(sink) = &self.progress else { return work.await };
        tokio::pin!(work);
        let started = tokio::time::Instant::now();
        let mut ticks = tokio::time::interval_at(started + every, every);
        // Reports stay at least `every` apart after a stall, so the whole
        // seconds they count keep increasing.
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut told_it_waits = false;
        loop {
            let listening = !self.cancelled.is_cancelled();
            tokio::select! {
                biased;
                done = &mut work => return done,
                () = std::future::ready(()), if listening && !told_it_waits => {
                    told_it_waits = true;
                    sink.report(describe(started.elapsed())).await;
                }
                _ = ticks.tick(), if listening => sink.report(describe(started.elapsed())).await,
            }
        }
    }

    /// The context of one item of a batch: the same caller, with a halt
    /// signal of its own.
    pub fn for_batch_item(&self) -> Self {
        Self { halt: HaltSignal::default(), ..self.clone() }
    }
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("session_id", &self.session_id)
            .field("client", &self.client)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// A handler for one operation. Its parameters arrive already validated
/// against its spec, with defaults applied.
pub trait Operation: Send + Sync {
    fn spec(&self) -> &OperationSpec;
    fn invoke<'a>(
        &'a self,
        router: &'a Router,
        call: &'a CallContext,
        params: Params,
    ) -> OperationFuture<'a>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryError {
    Duplicate(String),
    BadName(String),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Duplicate(name) => write!(f, "operation '{name}' is registered twice"),
            Self::BadName(name) => {
                write!(f, "operation name '{name}' does not match ^[a-z][a-z0-9_]*$")
            }
        }
    }
}

impl std::error::Error for RegistryError {}

/// Operations and named types, iterated in name order so listings are
/// stable.
#[derive(Clone)]
pub struct Registry {
    operations: BTreeMap<String, Arc<dyn Operation>>,
    types: BTreeMap<&'static str, TypeDef>,
}

impl Default for Registry {
    /// An empty registry that already knows the protocol types.
    fn default() -> Self {
        Self {
            operations: BTreeMap::new(),
            types: protocol_types().into_iter().map(|t| (t.name, t)).collect(),
        }
    }
}

impl Registry {
    /// Adds a named type; a later definition of the same name replaces the
    /// earlier one, so a module can refine a protocol type.
    pub fn register_type(&mut self, def: TypeDef) {
        self.types.insert(def.name, def);
    }

    pub fn types(&self) -> impl Iterator<Item = &TypeDef> {
        self.types.values()
    }

    pub fn type_named(&self, name: &str) -> Option<&TypeDef> {
        self.types.get(name)
    }

    pub fn register(&mut self, operation: Arc<dyn Operation>) -> Result<(), RegistryError> {
        let name = operation.spec().name.clone();
        if !is_snake_case(&name) {
            return Err(RegistryError::BadName(name));
        }
        if self.operations.contains_key(&name) {
            return Err(RegistryError::Duplicate(name));
        }
        self.operations.insert(name, operation);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Operation>> {
        self.operations.get(name)
    }

    pub fn specs(&self) -> impl Iterator<Item = &OperationSpec> {
        self.operations.values().map(|op| op.spec())
    }

    /// Removes every operation that came from `source`.
    pub fn remove_source(&mut self, source: &str) {
        self.operations.retain(|_, op| op.spec().source.as_deref() != Some(source));
    }

    /// The names of the sources operations came from (adapters and
    /// downstream servers), each once, in order.
    pub fn sources(&self) -> Vec<&str> {
        let mut sources: Vec<&str> =
            self.specs().filter_map(|spec| spec.source.as_deref()).collect();
        sources.sort_unstable();
        sources.dedup();
        sources
    }

    /// Whether `other` holds the same operations in the same categories:
    /// what the endpoint tools describe.
    fn same_operations(&self, other: &Registry) -> bool {
        self.operations.len() == other.operations.len()
            && self
                .specs()
                .zip(other.specs())
                .all(|(mine, theirs)| mine.name == theirs.name && mine.category == theirs.category)
    }

    /// Names of the operations in one category, or all when `None`.
    pub fn names_in(&self, category: Option<Category>) -> Vec<&str> {
        self.specs()
            .filter(|spec| category.is_none_or(|c| spec.category == c))
            .map(|spec| spec.name.as_str())
            .collect()
    }
}

/// The spec's public naming rule, `^[a-z][a-z0-9_]*$` (section 4.3).
pub fn is_snake_case(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// How a source's name is compared: an adapter is named with `-`
/// (`github-api`) and its operations with `_` (`github_api__get_repo`),
/// so both spellings name it. No two sources share a key: their
/// operations' names would collide, and registration refuses that.
pub fn source_key(name: &str) -> String {
    name.replace('-', "_")
}

/// The operations in force, replaced whole when a source's operations
/// change (a downstream server started or changed its tools). Readers
/// take a snapshot, so a request sees one consistent registry. Each
/// replacement that adds, removes or moves an operation bumps a
/// generation that sessions watch ([`OperationIndex::changes`]), so they
/// can tell their clients the tools changed.
pub struct OperationIndex {
    current: RwLock<Arc<Registry>>,
    generation: watch::Sender<u64>,
}

impl OperationIndex {
    pub fn new(registry: Registry) -> Self {
        Self { current: RwLock::new(Arc::new(registry)), generation: watch::Sender::new(0) }
    }

    /// Sees each change of which operations exist, from now on.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    pub fn snapshot(&self) -> Arc<Registry> {
        // A poisoned lock still holds a whole registry: replacement is one
        // pointer store.
        self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// Applies `change` to a copy of the current registry and installs it.
    pub fn update(&self, change: impl FnOnce(&mut Registry)) {
        let _ = self.try_update(|registry| {
            change(registry);
            Ok::<(), std::convert::Infallible>(())
        });
    }

    /// Applies `change` to a copy of the current registry and installs it
    /// only if the change succeeds: readers see the old registry or the
    /// whole new one, never a half-made one.
    pub fn try_update<T, E>(
        &self,
        change: impl FnOnce(&mut Registry) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut current = self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut next = Registry::clone(&current);
        let done = change(&mut next)?;
        let changed = !next.same_operations(&current);
        *current = Arc::new(next);
        if changed {
            // Under the registry's lock, so the generation a watcher sees
            // is never older than the registry it then reads.
            self.generation.send_modify(|generation| *generation += 1);
        }
        Ok(done)
    }
}

/// Something that holds state per MCP session and lets go of it when the
/// session ends (spec 2.3.3).
pub trait SessionEnds: Send + Sync {
    /// `session` ended; `None`: every session of this process (it is
    /// exiting). May write the state store: call it off the async worker
    /// threads.
    fn session_ended(&self, session: Option<&str>);
}

/// Where a failure of the server's own while answering a request (a panic)
/// is recorded: the request is refused, and the log says so.
pub trait OwnFailures: Send + Sync {
    /// Answering `operation` (a batch: `batch`) for `call` failed.
    fn request_failed(&self, call: &CallContext, operation: &str);
}

/// What the server reports about itself as data in introspection's
/// `_protocol` (the safety loop's defaults), read when asked, so what it
/// says is what is in force now.
pub trait ServerFacts: Send + Sync {
    fn protocol_facts(&self) -> serde_json::Map<String, Value>;
}

/// Something that adds operations at run time and may need a moment to
/// discover them (a downstream server that is still starting).
pub trait OperationSource: Send + Sync {
    /// Resolves once the source's operations are in the index, or its
    /// first attempt to provide them has failed.
    fn ready(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// Operations that only describe themselves, for tests of what is said
/// about a registry.
#[cfg(test)]
pub mod testing {
    use std::sync::Arc;

    use super::*;
    use crate::protocol::selection::FieldPresets;

    /// An operation that answers what its function returns (or panics
    /// as it does).
    pub struct Scripted(pub OperationSpec, pub fn() -> OperationResult);

    impl Operation for Scripted {
        fn spec(&self) -> &OperationSpec {
            &self.0
        }

        fn invoke<'a>(
            &'a self,
            _router: &'a Router,
            _call: &'a CallContext,
            _params: Params,
        ) -> OperationFuture<'a> {
            let answer = self.1;
            Box::pin(async move { answer() })
        }
    }

    /// An inert `name` (it answers `{}`) in `category`, from `source`
    /// (`None`: built in).
    pub fn inert(name: &str, category: Category, source: Option<&str>) -> Arc<dyn Operation> {
        scripted(name, category, source, || Ok(json!({})))
    }

    /// `name` in `category`, from `source`, answering what `answer` returns.
    pub fn scripted(
        name: &str,
        category: Category,
        source: Option<&str>,
        answer: fn() -> OperationResult,
    ) -> Arc<dyn Operation> {
        Arc::new(Scripted(
            OperationSpec {
                name: name.into(),
                category,
                description: String::new(),
                params: Vec::new(),
                returns: ReturnType { name: "T", kind: "object", description: "" },
                examples: Vec::new(),
                source: source.map(str::to_owned),
                origin: None,
                danger_level: None,
                lifecycle: None,
                field_presets: FieldPresets::default(),
            },
            answer,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{testing::inert, *};

    #[test]
    fn the_generation_moves_only_when_which_operations_exist_changes() {
        let index = OperationIndex::new(Registry::default());
        let changes = index.changes();
        index.update(|registry| {
            registry.register(inert("api__get", Category::Read, Some("api"))).unwrap()
        });
        assert!(changes.has_changed().unwrap(), "an added operation is a change");
        let seen = *changes.borrow();
        let mut changes = index.changes();
        index.update(|registry| {
            registry.remove_source("api");
            registry.register(inert("api__get", Category::Read, Some("api"))).unwrap();
        });
        assert!(!changes.has_changed().unwrap(), "the same operations again are no change");
        let refused: Result<(), RegistryError> = index.try_update(|registry| {
            registry.register(inert("api__put", Category::Update, Some("api")))?;
            registry.register(inert("api__put", Category::Update, Some("api")))
        });
        assert!(
            refused.is_err() && !changes.has_changed().unwrap(),
            "a refused update changes nothing"
        );
        assert!(index.snapshot().get("api__put").is_none());
        index.update(|registry| {
            registry.remove_source("api");
            registry.register(inert("api__get", Category::Delete, Some("api"))).unwrap();
        });
        assert!(
            changes.has_changed().unwrap(),
            "an operation moved to another endpoint is a change"
        );
        assert_eq!(*changes.borrow_and_update(), seen + 1);
    }

    #[test]
    fn a_source_is_named_with_a_hyphen_or_an_underscore() {
        assert_eq!(source_key("github-api"), source_key("github_api"));
        assert_ne!(source_key("github-api"), source_key("gitlab-api"));
        let mut registry = Registry::default();
        for (name, source) in [("b__x", "b"), ("a_b__y", "a-b"), ("a_b__z", "a-b")] {
            registry.register(inert(name, Category::Read, Some(source))).unwrap();
        }
        registry.register(inert("introspect", Category::Read, None)).unwrap();
        assert_eq!(registry.sources(), ["a-b", "b"]);
    }

    /// Keeps every report a call sends.
    #[derive(Default)]
    struct Reports(Arc<Mutex<Vec<Progress>>>);

    impl ProgressSink for Reports {
        fn report(&self, update: Progress) -> Pin<Box<dyn Future<Output = ()> + Send + 'static>> {
            self.0.lock().unwrap().push(update);
            Box::pin(async {})
        }
    }

    fn reporting_call() -> (CallContext, Arc<Mutex<Vec<Progress>>>) {
        let reports = Reports::default();
        let kept = reports.0.clone();
        let mut call = CallContext::new("s");
        call.progress = Some(Arc::new(reports));
        (call, kept)
    }

    fn report_after(elapsed: Duration) -> Progress {
        Progress { progress: elapsed.as_secs_f64(), total: None, message: Some("waiting".into()) }
    }

    #[tokio::test]
    async fn progress_is_reported_as_soon_as_work_waits_and_never_when_it_does_not() {
        let (call, reports) = reporting_call();
        // Pending at its first poll, done at its second.
        let waits_once = tokio::task::yield_now();
        call.reporting_progress(waits_once, Duration::from_secs(3600), report_after).await;
        let sent = reports.lock().unwrap().clone();
        assert_eq!(sent.len(), 1, "one report while it waited: {sent:?}");
        assert!(
            sent[0].progress < 1.0 && sent[0].message.as_deref() == Some("waiting"),
            "the first report is at the start: {sent:?}"
        );

        let (call, reports) = reporting_call();
        assert_eq!(
            call.reporting_progress(async { 7 }, Duration::from_secs(3600), report_after).await,
            7
        );
        assert!(reports.lock().unwrap().is_empty(), "work done at once reports nothing");
    }

    #[tokio::test]
    async fn a_client_that_gave_up_hears_no_more_progress() {
        let (call, reports) = reporting_call();
        call.cancelled.cancel();
        call.reporting_progress(tokio::task::yield_now(), Duration::from_secs(3600), report_after)
            .await;
        assert!(reports.lock().unwrap().is_empty());
    }
}
