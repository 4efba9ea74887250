//! Downstream MCP servers behind the dongle: the dongle connects to each as
//! a client and offers its tools as operations `<server>__<tool>` behind
//! the few semantic endpoint tools, every call passing the gate.
//!
//! Servers come from `[servers.NAME]` and from an MCP client's
//! configuration (`client_config`, `--import-client-config`). `startup`
//! servers connect as the dongle starts, `lazy` ones when an agent first
//! needs an operation it does not know yet (or asks `introspect`). Each
//! server's state is written to the state database for
//! `safety-dongle status`.

mod bounded;
pub mod client_config;
pub mod connection;
pub mod tool;

use std::{collections::BTreeMap, future::Future, pin::Pin, sync::Arc};

use rmcp::model::Tool;

use crate::{
    gate::Gate,
    config::{ServerSettings, StartPolicy},
    protocol::registry::{OperationIndex, OperationSource},
    store::{Store, now_ms, records},
};

use connection::{Downstream, Observer, ServerState};

pub struct Downstreams {
    servers: Vec<Arc<Downstream>>,
    observer: Arc<IndexObserver>,
}

/// Keeps the operation index and the state database in step with the
/// servers.
struct IndexObserver {
    index: Arc<OperationIndex>,
    gate: Arc<Gate>,
    store: Arc<Store>,
    pid: u32,
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
        let row = records::DownstreamRow { owner_pid: self.pid, name: server.name().to_owned(), state: state.name().to_owned(), tools, detail, updated_at: now_ms() };
        if let Err(error) = self.store.write(|tx| records::upsert_downstream(tx, &row)) {
            tracing::warn!(%error, "could not record a downstream server's state");
        }
    }
}

impl Downstreams {
    pub fn new(servers: BTreeMap<String, ServerSettings>, index: Arc<OperationIndex>, gate: Arc<Gate>, store: Arc<Store>) -> Arc<Self> {
        let pid = std::process::id();
        let _ = store.write(|tx| records::remove_downstreams_of(tx, pid));
        let observer = Arc::new(IndexObserver { index, gate, store, pid });
        let servers = servers.into_iter().map(|(name, settings)| Downstream::new(name, settings)).collect::<Vec<_>>();
        for server in &servers {
            observer.state_changed(server, &ServerState::Idle);
        }
        Arc::new(Self { servers, observer })
    }

    /// Starts the servers configured to start with the dongle. Must run
    /// inside the async runtime.
    pub fn start(&self) {
        for server in self.servers.iter().filter(|s| s.settings().start == StartPolicy::Startup) {
            server.start(self.observer.clone());
        }
    }

    /// Terminates every server (and whatever it started), and forgets
    /// their recorded state.
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|server| server.stop())).await;
        let _ = self.observer.store.write(|tx| records::remove_downstreams_of(tx, self.observer.pid));
    }
}

impl OperationSource for Downstreams {
    fn ready(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(async move {
            for server in &self.servers {
                server.start(self.observer.clone());
            }
            futures::future::join_all(self.servers.iter().map(|server| server.first_attempt_done())).await;
        })
    }
}
