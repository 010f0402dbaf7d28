// The public API of agent-machine: named exports only, grouped by audience. Internals stay in
// their folders (`*/internal/`, the actors' and machines' helpers).

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

// --- Tools: define your own, or use the built-in coding tools, permissions, sub-agents and MCP ---
export type {
  ApprovalContext,
  ClientToolDefinition,
  Tool,
  ToolContext,
  ToolDefinition,
  ToolResult,
} from "./tools/define-tool.js";
export { defineClientTool, defineTool, errorResult, toToolSpec } from "./tools/define-tool.js";
export type { BashResultDetails, BashToolOptions } from "./tools/bash.js";
export { createBashTool } from "./tools/bash.js";
export type { CodingToolsOptions } from "./tools/coding-tools.js";
export { codingTools } from "./tools/coding-tools.js";
export type { EditFileDetails, EditFileToolOptions } from "./tools/edit-file.js";
export { createEditFileTool } from "./tools/edit-file.js";
export type { GlobToolOptions } from "./tools/glob.js";
export { createGlobTool } from "./tools/glob.js";
export type { GrepDetails, GrepToolOptions } from "./tools/grep.js";
export { createGrepTool, findRipgrep } from "./tools/grep.js";
export type { ListFilesToolOptions } from "./tools/list-files.js";
export { createListFilesTool } from "./tools/list-files.js";
export type { McpResultDetails, McpStdioOptions, McpToolSet, McpUrlOptions } from "./tools/mcp.js";
export { mapMcpResult, mcpTools } from "./tools/mcp.js";
export type {
  PermissionMode,
  PermissionRules,
  Permissions,
  PermissionsOptions,
} from "./tools/permissions.js";
export { createPermissions } from "./tools/permissions.js";
export { narrowPermissions } from "./tools/narrow-permissions.js";
export type { ReadFileDetails, ReadFileToolOptions } from "./tools/read-file.js";
export { createReadFileTool } from "./tools/read-file.js";
export type { SubAgentDetails, SubAgentToolOptions } from "./agent/sub-agent-tool.js";
export { subAgentTool } from "./agent/sub-agent-tool.js";
export type { Sandbox, SandboxOptions, SandboxSupport } from "./tools/sandbox.js";
export {
  createSandbox,
  DEFAULT_DENY_ENV,
  DEFAULT_DENY_READ,
  DEFAULT_DENY_WRITE,
  SandboxUnavailableError,
  sandboxSupport,
} from "./tools/sandbox.js";
export type { ResolvedPath, Workspace } from "./tools/workspace.js";
export { createWorkspace, PROTECTED_WRITE_DIRS, toWorkspace, WorkspaceError } from "./tools/workspace.js";
export type { WriteFileDetails, WriteFileToolOptions } from "./tools/write-file.js";
export { createWriteFileTool } from "./tools/write-file.js";

// --- Providers: Anthropic, OpenAI (chat + responses), OpenAI-compatible servers, scripted ---
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
export { type ModelInputKind, modelInput, setModelInput, takesImages } from "./providers/model-input.js";

// --- Context: token accounting and compaction ---
export type { CompactionResult, CompactOptions } from "./context/compact.js";
export { compactContext, isOverBudget } from "./context/compact.js";
export type {
  ContextConfig,
  ModelContextOptions,
  ResolvedContextConfig,
  Summarizer,
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

// --- Seeing the agent: the Stately inspector, our live page, recordings ---
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

// --- The statecharts and their pure logic, for tests and inspection ---
export { retryDelay } from "./actors/backoff.js";
export { toolCallMachine } from "./actors/tool-call.machine.js";
export type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./machines/agent.machine.js";
export { agentMachine } from "./machines/agent.machine.js";
export type { LimitName, LimitVerdict } from "./machines/limit-answer.logic.js";
export { LOOP_NOTICE_TYPE } from "./machines/loop-detection.logic.js";
export {
  answeredAtLimit,
  LIMIT_NOTICE_TYPE,
  limitNotice,
  limitVerdict,
  nextCallTokens,
} from "./machines/limit-answer.logic.js";
export { groupCalls, SKIPPED_TEXT } from "./machines/tool-execution.logic.js";
export { toolExecutionMachine } from "./machines/tool-execution.machine.js";
