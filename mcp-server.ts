// agent-machine/mcp-server (Node only): an app's agents served as MCP tools, over any transport of
// the MCP SDK or over Streamable HTTP with the session host's guards.

export type { McpHttpHandler, McpHttpOptions } from "./mcp-server/mcp-http.js";
export { createMcpHttpHandler } from "./mcp-server/mcp-http.js";
export type { McpAuthorization } from "./mcp-server/mcp-principal.js";
export { principalOfRequest } from "./mcp-server/mcp-principal.js";
export type { McpTaskOptions } from "./mcp-server/modern-mcp.js";
export { serveMcpStdio, TASKS_EXTENSION } from "./mcp-server/modern-mcp.js";
export type { McpAgentServerOptions, McpAgentTool } from "./mcp-server/serve-mcp.js";
export { createMcpAgentServer, NO_ELICITATION_REFUSAL, runAgentCall } from "./mcp-server/serve-mcp.js";
