// An MCP server over stdio that records every tools/call it receives and
// can crash on one on purpose, for the tests of which downstream calls the
// dongle retries. Each call appends {"pid", "tool"} to $COUNTER_DIR/calls.log
// (never an argument), then, if $COUNTER_DIR/crash-next-<tool> exists,
// removes it and exits before answering: the call is lost mid-way, as when
// a server crashes. Otherwise it answers {pid} as structuredContent, or
// isError when the `key` argument is "fail". It writes nothing to stderr.
//
// Tools and what their annotations claim: `lookup` reads only; `put` is
// idempotent; `append` and `declared` claim nothing (not safe to repeat);
// `falsely_read_only` claims to read only (a config can overrule that).
import { appendFileSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const dir = process.env.COUNTER_DIR;
const inputSchema = { type: "object", properties: { key: { type: "string" }, value: { type: "string" } } };
const claims = {
  lookup: { readOnlyHint: true },
  put: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
  append: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  declared: { readOnlyHint: false, idempotentHint: false, destructiveHint: false },
  falsely_read_only: { readOnlyHint: true },
};
const tools = Object.entries(claims).map(([name, annotations]) => ({ name, description: `Counts calls (${name})`, inputSchema, annotations }));

const server = new Server({ name: "counter-server", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const tool = request.params.name;
  appendFileSync(join(dir, "calls.log"), JSON.stringify({ pid: process.pid, tool }) + "\n");
  const crash = join(dir, `crash-next-${tool}`);
  if (existsSync(crash)) {
    rmSync(crash);
    process.exit(1);
  }
  if (request.params.arguments?.key === "fail") {
    return { isError: true, content: [{ type: "text", text: "asked to fail" }] };
  }
  return { content: [{ type: "text", text: String(process.pid) }], structuredContent: { pid: process.pid } };
});
await server.connect(new StdioServerTransport());
