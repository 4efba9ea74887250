//! One downstream MCP server: connecting to it (a child process over stdio,
//! or streamable HTTP), keeping it connected, and calling its tools.
//!
//! A supervisor task owns the connection. It connects, lists the tools,
//! publishes them, and waits; when the server exits or the connection
//! drops it reconnects with exponential backoff (0.5 s doubling to 30 s),
//! and calls fail with a clear error meanwhile. `notifications/tools/
//! list_changed` makes it list and publish again. Children run as a
//! `platform::ProcessTree` (their own process group; on Windows a job
//! object), ended whole when the dongle stops them, so a server that
//! spawned helpers (`npx` starting `node`) leaves no orphans. A child gets only a minimal base of the dongle's environment
//! (`inherited_environment`) plus its entry's `env`. A child's answer
//! longer than the response limit cuts its connection (`bounded`): the
//! call answers `VALIDATION_PAYLOAD_TOO_LARGE` and the server restarts.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use rmcp::{
    ClientHandler, Peer, RoleClient, ServiceExt,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
        ClientCapabilities, ClientConfig, ClientRequest, Implementation, ProgressNotificationParam,
        ProgressToken, ServerResult, Tool,
    },
    service::{NotificationContext, PeerRequestOptions, RunningService, ServiceError},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::{
    config::ServerSettings,
    gate::Admission,
    platform::ProcessTree,
    protocol::{
        error::{AqlError, LimitKind},
        limits::Limits,
        registry::{CallContext, Progress, ProgressSink},
    },
};

use super::bounded::{BoundedLines, Overflow};

/// How long connecting and listing tools may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a stopping child gets between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Where a downstream server stands, as `status` shows it.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerState {
    /// Not started yet (lazy servers before first need).
    Idle,
    Connecting,
    Ready {
        tools: usize,
    },
    /// Down after a failure; the next attempt is due at `retry_at` (ms).
    Down {
        error: String,
        retry_at: i64,
    },
    Stopped,
}

impl ServerState {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Connecting => "connecting",
            Self::Ready { .. } => "ready",
            Self::Down { .. } => "down",
            Self::Stopped => "stopped",
        }
    }
}

/// What the supervisor tells the rest of the dongle.
pub trait Observer: Send + Sync {
    /// The server's tools, freshly listed.
    fn tools_changed(&self, server: &Arc<Downstream>, tools: &[Tool]);
    fn state_changed(&self, server: &Downstream, state: &ServerState);
}

/// Progress sinks by the progress token a downstream call carries.
type ProgressRoutes = Mutex<HashMap<ProgressToken, Arc<dyn ProgressSink>>>;

pub struct Downstream {
    name: String,
    settings: ServerSettings,
    /// Where the server stands, and its connection while it has one;
    /// watched by calls waiting for a restarted server.
    state: watch::Sender<(ServerState, Option<Peer<RoleClient>>)>,
    /// Becomes true once the first connection attempt has finished.
    first_attempt: watch::Sender<bool>,
    started: std::sync::atomic::AtomicBool,
    progress: Arc<ProgressRoutes>,
    stop: CancellationToken,
    stopped: Notify,
    /// Whether the current connection was cut for an answer over the
    /// response limit; a fresh one for each connection.
    overflow: Mutex<Arc<Overflow>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every guarded value is replaced whole.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Downstream {
    pub fn new(name: String, settings: ServerSettings) -> Arc<Self> {
        Arc::new(Self {
            name,
            settings,
            state: watch::channel((ServerState::Idle, None)).0,
            first_attempt: watch::channel(false).0,
            started: std::sync::atomic::AtomicBool::new(false),
            progress: Arc::new(Mutex::new(HashMap::new())),
            stop: CancellationToken::new(),
            stopped: Notify::new(),
            overflow: Mutex::new(Arc::default()),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn settings(&self) -> &ServerSettings {
        &self.settings
    }

    /// Starts the supervisor unless it runs already.
    pub fn start(self: &Arc<Self>, observer: Arc<dyn Observer>) {
        if self.started.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let server = self.clone();
        tokio::spawn(async move {
            server.supervise(observer).await;
            server.stopped.notify_waiters();
        });
    }

    /// Whether the server was stopped for good (withdrawn by a reload, or
    /// the dongle is exiting): no retry can reach it.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Resolves once the first connection attempt has finished.
    pub async fn first_attempt_done(&self) {
        let mut done = self.first_attempt.subscribe();
        let _ = done.wait_for(|done| *done).await;
    }

    /// Stops the supervisor and terminates the server; resolves once it is
    /// gone (or at once if it never started).
    pub async fn stop(&self) {
        let stopped = self.stopped.notified();
        self.stop.cancel();
        if self.started.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = tokio::time::timeout(STOP_GRACE * 3, stopped).await;
        }
    }

    fn set_state(
        &self,
        observer: &dyn Observer,
        state: ServerState,
        peer: Option<Peer<RoleClient>>,
    ) {
        self.state.send_replace((state.clone(), peer));
        observer.state_changed(self, &state);
    }

    async fn supervise(self: &Arc<Self>, observer: Arc<dyn Observer>) {
        let mut failures: u32 = 0;
        while !self.stop.is_cancelled() {
            self.set_state(observer.as_ref(), ServerState::Connecting, None);
            let error = match self.serve_connection(observer.as_ref()).await {
                Ended::Stopped => break,
                // A server that served and then failed starts over from
                // the first backoff: one crash does not inherit the wait
                // of failures long past.
                Ended::Failed { error, served } => {
                    if served {
                        failures = 0;
                    }
                    error
                }
            };
            self.first_attempt.send_replace(true);
            let backoff = FIRST_BACKOFF.saturating_mul(1 << failures.min(6)).min(MAX_BACKOFF);
            failures = failures.saturating_add(1);
            let retry_at =
                crate::store::now_ms() + i64::try_from(backoff.as_millis()).unwrap_or(i64::MAX);
            tracing::warn!(server = %self.name, %error, retry_in_ms = backoff.as_millis() as u64, "downstream server is down");
            self.set_state(observer.as_ref(), ServerState::Down { error, retry_at }, None);
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = self.stop.cancelled() => break,
            }
        }
        self.first_attempt.send_replace(true);
        self.set_state(observer.as_ref(), ServerState::Stopped, None);
    }

    /// One connection from start to end.
    async fn serve_connection(self: &Arc<Self>, observer: &dyn Observer) -> Ended {
        let list_changed = Arc::new(Notify::new());
        let handler = DownstreamClient {
            progress: self.progress.clone(),
            list_changed: list_changed.clone(),
        };
        let (service, mut child) =
            match tokio::time::timeout(CONNECT_TIMEOUT, self.connect(handler)).await {
                Ok(Ok(connected)) => connected,
                Ok(Err(error)) => return Ended::Failed { error, served: false },
                Err(_) => {
                    return Ended::Failed {
                        error: format!(
                            "did not finish connecting within {} s",
                            CONNECT_TIMEOUT.as_secs()
                        ),
                        served: false,
                    };
                }
            };
        let peer = service.peer().clone();
        let listed = match tokio::time::timeout(CONNECT_TIMEOUT, peer.list_all_tools()).await {
            Ok(Ok(tools)) => Ok(tools),
            Ok(Err(error)) => Err(format!("listing its tools failed: {error}")),
            Err(_) => Err(format!("did not list its tools within {} s", CONNECT_TIMEOUT.as_secs())),
        };
        let tools = match listed {
            Ok(tools) => tools,
            Err(error) => {
                drop(service);
                terminate(child.take()).await;
                return Ended::Failed { error, served: false };
            }
        };
        observer.tools_changed(self, &tools);
        self.set_state(observer, ServerState::Ready { tools: tools.len() }, Some(peer.clone()));
        self.first_attempt.send_replace(true);
        tracing::info!(server = %self.name, tools = tools.len(), "downstream server connected");

        let closed = service.waiting();
        tokio::pin!(closed);
        let ended = loop {
            tokio::select! {
                _ = &mut closed => break Ended::Failed { error: "the connection closed (the server exited or dropped it)".into(), served: true },
                _ = self.stop.cancelled() => break Ended::Stopped,
                _ = list_changed.notified() => match peer.list_all_tools().await {
                    Ok(tools) => {
                        observer.tools_changed(self, &tools);
                        self.set_state(observer, ServerState::Ready { tools: tools.len() }, Some(peer.clone()));
                    }
                    Err(error) => tracing::warn!(server = %self.name, %error, "re-listing tools after list_changed failed"),
                },
            }
        };
        self.state.send_modify(|(_, peer)| *peer = None);
        terminate(child.take()).await;
        ended
    }

    async fn connect(
        &self,
        handler: DownstreamClient,
    ) -> Result<(RunningService<RoleClient, DownstreamClient>, Option<ProcessTree>), String> {
        match (&self.settings.command, &self.settings.url) {
            (Some(command), _) => {
                let mut builder = tokio::process::Command::new(command);
                builder
                    .args(&self.settings.args)
                    .env_clear()
                    .envs(inherited_environment())
                    .envs(&self.settings.env)
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::inherit())
                    .kill_on_drop(true);
                ProcessTree::prepare(&mut builder);
                if let Some(cwd) = &self.settings.cwd {
                    builder.current_dir(cwd);
                }
                let mut child =
                    builder.spawn().map_err(|e| format!("could not start '{command}': {e}"))?;
                let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                    return Err("the child's pipes were not set up".into());
                };
                let child = ProcessTree::adopt(child);
                let overflow = Arc::new(Overflow::default());
                *lock(&self.overflow) = overflow.clone();
                let stdout =
                    BoundedLines::new(stdout, Limits::default().max_response_size, overflow);
                match handler.serve((stdout, stdin)).await {
                    Ok(service) => Ok((service, Some(child))),
                    Err(error) => {
                        terminate(Some(child)).await;
                        Err(format!("the MCP handshake failed: {error}"))
                    }
                }
            }
            (None, Some(url)) => {
                let mut headers = HashMap::new();
                for (name, value) in &self.settings.headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("header name '{name}' is not valid"))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|_| format!("the value of header '{name}' is not valid"))?;
                    headers.insert(name, value);
                }
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(headers);
                let transport =
                    StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
                let service = handler
                    .serve(transport)
                    .await
                    .map_err(|e| format!("the MCP handshake with {url} failed: {e}"))?;
                Ok((service, None))
            }
            (None, None) => Err("neither command nor url is set".into()),
        }
    }

    /// Calls one tool the gate admitted: bounded by the server's timeout,
    /// cancelled downstream when the caller cancels, with progress passed
    /// back. With `wait_for_server` (a retry), a server that is restarting
    /// is waited for, up to its timeout, instead of failing the call at
    /// once, so the retry reaches the new process.
    pub async fn call_tool(
        &self,
        _admitted: &Admission,
        tool: &str,
        arguments: rmcp::model::JsonObject,
        call: &CallContext,
        wait_for_server: bool,
    ) -> Result<CallToolResult, AqlError> {
        let timeout = Duration::from_secs(self.settings.timeout_secs);
        if wait_for_server {
            let mut state = self.state.subscribe();
            tokio::select! {
                _ = tokio::time::timeout(timeout, state.wait_for(|(_, peer)| peer.as_ref().is_some_and(|peer| !peer.is_transport_closed()))) => {}
                () = self.stop.cancelled() => {}
                () = call.cancelled.cancelled() => return Err(AqlError::downstream_cancelled(&self.name)),
            }
        }
        let overflow = lock(&self.overflow).clone();
        let peer = {
            let guard = self.state.borrow();
            // A connection whose transport closed is gone, whether or not
            // the supervisor has noticed yet.
            match (&guard.0, guard.1.as_ref().filter(|peer| !peer.is_transport_closed())) {
                (_, Some(peer)) => peer.clone(),
                (ServerState::Down { error, retry_at }, None) => {
                    let wait_ms = (retry_at - crate::store::now_ms()).max(0);
                    return Err(AqlError::downstream_unavailable(
                        &self.name,
                        &format!(
                            "{error}; restarting, next attempt in {:.1} s",
                            wait_ms as f64 / 1000.0
                        ),
                    ));
                }
                (ServerState::Ready { .. }, None) => {
                    return Err(AqlError::downstream_unavailable(
                        &self.name,
                        "its connection just closed; it is being restarted",
                    ));
                }
                (state, None) => {
                    return Err(AqlError::downstream_unavailable(
                        &self.name,
                        &format!("it is {}", state.name()),
                    ));
                }
            }
        };
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let options = PeerRequestOptions::with_timeout(timeout);
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|_| AqlError::downstream_unavailable(&self.name, "the connection closed"))?;
        let _route = call
            .progress
            .clone()
            .map(|sink| ProgressRoute::open(&self.progress, handle.progress_token.clone(), sink));
        let request_id = handle.id.clone();
        let response = tokio::select! {
            response = handle.await_response() => response,
            _ = call.cancelled.cancelled() => {
                let cancelled = CancelledNotificationParam::new(Some(request_id), Some("the client cancelled the request".into()));
                let _ = peer.notify_cancelled(cancelled).await;
                return Err(AqlError::downstream_cancelled(&self.name));
            }
        };
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(result),
            Ok(_) => Err(AqlError::downstream_unavailable(
                &self.name,
                "it answered tools/call with something other than a tool result",
            )),
            Err(ServiceError::Timeout { .. }) => {
                Err(AqlError::downstream_timeout(&self.name, tool, self.settings.timeout_secs))
            }
            Err(ServiceError::McpError(error)) => Err(AqlError::tool_failed(
                &self.name,
                tool,
                &error.message,
                serde_json::json!({ "code": error.code.0, "message": error.message }),
            )),
            Err(_) if let Some(bytes) = overflow.cut_line_bytes() => {
                tracing::warn!(server = %self.name, tool, bytes, "an answer over the response limit: the connection is cut and the server restarted");
                Err(AqlError::payload_too_large(
                    LimitKind::ResponseSize,
                    Limits::default().max_response_size,
                    bytes,
                ))
            }
            Err(error) => Err(AqlError::downstream_unavailable(
                &self.name,
                &format!("the call failed: {error}"),
            )),
        }
    }
}

enum Ended {
    Stopped,
    /// `served`: the connection was up and serving before it failed.
    Failed {
        error: String,
        served: bool,
    },
}

/// Ends a child and everything it started ([`ProcessTree::terminate`]),
/// giving it [`STOP_GRACE`] where the platform can ask politely first.
async fn terminate(child: Option<ProcessTree>) {
    if let Some(child) = child {
        child.terminate(STOP_GRACE).await;
    }
}

/// Routes one call's downstream progress to its caller while it runs.
struct ProgressRoute {
    routes: Arc<ProgressRoutes>,
    token: ProgressToken,
}

impl ProgressRoute {
    fn open(
        routes: &Arc<ProgressRoutes>,
        token: ProgressToken,
        sink: Arc<dyn ProgressSink>,
    ) -> Self {
        lock(routes).insert(token.clone(), sink);
        Self { routes: routes.clone(), token }
    }
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        lock(&self.routes).remove(&self.token);
    }
}

/// The dongle as an MCP client of one downstream server.
struct DownstreamClient {
    progress: Arc<ProgressRoutes>,
    list_changed: Arc<Notify>,
}

impl ClientHandler for DownstreamClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("safety-dongle", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let sink = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink.report(Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            })
            .await;
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }
}

/// The part of the dongle's own environment a downstream server inherits:
/// what programs need to run (`verifier_protocol::environment`), never the
/// rest, which holds adapter credentials and whatever else the dongle was
/// started with. Anything more a server needs is named in its entry's
/// `env`.
fn inherited_environment() -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    verifier_protocol::environment::for_programs(std::env::vars_os())
}
