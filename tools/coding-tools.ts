import { checkOptionKeys } from "../core/option-keys.js";
import { type BashToolOptions, createBashTool } from "./bash.js";
import type { Tool } from "./define-tool.js";
import { createEditFileTool } from "./edit-file.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool, type GrepToolOptions } from "./grep.js";
import { createListFilesTool } from "./list-files.js";
import { createReadFileTool } from "./read-file.js";
import type { SandboxOptions } from "./sandbox.js";
import { createWorkspace } from "./workspace.js";
import { createWriteFileTool } from "./write-file.js";

/** Options of {@link codingTools}. */
export interface CodingToolsOptions {
  /** The workspace root every tool is sandboxed to. */
  cwd: string;
  /**
   * Run `bash` in an OS sandbox (bubblewrap): `true` or {@link SandboxOptions}. Throws
   * `SandboxUnavailableError` where bubblewrap cannot run. Default `false` (same as `bash.sandbox`).
   */
  sandbox?: boolean | SandboxOptions;
  /** Options passed to the bash tool (besides the workspace). */
  bash?: Omit<BashToolOptions, "workspace">;
  /** Options passed to the grep tool (besides the workspace). */
  grep?: Omit<GrepToolOptions, "workspace">;
}

/**
 * The built-in coding tools, all sandboxed to one workspace: `bash`, `read_file`, `write_file`,
 * `edit_file`, `list_files`, `grep`, `glob`.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider,
 *   tools: codingTools({ cwd: process.cwd(), sandbox: true }),
 *   permissions: createPermissions({ mode: "default" }),
 * });
 * ```
 */
export function codingTools(options: CodingToolsOptions): Tool[] {
  checkOptionKeys("codingTools", options, { cwd: true, sandbox: true, bash: true, grep: true });
  const workspace = createWorkspace(options.cwd);
  return [
    createBashTool({ ...options.bash, sandbox: options.sandbox ?? options.bash?.sandbox, workspace }),
    createReadFileTool({ workspace }),
    createWriteFileTool({ workspace }),
    createEditFileTool({ workspace }),
    createListFilesTool({ workspace }),
    createGrepTool({ ...options.grep, workspace }),
    createGlobTool({ workspace }),
  ];
}
