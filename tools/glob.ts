import * as path from "node:path";
import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { globToRegExp } from "./internal/glob-pattern.js";
import { walk } from "./internal/walk.js";
import { toWorkspace, type Workspace } from "./workspace.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/** Options of {@link createGlobTool}. */
export interface GlobToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
  /** Paths returned when the model gives no `limit`. Default 1 000. */
  defaultLimit?: number;
}

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    pattern: z
      .string()
      .min(1)
      .describe(
        'Glob such as "**/*.ts" or "src/**/test_*.py"; a pattern without / matches file names anywhere',
      ),
    path: z.string().optional().describe("Folder the pattern is relative to (default: the workspace root)"),
    limit: z.number().int().min(1).optional().describe("Maximum number of paths (default 1000)"),
  }),
);

/**
 * The `glob` tool: finds files whose path matches a glob (`**`, `*`, `?`, `{a,b}`, `[abc]`), sorted,
 * relative to the workspace root. `.git` and `node_modules` are skipped.
 *
 * @example
 * ```ts
 * const glob = createGlobTool({ workspace: process.cwd() });
 * ```
 */
export function createGlobTool(options: GlobToolOptions): Tool<z.output<ReturnType<typeof parameters>>> {
  checkOptionKeys("createGlobTool", options, { workspace: true, defaultLimit: true });
  const workspace = toWorkspace(options.workspace);
  const defaultLimit = options.defaultLimit ?? 1000;
  return defineTool({
    name: "glob",
    description:
      'Finds files by glob pattern (e.g. "**/*.ts", "src/**/*.{js,jsx}"); returns matching paths relative to the workspace root, sorted. Skips .git and node_modules.',
    parameters: parameters(),
    readOnly: true,
    workspace,
    async execute(args, ctx): Promise<ToolResult> {
      const base = await workspace.resolve(args.path ?? ".");
      const info = await nodeFsPromises()
        .stat(base.absolute)
        .catch(() => undefined);
      if (!info?.isDirectory()) throw new Error(`Folder not found: ${args.path}`);
      const matcher = patternMatcher(args.pattern, base.absolute, workspace.root);
      const limit = args.limit ?? defaultLimit;
      const matches: string[] = [];
      for await (const entry of walk(workspace.root, base.absolute, { signal: ctx.signal })) {
        if (entry.isDirectory) continue;
        const relativeToBase = path.relative(base.absolute, entry.absolute).split(path.sep).join("/");
        if (matcher.test(relativeToBase)) matches.push(entry.relative);
      }
      matches.sort();
      const shown = matches.slice(0, limit);
      let text = shown.length === 0 ? `No files match ${args.pattern}` : shown.join("\n");
      if (matches.length > limit) {
        text += `\n[... ${matches.length - limit} more paths not shown; narrow the pattern or raise limit ...]`;
      }
      return { content: [{ type: "text", text }], details: { matches: matches.length } };
    },
  });
}

/**
 * The matcher of a model's pattern, relative to the search folder. Models often give the absolute
 * path they saw (`/home/me/project/src/*.ts`): inside the search folder it is made relative (and
 * matches from that folder, not any file name anywhere). A pattern that climbs out (`../*`, an
 * absolute path elsewhere) could never match a file of the search, so it is an error that says so
 * instead of "No files match".
 *
 * @example
 * ```ts
 * patternMatcher("/ws/src/*.ts", "/ws", "/ws").test("src/a.ts"); // true
 * ```
 */
export function patternMatcher(pattern: string, base: string, root: string): RegExp {
  const absolute = path.isAbsolute(pattern);
  const relative = absolute ? path.relative(base, pattern).split(path.sep).join("/") : pattern;
  if (relative === ".." || relative.startsWith("../") || path.isAbsolute(relative)) {
    const where = base === root ? "the workspace" : "the search folder";
    throw new Error(
      `Pattern "${pattern}" points outside ${where} (${base}); glob only finds files inside it. Give a pattern relative to ${where}, such as "**/*.ts"${base === root ? "" : ", or a different path"}.`,
    );
  }
  return globToRegExp(relative === "" ? "*" : relative, { matchBaseName: !absolute, strict: true });
}
