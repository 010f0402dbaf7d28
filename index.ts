// The public API of agent-machine: named exports only. Internals stay in their folders.

export { retryDelay } from "./actors/backoff.js";
export { toolCallMachine } from "./actors/tool-call.machine.js";
export type { ContextConfig } from "./context/config.js";
export type { Agent, AgentActor, AgentSnapshot, PendingApproval } from "./core/create-agent.js";

// --- the agent ---
export { createAgent } from "./core/create-agent.js";
export type * from "./core/events.js";
// --- core: messages, events, options ---
export * from "./core/messages.js";
export type * from "./core/options.js";
export type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./machines/agent.machine.js";
export { agentMachine } from "./machines/agent.machine.js";
export { groupCalls, SKIPPED_TEXT } from "./machines/tool-execution.logic.js";
export { toolExecutionMachine } from "./machines/tool-execution.machine.js";

// --- providers ---
export type * from "./providers/provider.js";
export { isRetryableKind } from "./providers/provider.js";
export type {
  Script,
  ScriptedOptions,
  ScriptedProvider,
  ScriptedStep,
  ScriptedToolCall,
} from "./providers/scripted.js";
export { scripted } from "./providers/scripted.js";
export type { Tool, ToolContext, ToolDefinition, ToolResult } from "./tools/define-tool.js";
// --- tools ---
export { defineTool, errorResult, toToolSpec } from "./tools/define-tool.js";

// --- visualizer: Stately inspector hook-up, live page, recordings ---
export type { GraphEdge, GraphNode, MachineGraph } from "./visualizer/machine-graph.js";
export { activeStateIds, layoutMachineGraph } from "./visualizer/machine-graph.js";
export type { Recorder } from "./visualizer/recording.js";
export { parseRecording, readRecording, recordEvents } from "./visualizer/recording.js";
export type { SanitizeOptions } from "./visualizer/sanitize.js";
export { sanitize } from "./visualizer/sanitize.js";
export type { VisualizeOptions, VisualizerServer } from "./visualizer/server.js";
export { visualize, visualizeRecording } from "./visualizer/server.js";
export type {
  InspectorRelay,
  InspectorRelayOptions,
  InspectorSanitizeOptions,
  StatelyBrowserInspectorOptions,
  StatelyInspector,
  StatelyInspectorOptions,
} from "./visualizer/stately.js";
export {
  createInspectorRelay,
  createStatelyBrowserInspector,
  createStatelyInspector,
  inspectorSanitizers,
} from "./visualizer/stately.js";
export type {
  ToolOutcome,
  VisualizerCommand,
  VisualizerMessage,
  WireEvent,
  WireMessageUpdate,
} from "./visualizer/wire.js";
