// The public API of agent-machine: named exports only. Internals stay in their folders.

export { retryDelay } from "./actors/backoff.js";
export { toolCallMachine } from "./actors/tool-call.machine.js";
// --- context: token accounting and compaction ---
export type { CompactionResult, CompactOptions } from "./context/compact.js";
export { compactContext, isOverBudget } from "./context/compact.js";
export type { CompactionSummaryDetails } from "./context/compaction-messages.js";
export {
  COMPACTION_MARKER_TEXT,
  COMPACTION_MARKER_TYPE,
  COMPACTION_SUMMARY_TYPE,
  isCompactionMessage,
  isCompactionSummary,
  summaryTextOf,
} from "./context/compaction-messages.js";
export type {
  ContextConfig,
  ModelContextOptions,
  ResolvedContextConfig,
  Summarizer,
  SummaryRequest,
  TokenCalibration,
} from "./context/config.js";
export { CONTEXT_DEFAULTS, contextConfigForModel, resolveContextConfig } from "./context/config.js";
export { digestTurns } from "./context/digest.js";
export { dropMiddle } from "./context/drop-middle.js";
export { summarizeOldTurns } from "./context/summarize-old-turns.js";
export type { ProviderSummarizerOptions } from "./context/summarizer.js";
export { summarizerFromProvider } from "./context/summarizer.js";
export {
  calibrationFromUsage,
  contextBudget,
  estimateImageTokens,
  estimateMessageTokens,
  estimateRequestOverhead,
  estimateTokens,
  measuredOverhead,
} from "./context/tokens.js";
export { truncateText, truncateToolOutputs } from "./context/truncate-tool-outputs.js";
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
