//! The rmcp `ServerHandler`: MCP's `tools/list` and `tools/call` in terms
//! of MCP-AQL endpoints and the protocol router.
//!
//! Tools are data described from the registry in force when they are
//! listed, not macros. The server declares `tools.listChanged`: once a
//! session is initialized, each change of which operations exist (a
//! reload, a downstream server starting or changing its tools) sends it
//! `notifications/tools/list_changed`, until the session ends. A call to
//! a tool this endpoint mode does not expose is an MCP protocol error
//! (the client named a tool that does not exist); everything about the
//! request itself is answered as an MCP-AQL envelope.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData as McpError, Peer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, ListPromptsResult, ListToolsResult,
        PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Prompt, PromptMessage,
        Role, ServerCapabilities, ServerConfig,
    },
    service::{NotificationContext, RequestContext, RoleServer},
};
use tokio_util::sync::CancellationToken;

use crate::{
    analysis::WorkingFolder,
    protocol::{
        envelope::Answer,
        registry::{CallContext, HaltSignal, Progress, ProgressSink, Warnings},
        router::Router,
    },
};

use super::{
    instructions::{PROMPT_DESCRIPTION, PROMPT_NAME, instructions, prompt},
    tools::{call_tool_result, endpoint_tools},
};

/// The longest an MCP request waits for a human before it answers: under
/// the 60 s after which the TypeScript SDK (Claude Desktop, and many other
/// clients) gives up on a request by default, with room for the answer to
/// travel. A request still waiting then answers that it is, and is asked
/// again. Counted from when the request arrives.
pub const CLIENT_WAIT_LIMIT: Duration = Duration::from_secs(50);

/// One MCP session: stdio has one per process, HTTP one per connection
/// (rmcp's session factory builds a new one for each). When rmcp lets go
/// of the last clone (stdin closed, the HTTP session deleted or expired),
/// the session ends (spec 2.3.3).
#[derive(Clone)]
pub struct DongleServer {
    router: Arc<Router>,
    texts: Arc<Texts>,
    session: Arc<Session>,
}

/// The instructions and the prompt, rendered for the router's tools.
struct Texts {
    instructions: String,
    prompt: String,
}

/// The session's id; dropping the last handle ends the session.
struct Session {
    id: String,
    router: Arc<Router>,
    /// Cancelled when the session ends: what serves it alone stops.
    ended: CancellationToken,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.ended.cancel();
        let (router, id) = (self.router.clone(), std::mem::take(&mut self.id));
        let end = move || router.end_session(Some(&id));
        // Ending writes the state durably: never on an async worker thread.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => drop(runtime.spawn_blocking(end)),
            Err(_) => end(),
        }
    }
}

impl DongleServer {
    pub fn new(router: Arc<Router>) -> Self {
        let texts = Arc::new(Texts {
            instructions: instructions(router.surface()),
            prompt: prompt(router.surface()),
        });
        let session = Arc::new(Session {
            id: uuid::Uuid::new_v4().to_string(),
            router: router.clone(),
            ended: CancellationToken::new(),
        });
        Self { router, texts, session }
    }

    /// The facts about one request the operations may use: the session,
    /// the client's name, where its progress goes, its cancellation, and
    /// when it must have answered.
    fn call_context(&self, context: &RequestContext<RoleServer>) -> CallContext {
        let progress = context.meta.get_progress_token().map(|token| {
            Arc::new(ProgressToClient { peer: context.peer.clone(), token })
                as Arc<dyn ProgressSink>
        });
        CallContext {
            session_id: self.session.id.clone(),
            client: context.peer.peer_info().map(|info| info.client_info.name.clone()),
            progress,
            cancelled: context.ct.clone(),
            warnings: Warnings::default(),
            halt: HaltSignal::default(),
            working_folder: WorkingFolder::Project,
            answer_by: Some(tokio::time::Instant::now() + CLIENT_WAIT_LIMIT),
        }
    }
}

/// Progress reports for one request, sent to the client under the token
/// it chose.
struct ProgressToClient {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl ProgressSink for ProgressToClient {
    fn report(
        &self,
        update: Progress,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
        let mut param = ProgressNotificationParam::new(self.token.clone(), update.progress);
        param.total = update.total;
        param.message = update.message;
        let peer = self.peer.clone();
        Box::pin(async move {
            if let Err(error) = peer.notify_progress(param).await {
                tracing::debug!(%error, "a progress report could not be sent");
            }
        })
    }
}

/// Tells `peer` each time the operations change, until `ended`. Holds no
/// handle on the session, so it never keeps one alive.
async fn announce_tool_changes(
    router: Arc<Router>,
    peer: Peer<RoleServer>,
    ended: CancellationToken,
) {
    let mut changes = router.operation_changes();
    loop {
        tokio::select! {
            () = ended.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
        if let Err(error) = peer.notify_tool_list_changed().await {
            tracing::debug!(%error, "a tools/list_changed notification could not be sent");
            return;
        }
    }
}

impl ServerHandler for DongleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .build(),
        )
        .with_server_info(Implementation::new("safety-dongle", env!("CARGO_PKG_VERSION")))
        .with_instructions(self.texts.instructions.clone())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let prompt = Prompt::new(PROMPT_NAME, Some(PROMPT_DESCRIPTION), None);
        Ok(ListPromptsResult::with_all_items(vec![prompt]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != PROMPT_NAME {
            return Err(McpError::invalid_params(
                format!("Unknown prompt '{}': this server has '{PROMPT_NAME}'", request.name),
                None,
            ));
        }
        let result = GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            self.texts.prompt.clone(),
        )])
        .with_description(PROMPT_DESCRIPTION);
        Ok(result.into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tokio::spawn(announce_tool_changes(
            self.router.clone(),
            context.peer,
            self.session.ended.clone(),
        ));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(endpoint_tools(
            self.router.surface(),
            &self.router.registry(),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(endpoint) = self.router.surface().endpoint_for_tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!(
                    "Unknown tool '{}': this server exposes {}",
                    request.name,
                    self.tool_names()
                ),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let call = self.call_context(&context);
        let answer = self.router.answer(&call, endpoint, &arguments).await;
        if let Answer::One(Err(error)) = &answer {
            tracing::debug!(tool = %request.name, code = error.code.as_str(), "operation refused");
        }
        Ok(call_tool_result(&answer, &call.warnings.take(), self.router.limits()).into())
    }
}

impl DongleServer {
    fn tool_names(&self) -> String {
        let surface = self.router.surface();
        surface
            .mode
            .endpoints()
            .into_iter()
            .map(|endpoint| surface.tool_name(endpoint))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
