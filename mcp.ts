// agent-machine/mcp (Node only): tools from Model Context Protocol servers, over stdio (a child
// process) or HTTP. Also part of the main entry in Node.

export type {
  McpProtocolChoice,
  McpResultDetails,
  McpStdioOptions,
  McpToolSet,
  McpUrlOptions,
} from "./mcp/mcp-tools.js";
export { mapMcpResult, mcpTools } from "./mcp/mcp-tools.js";
