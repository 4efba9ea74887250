//! Downstream MCP servers behind the dongle: the dongle connects to each as
//! a client and offers its tools as operations `<server>__<tool>` behind
//! the few semantic endpoint tools, every call passing the gate.
//!
//! Servers come from `[servers.NAME]` and from an MCP client's
//! configuration (`client_config`, `--import-client-config`). `startup`
//! servers connect as the dongle starts, `lazy` ones when an agent first
//! needs an operation it does not know yet (or asks `introspect`). Each
//! server's state is written to the state database for
//! `safety-dongle status`. A reload hands over the servers configured now
//! ([`Downstreams::apply`]): those gone are stopped and their operations
//! withdrawn, new ones start as their `start` says, and those whose
//! settings changed are restarted; the others keep running untouched.

mod bounded;
pub mod client_config;
pub mod connection;
pub mod tool;

use std::{
    collections::BTreeMap,
    future::Future,
    pin::Pin,
    sync::{Arc, RwLock},
};

use rmcp::model::Tool;

use crate::{
    config::{ServerSettings, StartPolicy},
    gate::Gate,
    protocol::registry::{OperationIndex, OperationSource},
    safety::directive::NotificationKind,
    store::{Store, now_ms, owner::Owner, records},
};

use connection::{Downstream, Observer, ServerState};

pub struct Downstreams {
    servers: RwLock<BTreeMap<String, Arc<Downstream>>>,
    observer: Arc<IndexObserver>,
}

/// What a reload did to the downstream servers, by name.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ServerChanges {
    pub started: Vec<String>,
    pub stopped: Vec<String>,
    pub restarted: Vec<String>,
}

impl ServerChanges {
    pub fn is_empty(&self) -> bool {
        self.started.is_empty() && self.stopped.is_empty() && self.restarted.is_empty()
    }
}

/// Keeps the operation index and the state database in step with the
/// servers, and tells executing agents when a server that served goes down
/// (an `error` notification) and when it serves again (`status`).
struct IndexObserver {
    index: Arc<OperationIndex>,
    gate: Arc<Gate>,
    store: Arc<Store>,
    owner: Owner,
    health: std::sync::Mutex<Health>,
    /// Done before this process first records a server: rows a process
    /// that had the same id left behind are removed.
    cleared: std::sync::Once,
}

/// Which servers have served, and which of those are down now, by name.
#[derive(Default)]
struct Health {
    served: std::collections::BTreeSet<String>,
    down: std::collections::BTreeSet<String>,
}

impl Observer for IndexObserver {
    fn tools_changed(&self, server: &Arc<Downstream>, tools: &[Tool]) {
        let operations = tool::operations(server, tools, &self.gate);
        self.index.update(|registry| {
            registry.remove_source(server.name());
            for operation in operations {
                if let Err(error) = registry.register(operation) {
                    tracing::warn!(server = %server.name(), %error, "a downstream tool could not be registered");
                }
            }
        });
    }

    fn state_changed(&self, server: &Downstream, state: &ServerState) {
        let (tools, detail) = match state {
            ServerState::Ready { tools } => (u32::try_from(*tools).unwrap_or(u32::MAX), None),
            ServerState::Down { error, .. } => (0, Some(error.clone())),
            _ => (0, None),
        };
        let now = now_ms();
        let row = records::DownstreamRow {
            owner: self.owner.clone(),
            name: server.name().to_owned(),
            state: state.name().to_owned(),
            tools,
            detail,
            updated_at: now,
        };
        let event = self.notification(server.name(), state, now);
        let written = self.store.write(|tx| {
            self.clear_stale(tx)?;
            records::upsert_downstream(tx, &row)?;
            match &event {
                Some(event) => records::insert_event(tx, event).map(drop),
                None => Ok(()),
            }
        });
        if let Err(error) = written {
            tracing::warn!(%error, "could not record a downstream server's state");
        }
    }
}

impl IndexObserver {
    /// Removes, once per process, the rows an earlier process with this
    /// process's id left behind (in the transaction of the first write).
    fn clear_stale(&self, tx: &crate::store::Tx<'_>) -> Result<(), crate::store::StoreError> {
        let mut result = Ok(());
        self.cleared.call_once(|| result = records::remove_downstreams_of(tx, &self.owner));
        result
    }

    /// Records a lazy server as idle, unless it has started meanwhile.
    fn record_idle(&self, server: &Downstream) {
        let row = records::DownstreamRow {
            owner: self.owner.clone(),
            name: server.name().to_owned(),
            state: ServerState::Idle.name().to_owned(),
            tools: 0,
            detail: None,
            updated_at: now_ms(),
        };
        if let Err(error) = self.store.write(|tx| {
            self.clear_stale(tx)?;
            records::insert_downstream_if_absent(tx, &row)
        }) {
            tracing::warn!(%error, "could not record a downstream server's state");
        }
    }

    /// The broadcast a change of state calls for: going down after
    /// serving, or serving again after that.
    fn notification(&self, name: &str, state: &ServerState, now: i64) -> Option<records::EventRow> {
        // A poisoned lock still holds whole sets: each change is one insert
        // or remove.
        let mut health = self.health.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (kind, message) = match state {
            ServerState::Down { error, .. }
                if health.served.contains(name) && health.down.insert(name.to_owned()) =>
            {
                (
                    NotificationKind::Error,
                    format!(
                        "Downstream server '{name}' went down ({error}); its operations fail until it is back"
                    ),
                )
            }
            ServerState::Ready { tools } => {
                health.served.insert(name.to_owned());
                if !health.down.remove(name) {
                    return None;
                }
                (
                    NotificationKind::Status,
                    format!("Downstream server '{name}' is serving again ({tools} tools)"),
                )
            }
            _ => return None,
        };
        let metadata = serde_json::json!({ "server": name, "state": state.name() }).to_string();
        Some(records::EventRow { id: 0, agent: None, kind, message, metadata, created_at: now })
    }
}

impl Downstreams {
    pub fn new(
        servers: BTreeMap<String, ServerSettings>,
        index: Arc<OperationIndex>,
        gate: Arc<Gate>,
        store: Arc<Store>,
    ) -> Arc<Self> {
        let observer = Arc::new(IndexObserver {
            index,
            gate,
            store,
            owner: Owner::current(),
            health: Default::default(),
            cleared: std::sync::Once::new(),
        });
        let servers: BTreeMap<String, Arc<Downstream>> = servers
            .into_iter()
            .map(|(name, settings)| (name.clone(), Downstream::new(name, settings)))
            .collect();
        Arc::new(Self { servers: RwLock::new(servers), observer })
    }

    /// The servers configured now.
    fn current(&self) -> Vec<Arc<Downstream>> {
        // A poisoned lock still holds a whole map: it is replaced whole.
        self.servers
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Starts the servers configured to start with the dongle, and records
    /// the lazy ones as idle (off the way of the first requests). Must run
    /// inside the async runtime.
    pub fn start(&self) {
        let servers = self.current();
        let idle: Vec<Arc<Downstream>> = servers
            .iter()
            .filter(|s| s.settings().start != StartPolicy::Startup)
            .cloned()
            .collect();
        if !idle.is_empty() {
            let observer = self.observer.clone();
            tokio::task::spawn_blocking(move || {
                idle.iter().for_each(|server| observer.record_idle(server))
            });
        }
        for server in servers.iter().filter(|s| s.settings().start == StartPolicy::Startup) {
            server.start(self.observer.clone());
        }
    }

    /// Makes the servers those of `configured`: stops the ones no longer
    /// there, restarts the ones whose settings changed, and adds the new
    /// ones (started now when they start with the dongle). Must run inside
    /// the async runtime.
    pub async fn apply(&self, configured: BTreeMap<String, ServerSettings>) -> ServerChanges {
        let mut changes = ServerChanges::default();
        let (retired, added) = {
            let mut servers = self.servers.write().unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut retired = Vec::new();
            servers.retain(|name, server| {
                let keep =
                    configured.get(name).is_some_and(|settings| settings == server.settings());
                if !keep {
                    retired.push(server.clone());
                    if configured.contains_key(name) {
                        &mut changes.restarted
                    } else {
                        &mut changes.stopped
                    }
                    .push(name.clone());
                }
                keep
            });
            let mut added = Vec::new();
            for (name, settings) in configured {
                if let std::collections::btree_map::Entry::Vacant(slot) =
                    servers.entry(name.clone())
                {
                    if !changes.restarted.contains(&name) {
                        changes.started.push(name.clone());
                    }
                    let server = Downstream::new(name, settings);
                    slot.insert(server.clone());
                    added.push(server);
                }
            }
            (retired, added)
        };
        futures::future::join_all(retired.iter().map(|server| server.stop())).await;
        for server in &retired {
            self.observer.index.update(|registry| registry.remove_source(server.name()));
            let _ = self
                .observer
                .store
                .write(|tx| records::remove_downstream(tx, &self.observer.owner, server.name()));
        }
        for server in added {
            self.observer.state_changed(&server, &ServerState::Idle);
            if server.settings().start == StartPolicy::Startup {
                server.start(self.observer.clone());
            }
        }
        changes
    }

    /// Terminates every server (and whatever it started), and forgets
    /// their recorded state.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.current().iter().map(|server| server.stop())).await;
        let _ = self
            .observer
            .store
            .write(|tx| records::remove_downstreams_of(tx, &self.observer.owner));
    }
}

impl OperationSource for Downstreams {
    fn ready(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            let servers = self.current();
            for server in &servers {
                server.start(self.observer.clone());
            }
            futures::future::join_all(servers.iter().map(|server| server.first_attempt_done()))
                .await;
        })
    }
}
