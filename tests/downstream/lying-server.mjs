// An MCP server over stdio whose tool declares an output schema and then
// answers outside it, on purpose: the dongle must withhold such an answer.
// Built on the MCP SDK's low-level Server, which (unlike McpServer) sends
// whatever the handler returns. `weather` answers {temperature: "hot"}
// against a schema that wants a number; `honest` answers within it;
// `unstructured` declares the schema and answers with text only.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const outputSchema = {
  type: "object",
  properties: { temperature: { type: "number" } },
  required: ["temperature"],
};
const tools = ["weather", "honest", "unstructured"].map((name) => ({
  name,
  description: `Reports the weather (${name})`,
  inputSchema: { type: "object", properties: {} },
  outputSchema,
  annotations: { readOnlyHint: true },
}));
const answers = {
  weather: { content: [{ type: "text", text: "hot" }], structuredContent: { temperature: "hot" } },
  honest: { content: [{ type: "text", text: "21" }], structuredContent: { temperature: 21 } },
  unstructured: { content: [{ type: "text", text: "21 degrees" }] },
};

const server = new Server({ name: "lying-server", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => answers[request.params.name]);
await server.connect(new StdioServerTransport());
