import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { walk } from "./internal/walk.js";
import { toWorkspace, type Workspace } from "./workspace.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/** Options of {@link createListFilesTool}. */
export interface ListFilesToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
  /** Entries returned when the model gives no `limit`. Default 500. */
  defaultLimit?: number;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    path: z
      .string()
      .optional()
      .describe("Folder to list, relative to the workspace root (default: the root)"),
    recursive: z.boolean().optional().describe("Also list sub-folders (skips .git and node_modules)"),
    limit: z.number().int().min(1).optional().describe("Maximum number of entries (default 500)"),
  }),
);

/**
 * The `list_files` tool: lists a folder of the workspace, one entry per line relative to the
 * workspace root, folders with a trailing `/`, sorted; optionally recursive.
 *
 * @example
 * ```ts
 * const list = createListFilesTool({ workspace: process.cwd() });
 * ```
 */
export function createListFilesTool(
  options: ListFilesToolOptions,
): Tool<z.output<ReturnType<typeof parameters>>> {
  checkOptionKeys("createListFilesTool", options, { workspace: true, defaultLimit: true });
  const workspace = toWorkspace(options.workspace);
  const defaultLimit = options.defaultLimit ?? 500;
  return defineTool({
    name: "list_files",
    description:
      "Lists the files and folders of a workspace folder (folders end with /). Set recursive to include sub-folders; .git and node_modules are skipped when recursing.",
    parameters: parameters(),
    readOnly: true,
    workspace,
    async execute(args, ctx): Promise<ToolResult> {
      const { absolute, relative } = await workspace.resolve(args.path ?? ".");
      const info = await nodeFsPromises()
        .stat(absolute)
        .catch(() => undefined);
      if (!info) throw new Error(`Folder not found: ${args.path}`);
      if (!info.isDirectory())
        throw new Error(`${args.path} is a file, not a folder; use read_file to read it`);
      const limit = args.limit ?? defaultLimit;
      const entries: string[] = [];
      let more = false;
      for await (const entry of walk(workspace.root, absolute, {
        maxDepth: args.recursive ? undefined : 1,
        signal: ctx.signal,
      })) {
        if (entries.length >= limit) {
          more = true;
          break;
        }
        entries.push(entry.isDirectory ? `${entry.relative}/` : entry.relative);
      }
      entries.sort();
      let text =
        entries.length === 0
          ? `${relative === "." ? "The workspace" : relative} is empty`
          : entries.join("\n");
      if (more) text += `\n[... listing cut at ${limit} entries; list a sub-folder or raise limit ...]`;
      return {
        content: [{ type: "text", text }],
        details: { path: relative, entries: entries.length, truncated: more },
      };
    },
  });
}
