//! The rmcp `ServerHandler`: MCP's `tools/list` and `tools/call` in terms
//! of MCP-AQL endpoints and the protocol router.
//!
//! Tools are data built once from the registry at start-up, not macros. A
//! call to a tool this endpoint mode does not expose is an MCP protocol
//! error (the client named a tool that does not exist); everything about
//! the request itself is answered as an MCP-AQL envelope.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        ListPromptsResult, ListToolsResult, PaginatedRequestParams, Prompt, PromptMessage, Role,
        ServerCapabilities, ServerConfig, Tool,
    },
    service::{RequestContext, RoleServer},
};

use crate::protocol::{registry::CallContext, router::Router};

use super::{
    instructions::{INSTRUCTIONS, PROMPT, PROMPT_DESCRIPTION, PROMPT_NAME},
    tools::{call_tool_result, endpoint_tools},
};

/// One MCP session: stdio has one per process, HTTP one per connection
/// (rmcp's session factory builds a new one for each).
#[derive(Clone)]
pub struct DongleServer {
    router: Arc<Router>,
    tools: Arc<Vec<Tool>>,
    call: Arc<CallContext>,
}

impl DongleServer {
    pub fn new(router: Arc<Router>) -> Self {
        let tools = Arc::new(endpoint_tools(router.mode(), router.registry()));
        let call = Arc::new(CallContext { session_id: uuid::Uuid::new_v4().to_string() });
        Self { router, tools, call }
    }
}

impl ServerHandler for DongleServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().build())
            .with_server_info(Implementation::new("safety-dongle", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
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
        let result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, PROMPT)]).with_description(PROMPT_DESCRIPTION);
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(endpoint) = self.router.mode().endpoint_for_tool(&request.name) else {
            return Err(McpError::invalid_params(
                format!("Unknown tool '{}': this server exposes {}", request.name, self.tool_names()),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let result = self.router.handle(&self.call, endpoint, &arguments).await;
        if let Err(error) = &result {
            tracing::debug!(tool = %request.name, code = error.code.as_str(), "operation refused");
        }
        Ok(call_tool_result(&result).into())
    }
}

impl DongleServer {
    fn tool_names(&self) -> String {
        self.tools.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>().join(", ")
    }
}
