// The public API of agent-machine: named exports only. Internals stay in their folders.

export type { ContextConfig } from "./context/config.js";
export type * from "./core/events.js";
// --- core: messages, events, options ---
export * from "./core/messages.js";
export type * from "./core/options.js";

// --- providers ---
export type * from "./providers/provider.js";
export { isRetryableKind } from "./providers/provider.js";
export type { Tool, ToolContext, ToolDefinition, ToolResult } from "./tools/define-tool.js";
// --- tools ---
export { defineTool, errorResult, toToolSpec } from "./tools/define-tool.js";
