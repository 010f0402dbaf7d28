import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { writeFileInside } from "./internal/safe-fs.js";
import { toWorkspace, type Workspace } from "./workspace.js";

/** Options of {@link createWriteFileTool}. */
export interface WriteFileToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
}

/** `details` of a write_file result. */
export interface WriteFileDetails {
  path: string;
  bytes: number;
  created: boolean;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    path: z.string().describe("File path, relative to the workspace root"),
    content: z.string().describe("The complete new content of the file"),
  }),
);

/**
 * The `write_file` tool: creates or overwrites a file inside the workspace, creating missing parent
 * folders. Refuses paths outside the workspace and writes into `.git/`, `.husky/`, `node_modules/`.
 *
 * @example
 * ```ts
 * const write = createWriteFileTool({ workspace: process.cwd() });
 * ```
 */
export function createWriteFileTool(
  options: WriteFileToolOptions,
): Tool<z.output<ReturnType<typeof parameters>>, WriteFileDetails> {
  checkOptionKeys("createWriteFileTool", options, { workspace: true });
  const workspace = toWorkspace(options.workspace);
  return defineTool({
    name: "write_file",
    description:
      "Creates or overwrites a file of the workspace with the given content (parent folders are created). Prefer edit_file to change part of an existing file.",
    parameters: parameters(),
    readOnly: false,
    workspace,
    async execute(args): Promise<ToolResult<WriteFileDetails>> {
      // "notes/" names a folder: writing a file called "notes" is not what the model asked for.
      if (/[/\\]$/.test(args.path.trim())) {
        throw new Error(
          `${args.path} ends with a slash, so it names a folder; write_file writes a file: give the file's path (folders on the way are created)`,
        );
      }
      const { relative } = await workspace.resolveForWrite(args.path);
      if (relative === ".") throw new Error(`${args.path} is a directory`);
      // Reached again from the root without following links: a folder swapped for a symlink since
      // the check above cannot take the write outside.
      const { created } = await writeFileInside(workspace.root, relative, args.content);
      const bytes = Buffer.byteLength(args.content);
      return {
        content: [
          { type: "text", text: `${created ? "Created" : "Overwrote"} ${relative} (${bytes} bytes)` },
        ],
        details: { path: relative, bytes, created },
      };
    },
  });
}
