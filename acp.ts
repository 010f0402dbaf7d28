// agent-machine/acp (Node only): an app's agents served over the Agent Client Protocol (ACP), the
// protocol editors (Zed, JetBrains) and harnesses (the AI SDK's HarnessAgent) drive coding agents by.

export type { AcpAgentSource, AcpSession, ServeAcpOptions } from "./acp/serve-acp.js";
export { serveAcp } from "./acp/serve-acp.js";
export {
  acpHistory,
  acpStopReason,
  acpToolCall,
  acpToolDiff,
  acpToolKind,
  acpUpdateOf,
  promptFromAcp,
} from "./acp/acp-updates.js";
export type { AcpClientAccess, AcpTerminal, WithAcpClientOptions } from "./acp/client-tools.js";
export { withAcpClient } from "./acp/client-tools.js";
export { acpPlanEntries, createPlanTool, PLAN_TOOL_NAME } from "./acp/plan-tool.js";
