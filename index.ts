// The public API of agent-machine: named exports only, grouped by audience. Internals stay in
// their folders (`*/internal/`, the actors' and machines' helpers).
//
// Everything that runs in a browser too (the agent, messages, events, options, output schemas,
// snapshots, providers, context, secret-free views, the statecharts) is curated in browser.ts and
// re-exported here whole, so the two entries cannot drift apart. Below is what needs Node.

export * from "./browser.js";

// --- Tools that touch the machine: the built-in coding tools, their workspace, sandbox and permissions, MCP ---
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
export type {
  McpProtocolChoice,
  McpResultDetails,
  McpStdioOptions,
  McpToolSet,
  McpUrlOptions,
} from "./mcp/mcp-tools.js";
export { mapMcpResult, mcpTools } from "./mcp/mcp-tools.js";
export type {
  PermissionMode,
  PermissionRules,
  Permissions,
  PermissionsOptions,
} from "./tools/permissions.js";
export { createPermissions } from "./tools/permissions.js";
export type { ReadFileDetails, ReadFileToolOptions } from "./tools/read-file.js";
export { createReadFileTool } from "./tools/read-file.js";
export type { Sandbox, SandboxOptions, SandboxSupport } from "./tools/sandbox.js";
export type { SandboxLimits } from "./tools/sandbox-limits.js";
export { DEFAULT_SANDBOX_LIMITS } from "./tools/sandbox-limits.js";
export {
  createSandbox,
  DEFAULT_ALLOW_ENV,
  DEFAULT_ALLOW_READ,
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

// --- Seeing the agent from Node: our live page, recordings, the Stately inspector ---
export type { Recorder } from "./visualizer/recording.js";
export { parseRecording, readRecording, recordEvents } from "./visualizer/recording.js";
export type { VisualizeOptions, VisualizerServer } from "./visualizer/server.js";
export type { LaterSource, WakeSource } from "./visualizer/next-wake.js";
export type { NextWake, PendingLater } from "./visualizer/wire.js";
export { visualize, visualizeRecording } from "./visualizer/server.js";
export type {
  InspectorRelay,
  InspectorRelayOptions,
  StatelyInspector,
  StatelyInspectorOptions,
} from "./visualizer/stately.js";
export { createInspectorRelay, createStatelyInspector } from "./visualizer/stately.js";

// --- Agents that wake: one scheduler per process, events from outside (docs/wake.md) ---
export * from "./wake.js";
