//! The rmcp `ServerHandler`: MCP's `tools/list` and `tools/call` in terms
//! of MCP-AQL endpoints and the protocol router.
//!
//! Tools are data built once from the registry at start-up, not macros. A
//! call to a tool this endpoint mode does not expose is an MCP protocol
//! error (the client named a tool that does not exist); everything about
//! the request itself is answered as an MCP-AQL envelope.

use std::{sync::Arc, time::Duration};

use rmcp::{
    ErrorData as McpError, Peer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        ListPromptsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken, Prompt,
        PromptMessage, Role, ServerCapabilities, ServerConfig, Tool,
    },
    service::{RequestContext, RoleServer},
};

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
    tools: Arc<Vec<Tool>>,
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
}

impl Drop for Session {
    fn drop(&mut self) {
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
        let tools = Arc::new(endpoint_tools(router.surface(), &router.registry()));
        let texts = Arc::new(Texts { instructions: instructions(router.surface()), prompt: prompt(router.surface()) });
        let session = Arc::new(Session { id: uuid::Uuid::new_v4().to_string(), router: router.clone() });
        Self { router, tools, texts, session }
    }

    /// The facts about one request the operations may use: the session,
    /// the client's name, where its progress goes, its cancellation, and
    /// when it must have answered.
    fn call_context(&self, context: &RequestContext<RoleServer>) -> CallContext {
        let progress = context.meta.get_progress_token().map(|token| {
            Arc::new(ProgressToClient { peer: context.peer.clone(), token }) as Arc<dyn ProgressSink>
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
    fn report(&self, update: Progress) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>> {
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

impl ServerHandler for DongleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().build())
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
            return Err(McpError::invalid_params(format!("Unknown prompt '{}': this server has '{PROMPT_NAME}'", request.name), None));
        }
        let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, self.texts.prompt.clone())]).with_description(PROMPT_DESCRIPTION);
        Ok(result.into())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(endpoint) = self.router.surface().endpoint_for_tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!("Unknown tool '{}': this server exposes {}", request.name, self.tool_names()),
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
        self.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>().join(", ")
    }
}
