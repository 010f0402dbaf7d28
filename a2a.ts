// agent-machine/a2a (Node only): an agent served over the Agent2Agent protocol (A2A v1.0, the
// official @a2a-js/sdk), and a remote A2A agent used as a tool. Not part of the main entry.

export type { A2aDecision } from "./a2a/a2a-executor.js";
export type { A2aHandler, A2aServerOptions } from "./a2a/a2a-http.js";
export { agentCardOf, createA2aHandler } from "./a2a/a2a-http.js";
export type { A2aAgentToolOptions, A2aToolDetails } from "./a2a/a2a-tool.js";
export { a2aAgentTool } from "./a2a/a2a-tool.js";
