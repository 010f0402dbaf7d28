// agent-machine/react: React hooks over an agent's live state, for an agent running in the page
// (`createAgent` from the browser entry) or behind the session host (`agent-machine/http`). Needs
// React 18 or later (an optional peer dependency). Not part of the main entry. docs/frontends.md.

export type { AgentActions, AgentStore } from "./react/agent-store.js";
export { createAgentStore } from "./react/agent-store.js";
export type { AgentView, StreamingMessage, StreamingToolCall, ToolCallView } from "./react/agent-view.js";
export { applyAgentEvent, emptyAgentView } from "./react/agent-view.js";
export type { AgentMachineFrame, RemoteAgentOptions } from "./react/remote-agent-store.js";
export { createRemoteAgentStore, RemoteAgentError } from "./react/remote-agent-store.js";
// The one error type the remote store throws (RemoteAgentError is its deprecated name).
export type { AgentCallErrorCode } from "./core/agent-handle.js";
export { AgentCallError } from "./core/agent-handle.js";
// A thread on the session host as an AgentHandle, over HTTP.
export { type RemoteHandleOptions, remoteAgentHandle } from "./react/remote-agent-handle.js";
export type { AgentSource } from "./react/use-agent.js";
export { agentStoreOf, useAgent, useAgentActions } from "./react/use-agent.js";
