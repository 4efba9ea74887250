//! Live reload of what a serving dongle was assembled from: its policy
//! files, its adapter files, its downstream servers (`[servers]` and the
//! client configuration), and the config file that lists them.
//!
//! A reload reads everything again and checks each part before it swaps:
//! a part whose files are broken keeps its running version, and the
//! refusal (rendered file:line:col) is logged, audited, and broadcast to
//! executing agents as an `error` notification. What changed is swapped in
//! whole: the policy through [`LoopCore::replace_policy`] (every decision
//! takes one snapshot, so calls in flight finish under the version they
//! started with, and audit rows name the version that decided), adapter
//! operations through one registry update (only the adapters whose file
//! changed get a new runtime, so the others keep their rate-limit state),
//! and downstream servers by the difference ([`Downstreams::apply`]).
//! Sessions are never touched. Every swap leaves an audit row and a
//! `status` notification, and what is loaded, and since when, is written
//! to the state for `safety-dongle status`.
//!
//! Settings a running dongle cannot change (its data folder, loop mode,
//! endpoints, tool prefix, verifier) are left as they are, with a warning
//! that a restart applies them.

use crate::names::named_enum;
use std::{collections::BTreeMap, path::PathBuf, sync::Arc};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::{
    adapter::{
        definition::AdapterDefinition,
        http,
        mcp::{Downstreams, ServerChanges},
    },
    config::Config,
    diagnostics::Diagnostic,
    gate::Gate,
    hex,
    policy::PolicySource,
    protocol::registry::OperationIndex,
    safety::{core::LoopCore, directive::NotificationKind},
    store::{
        StoreError,
        audit::{AuditDecision, AuditEntry, AuditEvent, AuditStage},
        central, now_ms,
        records::{self, EventRow, LoadedRow},
    },
};

use super::assemble::{downstream_servers, load_adapters, remember_policy};

/// How often a serving dongle looks for a new central policy version.
const CENTRAL_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// How often a serving dongle says it is alive (one silent for
/// `owner::SILENT_AFTER_MS` counts as gone).
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(10);

named_enum! {
    /// The parts a reload checks and swaps on their own.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    pub enum Part {
        Config => "config",
        Policy => "policy",
        Central => "central policy",
        Adapters => "adapters",
        Servers => "servers",
    }
}

impl From<Part> for AuditStage {
    fn from(part: Part) -> Self {
        match part {
            Part::Config => Self::Config,
            Part::Policy => Self::Policy,
            Part::Central => Self::CentralPolicy,
            Part::Adapters => Self::Adapters,
            Part::Servers => Self::Servers,
        }
    }
}

/// One adapter as it runs: its file, the file's content hash when it was
/// loaded, its operation count, and since when.
#[derive(Debug, Clone)]
struct RunningAdapter {
    file: PathBuf,
    content: String,
    operations: usize,
    since: i64,
}

/// What the running parts came from.
struct Loaded {
    config: Config,
    /// The policy last recorded for `status`, and since when it is in force.
    policy: String,
    policy_since: i64,
    adapters: BTreeMap<String, RunningAdapter>,
    refused: BTreeMap<Part, (String, i64)>,
}

/// What one reload did.
#[derive(Debug, Default)]
pub struct ReloadReport {
    /// The new policy's hash, when it changed.
    pub policy: Option<String>,
    /// Adapters added, changed or removed, by name.
    pub adapters: Vec<String>,
    pub servers: ServerChanges,
    /// Parts whose change was refused, with why (located).
    pub refused: Vec<(Part, String)>,
    /// Settings that changed but apply only at a restart.
    pub needs_restart: Vec<&'static str>,
}

pub struct Reloader {
    core: Arc<LoopCore>,
    index: Arc<OperationIndex>,
    gate: Arc<Gate>,
    downstreams: Arc<Downstreams>,
    loaded: tokio::sync::Mutex<Loaded>,
}

/// The hash of a file's bytes, or of nothing when it cannot be read (then
/// the next reload sees a change and loads it again).
fn content_hash(file: &PathBuf) -> String {
    hex::encode(&Sha256::digest(std::fs::read(file).unwrap_or_default()))
}

fn running(adapters: &[AdapterDefinition], since: i64) -> BTreeMap<String, RunningAdapter> {
    adapters
        .iter()
        .map(|a| {
            (
                a.name.clone(),
                RunningAdapter {
                    file: a.file.clone(),
                    content: content_hash(&a.file),
                    operations: a.operations.len(),
                    since,
                },
            )
        })
        .collect()
}

fn render(diagnostics: &[Diagnostic]) -> String {
    diagnostics.iter().map(Diagnostic::render).collect::<Vec<_>>().join("\n")
}

impl Reloader {
    /// A reloader for parts assembled from `config` with `adapters`.
    pub fn new(
        core: Arc<LoopCore>,
        index: Arc<OperationIndex>,
        gate: Arc<Gate>,
        downstreams: Arc<Downstreams>,
        config: Config,
        adapters: &[AdapterDefinition],
    ) -> Self {
        let now = now_ms();
        let loaded = Loaded {
            config,
            policy: String::new(),
            policy_since: now,
            adapters: running(adapters, now),
            refused: BTreeMap::new(),
        };
        Self { core, index, gate, downstreams, loaded: tokio::sync::Mutex::new(loaded) }
    }

    /// The files whose change calls for a reload: the config file (the
    /// caller's), the policies, the adapter files and folders, and the
    /// client configuration.
    pub async fn watched(&self) -> Vec<PathBuf> {
        let loaded = self.loaded.lock().await;
        let config = &loaded.config;
        config
            .policies
            .iter()
            .chain(&config.adapters)
            .chain(&config.client_config)
            .cloned()
            .collect()
    }

    /// Reloads from `config` (the config file read again, or why it could
    /// not be); one reload at a time.
    pub async fn reload(&self, config: Result<Config, Vec<Diagnostic>>) -> ReloadReport {
        let mut loaded = self.loaded.lock().await;
        let now = now_ms();
        let mut report = ReloadReport::default();
        match config {
            Err(diagnostics) => report.refused.push((Part::Config, render(&diagnostics))),
            Ok(config) => {
                loaded.refused.remove(&Part::Config);
                report.needs_restart = needs_restart(&loaded.config, &config);
                self.reload_policy(&config, &mut loaded, now, &mut report);
                match downstream_servers(&config) {
                    Err(error) => report.refused.push((Part::Servers, error.to_string())),
                    Ok(servers) => {
                        loaded.refused.remove(&Part::Servers);
                        match load_adapters(&config, &servers) {
                            Err(error) => report.refused.push((Part::Adapters, error.to_string())),
                            Ok(adapters) => {
                                self.reload_adapters(&adapters, &mut loaded, now, &mut report)
                            }
                        }
                        report.servers = self.downstreams.apply(servers).await;
                    }
                }
                loaded.config = config;
            }
        }
        for (part, why) in &report.refused {
            loaded.refused.insert(*part, (why.clone(), now));
        }
        self.tell(&report, now);
        record_loaded(&self.core, &mut loaded);
        report
    }

    fn reload_policy(
        &self,
        config: &Config,
        loaded: &mut Loaded,
        now: i64,
        report: &mut ReloadReport,
    ) {
        match PolicySource::read_all(&config.policies)
            .and_then(|local| self.core.policy().with_local(&local, config.central_policy))
        {
            Err(diagnostics) => report.refused.push((Part::Policy, render(&diagnostics))),
            Ok(policy) => {
                loaded.refused.remove(&Part::Policy);
                if policy.hash() != self.core.policy().hash() {
                    remember_policy(&self.core.store, &policy);
                    report.policy = Some(policy.hash().to_owned());
                    self.core.replace_policy(Arc::new(policy));
                    loaded.policy_since = now;
                }
            }
        }
    }

    /// Gives a new runtime to the adapters whose file changed (and to new
    /// ones), withdraws those gone, and keeps the rest as they run.
    fn reload_adapters(
        &self,
        adapters: &[AdapterDefinition],
        loaded: &mut Loaded,
        now: i64,
        report: &mut ReloadReport,
    ) {
        let fresh = running(adapters, now);
        let unchanged = |name: &String, adapter: &RunningAdapter| {
            loaded
                .adapters
                .get(name)
                .is_some_and(|old| old.file == adapter.file && old.content == adapter.content)
        };
        let changed: Vec<AdapterDefinition> = adapters
            .iter()
            .filter(|a| fresh.get(&a.name).is_none_or(|f| !unchanged(&a.name, f)))
            .cloned()
            .collect();
        let gone: Vec<String> =
            loaded.adapters.keys().filter(|name| !fresh.contains_key(*name)).cloned().collect();
        if changed.is_empty() && gone.is_empty() {
            loaded.refused.remove(&Part::Adapters);
            return;
        }
        let retired: Vec<String> =
            gone.iter().cloned().chain(changed.iter().map(|a| a.name.clone())).collect();
        match http::replace(&self.index, &retired, &changed, &self.gate) {
            Err(error) => report.refused.push((Part::Adapters, error.to_string())),
            Ok(_) => {
                loaded.refused.remove(&Part::Adapters);
                for (name, adapter) in fresh {
                    let kept = loaded
                        .adapters
                        .get(&name)
                        .filter(|old| old.file == adapter.file && old.content == adapter.content)
                        .map(|old| old.since);
                    loaded
                        .adapters
                        .insert(name, RunningAdapter { since: kept.unwrap_or(now), ..adapter });
                }
                for name in &gone {
                    loaded.adapters.remove(name);
                }
                report.adapters = retired;
            }
        }
    }

    /// Logs, audits and broadcasts what the reload did.
    fn tell(&self, report: &ReloadReport, now: i64) {
        let mut told: Vec<(NotificationKind, Part, AuditDecision, String)> = Vec::new();
        if let Some(hash) = &report.policy {
            let files = self.core.policy().provenance();
            told.push((
                NotificationKind::Status,
                Part::Policy,
                AuditDecision::Loaded,
                format!(
                    "The policy was reloaded: now {} (from {files})",
                    hash.get(..16).unwrap_or_default()
                ),
            ));
        }
        if !report.adapters.is_empty() {
            told.push((
                NotificationKind::Status,
                Part::Adapters,
                AuditDecision::Loaded,
                format!("Adapters reloaded: {}", report.adapters.join(", ")),
            ));
        }
        let servers = &report.servers;
        if !servers.is_empty() {
            let list = |what: &str, names: &[String]| {
                (!names.is_empty()).then(|| format!("{what} {}", names.join(", ")))
            };
            let parts: Vec<String> = [
                list("started", &servers.started),
                list("stopped", &servers.stopped),
                list("restarted", &servers.restarted),
            ]
            .into_iter()
            .flatten()
            .collect();
            told.push((
                NotificationKind::Status,
                Part::Servers,
                AuditDecision::Loaded,
                format!("Downstream servers changed: {}", parts.join("; ")),
            ));
        }
        for (part, why) in &report.refused {
            told.push((
                NotificationKind::Error,
                *part,
                AuditDecision::Refused,
                format!("A changed {} was refused; the running one stays: {why}", part.name()),
            ));
        }
        for setting in &report.needs_restart {
            tracing::warn!(setting, "a changed setting applies only when safety-dongle restarts");
        }
        for (kind, part, decision, message) in &told {
            match kind {
                NotificationKind::Error => tracing::error!("{message}"),
                _ => tracing::info!("{message}"),
            }
            let written = self.core.store.write(|tx| {
                self.core.audit(
                    tx,
                    AuditEntry {
                        hint: Some(message),
                        stage: Some((*part).into()),
                        ..AuditEntry::of("", AuditEvent::Reload, *decision)
                    },
                )?;
                records::insert_event(
                    tx,
                    &EventRow {
                        id: 0,
                        agent: None,
                        kind: *kind,
                        message: message.clone(),
                        metadata: json!({ "part": part.name(), "decision": decision.name() })
                            .to_string(),
                        created_at: now,
                    },
                )
            });
            if let Err(error) = written {
                tracing::error!(%error, "a reload could not be audited");
            }
        }
    }

    /// Every [`CENTRAL_POLL`], takes up a central policy version pushed
    /// since this dongle last looked, without waiting for a decision to,
    /// and records it for `status`; a version this dongle cannot use is
    /// recorded as refused (and logged once). Decisions check for
    /// themselves ([`LoopCore::deciding_policy`]): this keeps idle dongles
    /// and `status` current. Every [`HEARTBEAT`], says in the state that
    /// this dongle is alive, for `status` on any machine.
    pub async fn follow_central(self: Arc<Self>) {
        let mut last_heartbeat = std::time::Instant::now();
        loop {
            self.take_up_central().await;
            if last_heartbeat.elapsed() >= HEARTBEAT {
                last_heartbeat = std::time::Instant::now();
                if let Err(error) =
                    self.core.store.write(|tx| records::heartbeat(tx, self.core.owner()))
                {
                    tracing::warn!(%error, "could not say in the state that this dongle is alive");
                }
            }
            tokio::time::sleep(CENTRAL_POLL).await;
        }
    }

    async fn take_up_central(&self) {
        let core = &self.core;
        let in_force = core.policy().central_version();
        let taken = match core.store.read(central::latest_version) {
            Ok(latest) if latest != in_force => {
                core.store.write(|tx| core.deciding_policy(tx).map(drop))
            }
            Ok(_) => Ok(()),
            Err(error) => Err(error),
        };
        let mut loaded = self.loaded.lock().await;
        let now = now_ms();
        match taken {
            Ok(()) => {
                let refusal_ended = loaded.refused.remove(&Part::Central).is_some();
                // Taken up here or by a decision since the last look.
                if core.policy().hash() == loaded.policy && !refusal_ended {
                    return;
                }
                loaded.policy_since = now;
            }
            Err(StoreError::CentralPolicy { version, why }) => {
                let why = format!("version {version}: {why}");
                if loaded.refused.get(&Part::Central).is_some_and(|(known, _)| *known == why) {
                    return;
                }
                tracing::error!(
                    "the central policy {why}; decisions are refused until a usable version is pushed"
                );
                loaded.refused.insert(Part::Central, (why, now));
            }
            Err(error) => {
                tracing::warn!(%error, "the central policy could not be checked");
                return;
            }
        }
        record_loaded(core, &mut loaded);
    }

    /// Writes what is loaded, and since when, to the state for `status`
    /// (once the policy is in force: it waits for it).
    pub fn record_loaded(&self) {
        // When a reload holds it, the reload records when it is done.
        if let Ok(mut loaded) = self.loaded.try_lock() {
            record_loaded(&self.core, &mut loaded);
        }
    }

    /// Forgets what this process recorded as loaded (it is exiting).
    pub fn forget(&self) {
        let _ = self.core.store.write(|tx| records::set_loaded(tx, self.core.owner(), &[]));
    }
}

/// Writes what this process has loaded, and since when, to the state.
fn record_loaded(core: &LoopCore, loaded: &mut Loaded) {
    let owner = core.owner();
    let policy = core.policy();
    loaded.policy = policy.hash().to_owned();
    let row = |kind: &str, name: String, detail: String, since: i64| LoadedRow {
        owner: owner.clone(),
        kind: kind.into(),
        name,
        detail,
        since,
        seen_at: 0,
    };
    let mut rows =
        vec![row("policy", policy.hash().to_owned(), policy.provenance(), loaded.policy_since)];
    for (name, adapter) in &loaded.adapters {
        rows.push(row(
            "adapter",
            name.clone(),
            format!("{} ({} operations)", adapter.file.display(), adapter.operations),
            adapter.since,
        ));
    }
    for (part, (why, at)) in &loaded.refused {
        rows.push(row("refused", part.name().into(), why.clone(), *at));
    }
    if let Err(error) = core.store.write(|tx| records::set_loaded(tx, owner, &rows)) {
        tracing::warn!(%error, "what is loaded could not be recorded for status");
    }
}

/// The settings a running dongle keeps until it restarts, among those
/// that differ between `running` and `read`.
fn needs_restart(running: &Config, read: &Config) -> Vec<&'static str> {
    [
        ("data_dir", running.data_dir != read.data_dir),
        ("mode", running.mode() != read.mode()),
        ("allow_weaker_mode", running.allow_weaker_mode != read.allow_weaker_mode),
        ("endpoints", running.endpoints != read.endpoints),
        ("tool_prefix", running.tool_prefix != read.tool_prefix),
        ("verifier", running.verifier != read.verifier),
    ]
    .into_iter()
    .filter_map(|(name, changed)| changed.then_some(name))
    .collect()
}
