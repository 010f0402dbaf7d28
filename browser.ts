// The browser-safe API of agent-machine: `import { createAgent } from "agent-machine"` in a bundle
// built for the browser (the package's `browser` condition) or `from "agent-machine/browser"`
// anywhere. Everything here runs wherever `fetch`, XState, rxjs and zod run: no `node:` module, no
// `process`. The Node-only parts have their own entries (`agent-machine/coding-tools`,
// `agent-machine/mcp`, `agent-machine/visualizer`, `agent-machine/cli`); `index.ts` is the full Node API:
// all of this entry, then what needs Node. test/package-entries.test.ts keeps Node out of this one.

// --- The agent: create one, prompt it, watch it ---
export type {
  Agent,
  AgentActor,
  AgentSnapshot,
  CompactNowOptions,
  CompactNowResult,
  PendingApproval,
} from "./agent/create-agent.js";
export type { SequencedEvent } from "./agent/event-log.js";
export { EventsUnavailableError } from "./agent/event-log.js";
export { createAgent } from "./agent/create-agent.js";
export type { RunOutcome } from "./core/run-outcome.js";
export { type PromptCacheReport, promptCacheReport } from "./core/cache-report.js";
export { createMemorySpendStore, type SpendStore } from "./core/spend-store.js";
export {
  type CachePause,
  type CacheRetentionCall,
  type PromptCacheOptions,
  SHORT_CACHE_TTL_MS,
} from "./core/prompt-cache.js";

// --- One agent wherever it runs: the handle every transport speaks (in process, durable, over HTTP) ---
export type {
  AgentCallErrorCode,
  AgentHandle,
  AgentStatus,
  CallAnswer,
  HandleRunOptions,
  PendingCall,
} from "./core/agent-handle.js";
export { AgentCallError } from "./core/agent-handle.js";
export { agentHandle, type AgentHandleOptions } from "./agent/agent-handle.js";

// --- Agents inside your own XState machine ---
export type {
  AgentActorEvent,
  AgentActorLogic,
  AgentActorParentEvent,
  AgentActorRef,
  AgentActorSnapshot,
  CommandRejected,
  FromAgentOptions,
} from "./agent/from-agent.js";
export { FromAgentInputError, fromAgent } from "./agent/from-agent.js";
export type { HandoffAgent, HandoffAgentOptions, HandoffRecord } from "./agent/handoff.js";
export { defineHandoff, DEFAULT_MAX_HANDOFFS, MAIN_AGENT } from "./agent/handoff.js";
export type { ContextFilter, FilteredContext } from "./agent/context-filter.js";
export { filterContext, lastTurns } from "./agent/context-filter.js";

// --- Typed results and checked answers: output schemas, partial objects, output filters ---
export type * from "./core/output.js";
export { parsePartialJson } from "./core/partial-json.js";

// --- Snapshots across releases: version stamps, migrations, the transcript of any snapshot ---
export type { PersistedSnapshotData, SnapshotMigration, SnapshotVersion } from "./core/snapshot-version.js";
export { SNAPSHOT_FORMAT, SNAPSHOT_VERSION_KEY } from "./core/snapshot-version.js";
export {
  type MachineStructure,
  describeMachineStructure,
  machineStructureHash,
} from "./agent/machine-structure.js";
export { messagesOfSnapshot } from "./agent/snapshot-transcript.js";
export { SnapshotVersionError, snapshotVersionOf } from "./agent/snapshot-version.js";

// --- Messages, events and options ---
export type * from "./core/events.js";
export * from "./core/messages.js";
export type * from "./core/options.js";

// --- Tools: define your own, or delegate to a sub-agent ---
export type {
  ApprovalContext,
  ClientToolDefinition,
  Tool,
  ToolContext,
  ToolDefinition,
  ToolResult,
} from "./tools/define-tool.js";
export { defineClientTool, defineTool, errorResult, toToolSpec } from "./tools/define-tool.js";
export type { SubAgentDetails, SubAgentToolOptions } from "./agent/sub-agent-tool.js";
export { subAgentTool } from "./agent/sub-agent-tool.js";
export { narrowPermissions } from "./tools/narrow-permissions.js";

// --- Providers: Anthropic, OpenAI (chat + responses), OpenAI-compatible servers (all over fetch), scripted ---
export type * from "./providers/provider.js";
export { isRetryableKind } from "./providers/provider.js";
export { withOutputTool } from "./providers/internal/structured-output.js";
export type {
  Script,
  ScriptedOptions,
  ScriptedProvider,
  ScriptedStep,
  ScriptedToolCall,
} from "./providers/scripted.js";
export { scripted } from "./providers/scripted.js";
export { type AiSdkLanguageModel, type AiSdkOptions, aiSdk } from "./providers/ai-sdk.js";
export { type AnthropicOptions, anthropic } from "./providers/anthropic.js";
export { type BedrockOptions, bedrock } from "./providers/bedrock.js";
export { type GeminiOptions, gemini } from "./providers/gemini.js";
export {
  DEFAULT_MODELS,
  PROVIDER_NAMES,
  type ProviderFromEnvOptions,
  type ProviderFromEnvResult,
  type ProviderName,
  providerFromEnv,
} from "./providers/from-env.js";
export { INVALID_JSON_ARGUMENTS_KEY } from "./providers/internal/tool-arguments.js";
export { type OpenAICompatibleOptions, openaiCompatible } from "./providers/openai-compatible.js";
export { type OpenAIOptions, openai } from "./providers/openai.js";
export { type ModelPrice, modelPrice, setModelPrice, withCost } from "./providers/pricing.js";
export {
  type CircuitBreaker,
  type CircuitBreakerOptions,
  createCircuitBreaker,
} from "./providers/circuit-breaker.js";
export {
  type FallbackOptions,
  type FallbackTrigger,
  fallback,
  fallbackMatches,
} from "./providers/fallback.js";
export { type RouteOptions, route } from "./providers/route.js";
export {
  type CallCostModel,
  callCostModel,
  RESERVE_CHARS_PER_TOKEN,
  UNCAPPED_OUTPUT_TOKENS,
  worstCaseCallUsd,
} from "./providers/call-cost.js";
export { withoutOtherVendorsState } from "./providers/vendor-state.js";
export { type ModelInputKind, modelInput, setModelInput, takesImages } from "./providers/model-input.js";

// --- Context: token accounting and compaction ---
export type { CompactionResult, CompactOptions } from "./context/compact.js";
export { compactContext, isOverBudget } from "./context/compact.js";
export type {
  ContextConfig,
  ModelContextOptions,
  ResolvedContextConfig,
  Summarizer,
  SummaryAnswer,
  SummaryRequest,
  TokenCalibration,
} from "./context/config.js";
export { CONTEXT_DEFAULTS, contextConfigForModel, resolveContextConfig } from "./context/config.js";
export type { LearnedContextWindow, StatedContextOverflow } from "./context/context-window.js";
export {
  contextOverflowText,
  learnContextWindow,
  parseContextOverflow,
  withLearnedWindow,
} from "./context/context-window.js";
export type { CompactionSummaryDetails } from "./context/compaction-messages.js";
export {
  COMPACTION_MARKER_TEXT,
  COMPACTION_MARKER_TYPE,
  COMPACTION_SUMMARY_TYPE,
  isCompactionMessage,
  isCompactionSummary,
  summaryTextOf,
} from "./context/compaction-messages.js";
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

// --- Seeing the agent: the statechart's layout, secret-free copies of what it carries, and the
// Stately inspector for agents that live in the page ---
export type { GraphEdge, GraphNode, LayoutOptions, MachineGraph } from "./visualizer/machine-graph.js";
export { activeStateIds, layoutMachineGraph } from "./visualizer/machine-graph.js";
export type { SanitizeOptions } from "./visualizer/sanitize.js";
export { sanitize } from "./visualizer/sanitize.js";
export type {
  InspectorSanitizeOptions,
  StatelyBrowserInspectorOptions,
} from "./visualizer/stately-browser.js";
export { createStatelyBrowserInspector, inspectorSanitizers } from "./visualizer/stately-browser.js";
export type {
  ToolOutcome,
  VisualizerCommand,
  VisualizerMessage,
  WireEvent,
  WireMessageUpdate,
} from "./visualizer/wire.js";

// --- The statecharts and their pure logic, for tests and inspection ---
export { retryDelay } from "./actors/backoff.js";
export { toolCallMachine } from "./actors/tool-call.machine.js";
export type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./machines/agent.machine.js";
export { agentMachine } from "./machines/agent.machine.js";
export type { LimitName, LimitVerdict } from "./rules/limit-answer.logic.js";
export { LOOP_NOTICE_TYPE } from "./rules/loop-detection.logic.js";
export {
  answeredAtLimit,
  LIMIT_NOTICE_TYPE,
  limitNotice,
  limitVerdict,
  nextCallTokens,
} from "./rules/limit-answer.logic.js";
export { groupCalls, SKIPPED_TEXT } from "./rules/tool-execution.logic.js";
export { toolExecutionMachine } from "./machines/tool-execution.machine.js";
