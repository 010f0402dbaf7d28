// agent-machine/coding-tools (Node only): the built-in coding tools (bash, read, write, edit, list,
// grep, glob), the workspace they are confined to, the OS sandbox for bash, and the permission rules
// that gate them. Also part of the main entry, `import { codingTools } from "agent-machine"`, in Node.

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
