import { spawn } from "node:child_process";
import { accessSync, constants, createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { z } from "zod";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { globToRegExp } from "./internal/glob-pattern.js";
import { walk } from "./internal/walk.js";
import { toWorkspace, type Workspace } from "./workspace.js";

/** Options of {@link createGrepTool}. */
export interface GrepToolOptions {
  /** Workspace root (a path) or a {@link Workspace}. */
  workspace: string | Workspace;
  /**
   * `true`: use ripgrep (`rg` on PATH, or this path when a string); `false`: always the built-in
   * JavaScript search. Default: ripgrep when `rg` is on PATH.
   */
  ripgrep?: boolean | string;
  /** Matches returned when the model gives no `limit`. Default 200. */
  defaultLimit?: number;
  /** Characters shown of one matching line. Default 500. */
  maxLineLength?: number;
}

/** `details` of a grep result. */
export interface GrepDetails {
  engine: "ripgrep" | "javascript";
  matches: number;
  truncated: boolean;
}

const parameters = z.object({
  pattern: z.string().min(1).describe("Regular expression to search for"),
  path: z
    .string()
    .optional()
    .describe("File or folder to search, relative to the workspace root (default: the root)"),
  glob: z.string().optional().describe('Only search files whose name matches this glob, e.g. "*.ts"'),
  ignore_case: z.boolean().optional().describe("Case-insensitive search"),
  files_only: z.boolean().optional().describe("List matching file paths only, not the lines"),
  limit: z.number().int().min(1).optional().describe("Maximum number of matches (default 200)"),
});

type GrepArgs = z.output<typeof parameters>;

interface Match {
  file: string;
  line: number;
  text: string;
}

/**
 * Finds `rg` on PATH; `undefined` when it is not installed.
 *
 * @example
 * ```ts
 * const grep = createGrepTool({ workspace, ripgrep: findRipgrep() !== undefined });
 * ```
 */
export function findRipgrep(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * The `grep` tool: searches file contents for a regular expression and returns `path:line:text`
 * lines sorted by path and line, relative to the workspace root. It uses ripgrep when `rg` is on
 * PATH and a pure-JavaScript search otherwise; both give the same output format, skip `.git` and
 * `node_modules` and binary files, and do not apply `.gitignore`.
 *
 * @example
 * ```ts
 * const grep = createGrepTool({ workspace: process.cwd() });
 * ```
 */
export function createGrepTool(options: GrepToolOptions): Tool<GrepArgs, GrepDetails> {
  checkOptionKeys("createGrepTool", options, {
    workspace: true,
    ripgrep: true,
    defaultLimit: true,
    maxLineLength: true,
  });
  const workspace = toWorkspace(options.workspace);
  const defaultLimit = options.defaultLimit ?? 200;
  const maxLineLength = options.maxLineLength ?? 500;
  let rgPath: string | undefined;
  if (typeof options.ripgrep === "string") rgPath = options.ripgrep;
  else if (options.ripgrep !== false) {
    rgPath = findRipgrep();
    if (options.ripgrep === true && !rgPath) throw new Error("ripgrep (rg) is not on PATH");
  }

  return defineTool({
    name: "grep",
    description:
      'Searches file contents in the workspace for a regular expression. Returns path:line:text for each matching line (or only paths with files_only), sorted. Filter files with glob (e.g. "*.ts"). Skips .git, node_modules and binary files.',
    parameters,
    readOnly: true,
    workspace,
    async execute(args, ctx): Promise<ToolResult<GrepDetails>> {
      const target = await workspace.resolve(args.path ?? ".");
      const info = await stat(target.absolute).catch(() => undefined);
      if (!info) throw new Error(`Path not found: ${args.path}`);
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, args.ignore_case ? "i" : "");
      } catch (error) {
        throw new Error(
          `Invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      const limit = args.limit ?? defaultLimit;
      const search = { target: target.relative, isFile: info.isFile(), limit, signal: ctx.signal };
      const { matches, truncated } = rgPath
        ? await searchWithRipgrep(rgPath, workspace.root, args, search)
        : await searchWithJavaScript(workspace.root, regex, args, search);
      const engine = rgPath ? "ripgrep" : "javascript";
      const cut = (text: string) =>
        text.length > maxLineLength ? `${text.slice(0, maxLineLength)} [... line cut ...]` : text;
      let text: string;
      if (matches.length === 0) text = `No matches for ${JSON.stringify(args.pattern)}`;
      else if (args.files_only) text = matches.map((m) => m.file).join("\n");
      else text = matches.map((m) => `${m.file}:${m.line}:${cut(m.text)}`).join("\n");
      if (truncated) {
        text += `\n[... results cut at ${limit} ${args.files_only ? "files" : "matches"}; narrow the pattern, path or glob ...]`;
      }
      return { content: [{ type: "text", text }], details: { engine, matches: matches.length, truncated } };
    },
  });
}

interface SearchScope {
  /** Workspace-relative file or folder. */
  target: string;
  isFile: boolean;
  limit: number;
  signal: AbortSignal;
}

function compareMatches(a: Match, b: Match): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  return a.line - b.line;
}

async function searchWithRipgrep(
  rg: string,
  root: string,
  args: GrepArgs,
  scope: SearchScope,
): Promise<{ matches: Match[]; truncated: boolean }> {
  const rgArgs = [
    "--line-number",
    "--with-filename",
    "--no-heading",
    "--color=never",
    "--no-ignore",
    "--hidden",
    "--no-messages",
    "--sort=path",
    "--glob=!.git",
    "--glob=!node_modules",
  ];
  if (args.ignore_case) rgArgs.push("--ignore-case");
  // --null ends a path with NUL instead of ":" (paths may hold colons); with --files-with-matches it
  // would replace the newline too, so paths-only output stays newline-separated.
  rgArgs.push(args.files_only ? "--files-with-matches" : "--null");
  if (args.glob) rgArgs.push(`--glob=${args.glob}`);
  rgArgs.push("--regexp", args.pattern, "--", scope.target);

  const child = spawn(rg, rgArgs, { cwd: root, stdio: ["ignore", "pipe", "pipe"], signal: scope.signal });
  const matches: Match[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString("utf8");
  });
  let overflow = false;
  const lines = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
  const exit = new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("close", (code) => resolve(code));
  });
  for await (const line of lines) {
    const nul = line.indexOf("\0");
    const file = normalizeRgPath(nul === -1 ? line : line.slice(0, nul));
    if (args.files_only) {
      matches.push({ file, line: 0, text: "" });
    } else {
      const rest = line.slice(nul + 1);
      const colon = rest.indexOf(":");
      matches.push({
        file,
        line: Number(rest.slice(0, colon)),
        text: rest.slice(colon + 1).replace(/\r$/, ""),
      });
    }
    if (matches.length > scope.limit) {
      overflow = true;
      matches.pop();
      child.kill();
      break;
    }
  }
  const code = await exit;
  if (scope.signal.aborted) throw new Error("Search aborted");
  if (code === 2 && matches.length === 0 && !overflow) {
    throw new Error(`ripgrep failed: ${stderr.trim() || "unknown error"}`);
  }
  // rg sorts by path already; sort again so both engines agree byte for byte (e.g. on non-ASCII names).
  matches.sort(compareMatches);
  return { matches, truncated: overflow };
}

function normalizeRgPath(file: string): string {
  return file.replace(/^\.\//, "");
}

async function isBinary(absolute: string): Promise<boolean> {
  const handle = await open(absolute, "r");
  try {
    const buffer = Buffer.alloc(8192);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle.close();
  }
}

async function searchWithJavaScript(
  root: string,
  regex: RegExp,
  args: GrepArgs,
  scope: SearchScope,
): Promise<{ matches: Match[]; truncated: boolean }> {
  const matches: Match[] = [];
  const fileFilter = args.glob ? globToRegExp(args.glob) : undefined;
  const targetAbsolute = path.join(root, scope.target);
  const files: { relative: string; absolute: string }[] = [];
  if (scope.isFile) {
    files.push({ relative: scope.target, absolute: targetAbsolute });
  } else {
    for await (const entry of walk(root, targetAbsolute, { signal: scope.signal })) {
      if (entry.isDirectory) continue;
      const relativeToTarget = path.relative(targetAbsolute, entry.absolute).split(path.sep).join("/");
      if (fileFilter && !fileFilter.test(relativeToTarget)) continue;
      files.push(entry);
    }
  }
  files.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
  for (const file of files) {
    if (scope.signal.aborted) throw new Error("Search aborted");
    if (await isBinary(file.absolute).catch(() => true)) continue;
    const lines = createInterface({
      input: createReadStream(file.absolute),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let lineNumber = 0;
    try {
      for await (const line of lines) {
        lineNumber++;
        if (!regex.test(line)) continue;
        if (matches.length >= scope.limit) return { matches, truncated: true };
        matches.push({ file: file.relative, line: lineNumber, text: line });
        if (args.files_only) break;
      }
    } finally {
      lines.close();
    }
  }
  return { matches, truncated: false };
}
