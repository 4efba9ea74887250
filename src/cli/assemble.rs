//! Everything a running dongle is made of, assembled from the
//! configuration: the state store, the compiled policy, the loop's shared
//! core, the gate, the adapters and downstream servers, and the router over
//! every operation. `serve`, `demo` and the hook start from here; an
//! [`AssembleError`] says, for the operator, which file or setting stopped
//! the start.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use tokio::sync::oneshot;

use serde_json::{Map, Value, json};

use super::reload::Reloader;
use crate::{
    adapter::{
        definition,
        error::AdapterError,
        http,
        mcp::{Downstreams, client_config},
    },
    config::{CentralPolicy, Config, STATE_PASSWORD_ENV, ServerSettings, StateLocation},
    diagnostics::Diagnostic,
    gate::Gate,
    policy::{CompiledPolicy, central::Central},
    protocol::{
        introspect::Introspect,
        limits::Limits,
        registry::{OperationIndex, OperationSource, Registry, RegistryError, SessionEnds},
        router::Router,
        surface::Surface,
    },
    safety::{
        core::LoopCore,
        executions::SafetyLoop,
        operations::{self, LoopFacts},
    },
    store::{Spool, Store, StoreError, audit},
    verify::{
        humans::{HumanSettings, Humans},
        link::VerifierLink,
    },
};

/// Why the dongle could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The policy files, every error located.
    #[error("{}", render(.0))]
    Policy(Vec<Diagnostic>),
    #[error("{}", render(.0))]
    AdapterFiles(Vec<Diagnostic>),
    #[error("{}", .0.join("\n"))]
    ClientConfig(Vec<String>),
    #[error("{}: adapter '{adapter}' and downstream server '{prefix}' would share the operation prefix '{prefix}__'; rename one", file.display())]
    SharedPrefix { file: PathBuf, adapter: String, prefix: String },
    #[error("{}: server '{name}' is also configured in [servers.{name}]; rename one", file.display())]
    ServerTwice { file: PathBuf, name: String },
    #[error(transparent)]
    Adapter(#[from] AdapterError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error("no data folder: this platform has none by default; pass --data-dir or set data_dir")]
    NoDataFolder,
    #[error("{}: the state password file {problem}", file.display())]
    StatePassword { file: PathBuf, problem: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().map(Diagnostic::render).collect::<Vec<_>>().join("\n")
}

/// What `serve` runs: the router, the downstream servers behind it, what
/// reloads them, and (when the policy is compiled after start-up) the
/// word that it was, or why it could not be.
pub struct Assembled {
    pub router: Arc<Router>,
    pub downstreams: Arc<Downstreams>,
    pub reloader: Arc<Reloader>,
    pub compiled: Option<oneshot::Receiver<Result<(), AssembleError>>>,
}

/// When the policy is compiled and the state opened: `Now`, before
/// anything else (a command that acts at once), or `Deferred`, beside the
/// first requests (a server: its client's `initialize` and `tools/list`
/// need neither, and every decision waits for both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    Now,
    Deferred,
}

/// Everything assembled over the configuration, and a runtime to run it
/// on; `None` (after saying why) means exit 1.
pub fn assemble_with_runtime(
    config: &Config,
    start: Start,
) -> Option<(Assembled, tokio::runtime::Runtime)> {
    let assembled =
        assemble(config, start).map_err(|message| eprintln!("safety-dongle: {message}")).ok()?;
    Some((assembled, super::runtime()?))
}

/// Everything `serve` needs, assembled from the configuration: the state
/// store, the compiled policy, the safety loop, the gate, the downstream
/// servers and the router over every operation. Errors are for the
/// operator, so they may name files; with [`Start::Deferred`], those of
/// the policy arrive through [`Assembled::compiled`].
pub fn assemble(config: &Config, start: Start) -> Result<Assembled, AssembleError> {
    let core = Arc::new(match start {
        Start::Now => build_loop_core(config)?,
        Start::Deferred => {
            let store = Arc::new(store_on_first_use(config)?);
            LoopCore::compiling(
                store.clone(),
                config.mode(),
                Humans::new(store, human_settings(config)),
            )
        }
    });
    let loop_core = core.clone();
    let mode = core.mode;
    let store = core.store.clone();
    let mut registry = Registry::default();
    registry.register(Arc::new(Introspect::default()))?;
    operations::register(&mut registry, Arc::new(SafetyLoop::new(core.clone())))?;
    let gate = Arc::new(Gate::new(core));
    let session_ends = gate.clone() as Arc<dyn SessionEnds>;
    let servers = downstream_servers(config)?;
    let adapters = load_adapters(config, &servers)?;
    http::register(&mut registry, &adapters, &gate)?;
    let index = Arc::new(OperationIndex::new(registry));
    let downstreams = Downstreams::new(servers, index.clone(), gate.clone(), store);
    let reloader = Arc::new(Reloader::new(
        loop_core.clone(),
        index.clone(),
        gate,
        downstreams.clone(),
        config.clone(),
        &adapters,
    ));
    let surface = Surface::new(config.endpoints, config.tool_prefix.clone());
    let router =
        Router::new(Registry::default(), surface, Limits::default(), capabilities(mode.name()))
            .with_sources(index, vec![downstreams.clone() as Arc<dyn OperationSource>])
            .with_session_ends(session_ends)
            .with_facts(Arc::new(LoopFacts(loop_core.clone())))
            .with_own_failures(loop_core.clone());
    let compiled = match start {
        Start::Now => {
            reloader.record_loaded();
            None
        }
        Start::Deferred => Some(compile_beside(
            config.policies.clone(),
            config.central_policy,
            loop_core,
            reloader.clone(),
        )),
    };
    Ok(Assembled { router: Arc::new(router), downstreams, reloader, compiled })
}

/// What reloads a judge (`cli::judge`): its policy only, through the same
/// [`Reloader`] as `serve` (audited, recorded for `status`); a judge
/// serves no adapters and no downstream servers.
#[cfg(unix)]
pub fn policy_reloader(core: Arc<LoopCore>, gate: Arc<Gate>, config: &Config) -> Arc<Reloader> {
    let index = Arc::new(OperationIndex::new(Registry::default()));
    let store = core.store.clone();
    let downstreams = Downstreams::new(BTreeMap::new(), index.clone(), gate.clone(), store);
    let reloader = Arc::new(Reloader::new(core, index, gate, downstreams, config.clone(), &[]));
    reloader.record_loaded();
    reloader
}

/// How long a deferred policy's compilation waits, unless a decision
/// needs it sooner: long enough for a client's `initialize` and
/// `tools/list` to be answered without sharing the machine with it (a
/// few milliseconds), short enough that a broken policy file still stops
/// the server at once.
const COMPILE_GRACE: std::time::Duration = std::time::Duration::from_millis(25);

/// Compiles the policy on a thread of its own, once a decision needs it or
/// after [`COMPILE_GRACE`], and puts it in force; then keeps its text for
/// replay and records what is loaded. The receiver hears whether it
/// worked.
fn compile_beside(
    policies: Vec<PathBuf>,
    under_central: CentralPolicy,
    core: Arc<LoopCore>,
    reloader: Arc<Reloader>,
) -> oneshot::Receiver<Result<(), AssembleError>> {
    let (done, compiled) = oneshot::channel();
    let compiler = std::thread::Builder::new().name("policy-compiler".into()).spawn(move || {
        core.wait_until_policy_wanted(COMPILE_GRACE);
        let result = CompiledPolicy::load(&policies, under_central)
            .map_err(AssembleError::Policy)
            .map(|policy| {
                // Not layered on the central version here: a decision may be
                // holding the state while it waits for this policy, and it
                // takes the central version up itself.
                let policy = Arc::new(policy);
                core.replace_policy(policy.clone());
                remember_policy(&core.store, &policy);
                reloader.record_loaded();
            });
        let _ = done.send(result);
    });
    if let Err(error) = compiler {
        // The sender went with the closure: the receiver hears that it
        // is gone, and serve stops.
        tracing::error!(%error, "the policy compiler could not be started");
    }
    compiled
}

/// The adapter files the configuration names, all valid (any error in any
/// file stops the start: a half-loaded set would silently lack
/// operations), their warnings logged. An adapter whose operation prefix
/// is also a downstream server's name is an error.
pub(super) fn load_adapters(
    config: &Config,
    servers: &BTreeMap<String, ServerSettings>,
) -> Result<Vec<definition::AdapterDefinition>, AssembleError> {
    let loaded = definition::load_all(&config.adapters).map_err(AssembleError::AdapterFiles)?;
    let mut adapters = Vec::new();
    for adapter in loaded {
        for warning in &adapter.warnings {
            tracing::warn!("{warning}");
        }
        let definition = adapter.definition;
        if servers.contains_key(&definition.prefix) {
            return Err(AssembleError::SharedPrefix {
                file: definition.file,
                adapter: definition.name,
                prefix: definition.prefix,
            });
        }
        adapters.push(definition);
    }
    Ok(adapters)
}

/// `[servers]` and the servers of the client configuration, if any; a
/// name in both is an error rather than a silent choice.
pub(super) fn downstream_servers(
    config: &Config,
) -> Result<BTreeMap<String, ServerSettings>, AssembleError> {
    let mut servers = config.servers.clone();
    if let Some(file) = &config.client_config {
        for (name, settings) in client_config::load(file).map_err(AssembleError::ClientConfig)? {
            if servers.contains_key(&name) {
                return Err(AssembleError::ServerTwice { file: file.clone(), name });
            }
            servers.insert(name, settings);
        }
    }
    Ok(servers)
}

/// The policy, the store, the humans and the loop's shared core over them.
pub fn build_loop_core(config: &Config) -> Result<LoopCore, AssembleError> {
    // Compiling the policy and opening the state are independent: side by
    // side, a short-lived process (the hook) starts sooner.
    let (policy, store) = std::thread::scope(|scope| {
        let policy = scope.spawn(|| CompiledPolicy::load(&config.policies, config.central_policy));
        let store = deciding_store(config);
        (policy.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)), store)
    });
    let policy = policy.map_err(AssembleError::Policy)?;
    let store = store?;
    let policy = on_central(&store, policy);
    remember_policy(&store, &policy);
    let store = Arc::new(store);
    Ok(LoopCore::new(
        store.clone(),
        Arc::new(policy),
        config.mode(),
        Humans::new(store, human_settings(config)),
    ))
}

/// `policy` layered on the state's central policy version, when there is
/// one and it can be used here, for a command that acts at once (so the
/// hook does not audit a take-up on every call). Otherwise
/// `policy` as it is: the first decision then takes the central version
/// up itself, or refuses (fail closed), and commands that decide nothing
/// still start.
fn on_central(store: &Store, policy: CompiledPolicy) -> CompiledPolicy {
    let central = match store.read(Central::latest) {
        Ok(Some(central)) => central,
        Ok(None) => return policy,
        Err(error) => {
            tracing::warn!(%error, "the central policy could not be taken up at start");
            return policy;
        }
    };
    match policy.with_central(Some(&central)).map_err(|errors| Diagnostic::one_line(&errors)) {
        Ok(layered) => layered,
        Err(why) => {
            tracing::warn!(%why, "the central policy could not be taken up at start");
            policy
        }
    }
}

/// How humans are reached, from `[verifier]`.
fn human_settings(config: &Config) -> HumanSettings {
    let settings = &config.verifier;
    let verifier = VerifierLink::from_settings(settings);
    if let Err(unavailable) = &verifier {
        tracing::warn!(%unavailable, "no human can be asked, so blocks and pauses stay until `safety-dongle unblock` or expiry");
    }
    HumanSettings {
        challenge_ttl_ms: i64::try_from(settings.challenge_ttl_secs.saturating_mul(1000))
            .unwrap_or(i64::MAX),
        approval_wait: std::time::Duration::from_secs(settings.approval_timeout_secs),
        verifier,
    }
}

/// Keeps the policy's text beside the audit trail, once per version, so
/// `replay` can judge recorded actions with it again. Replay falls back to
/// the recorded decisions without it, so a failure here is only logged.
pub(super) fn remember_policy(store: &Store, policy: &CompiledPolicy) {
    let known = store.read(|tx| audit::knows_policy(tx, policy.hash()));
    if !matches!(known, Ok(true))
        && let Err(error) =
            store.write(|tx| audit::remember_policy(tx, policy.hash(), &policy.stored_sources()))
    {
        tracing::warn!(%error, "the policy's text could not be kept for replay");
    }
}

/// The central policy version the configured state holds, if any: read
/// from a shared database, or from the data folder's state when there is
/// one (a command that only explains never creates one).
pub fn central_policy(config: &Config) -> Result<Option<Central>, AssembleError> {
    if config.state == StateLocation::DataFolder
        && !config
            .data_dir
            .as_ref()
            .is_some_and(|dir| dir.join(crate::store::DATABASE_FILE).exists())
    {
        return Ok(None);
    }
    Ok(open_store(config)?.read(Central::latest)?)
}

/// The state store the configuration names, opened now.
pub fn open_store(config: &Config) -> Result<Store, AssembleError> {
    Ok(match &config.state {
        StateLocation::DataFolder => Store::open(data_folder(config)?)?,
        StateLocation::Postgres { url, password_file } => Store::open_postgres(
            url,
            state_password(password_file.as_deref())?.as_deref(),
            spool(config)?,
        )?,
    })
}

/// The state store of a command that decides at once (the hook): a SQLite
/// file opened now (a broken one stops the start, saying why), a shared
/// database on first use. A database away at start then refuses the
/// decision itself, which keeps its audit row in the spool; failing to
/// connect here would refuse before any decision, leaving no row.
fn deciding_store(config: &Config) -> Result<Store, AssembleError> {
    match &config.state {
        StateLocation::DataFolder => open_store(config),
        StateLocation::Postgres { .. } => store_on_first_use(config),
    }
}

/// The state store the configuration names, opened when first used.
fn store_on_first_use(config: &Config) -> Result<Store, AssembleError> {
    Ok(match &config.state {
        StateLocation::DataFolder => Store::open_on_first_use(data_folder(config)?)?,
        StateLocation::Postgres { url, password_file } => Store::postgres_on_first_use(
            url,
            state_password(password_file.as_deref())?.as_deref(),
            spool(config)?,
        )?,
    })
}

/// Where a dongle on a shared database keeps the audit rows of decisions
/// refused while the database is away: its data folder (made if needed),
/// when it has one.
fn spool(config: &Config) -> Result<Option<Spool>, AssembleError> {
    let Some(dir) = config.data_dir.as_deref() else { return Ok(None) };
    crate::store::private_data_dir(dir)?;
    Ok(Some(Spool::in_folder(dir)))
}

/// The state database's password: the file's first line when one is
/// configured (a file others can open is refused), else the environment.
fn state_password(file: Option<&Path>) -> Result<Option<String>, AssembleError> {
    let Some(file) = file else { return Ok(std::env::var(STATE_PASSWORD_ENV).ok()) };
    let refused =
        |problem: String| AssembleError::StatePassword { file: file.to_path_buf(), problem };
    if let Some(problem) = crate::platform::secret_exposed(file) {
        return Err(refused(problem));
    }
    let text = std::fs::read_to_string(file).map_err(|error| {
        refused(format!("cannot be read ({})", crate::diagnostics::io_reason(&error)))
    })?;
    Ok(Some(text.lines().next().unwrap_or_default().to_owned()))
}

fn data_folder(config: &Config) -> Result<&std::path::Path, AssembleError> {
    config.data_dir.as_deref().ok_or(AssembleError::NoDataFolder)
}

/// `_protocol.capabilities`: only what is enforced and tested is claimed.
/// Batches, field selection and cursor paging (introspection's operation
/// lists) are the router's; confirmation tokens and danger levels are the
/// gate's, for every adapter and downstream operation.
fn capabilities(safety_loop: &str) -> Map<String, Value> {
    match json!({
        "execution_safety_loop": safety_loop,
        "batch": true,
        "confirmation": true,
        "dangerous_operations": true,
        "field_selection": true,
        "pagination": true,
        "warnings": true,
    }) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
