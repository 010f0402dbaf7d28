import type { FileHandle } from "node:fs/promises";
import * as path from "node:path";
import { z } from "zod";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { defineTool, type Tool, type ToolResult } from "./define-tool.js";
import { globToRegExp } from "./internal/glob-pattern.js";
import { findNestedQuantifier } from "./internal/nested-quantifier.js";
import { openForReadInside } from "./internal/safe-fs.js";
import { walk } from "./internal/walk.js";
import { toWorkspace, type Workspace } from "./workspace.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

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

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    pattern: z.string().min(1).describe("Regular expression to search for"),
    path: z
      .string()
      .optional()
      .describe("File or folder to search, relative to the workspace root (default: the root)"),
    glob: z.string().optional().describe('Only search files whose name matches this glob, e.g. "*.ts"'),
    ignore_case: z.boolean().optional().describe("Case-insensitive search"),
    files_only: z.boolean().optional().describe("List matching file paths only, not the lines"),
    limit: z.number().int().min(1).optional().describe("Maximum number of matches (default 200)"),
  }),
);

type GrepArgs = z.output<ReturnType<typeof parameters>>;

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
      nodeFs().accessSync(candidate, nodeFs().constants.X_OK);
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
    parameters: parameters(),
    readOnly: true,
    workspace,
    async execute(args, ctx): Promise<ToolResult<GrepDetails>> {
      const target = await workspace.resolve(args.path ?? ".");
      const info = await nodeFsPromises()
        .stat(target.absolute)
        .catch(() => undefined);
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
      const nested = rgPath ? undefined : findNestedQuantifier(args.pattern);
      if (nested !== undefined) {
        throw new Error(
          `Pattern ${JSON.stringify(args.pattern)} repeats a group that itself repeats (${nested}): on a line that almost matches it can run for minutes and block everything. Write it without the nested repetition (e.g. "(ab)+" or "\\w+(\\s\\w+)*")${options.ripgrep === false ? "" : ", or install ripgrep (rg), whose search time stays linear"}.`,
        );
      }
      // Checked here for both engines, so a bad glob is the same error with ripgrep and without.
      if (args.glob !== undefined) globToRegExp(args.glob, { strict: true });
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
  // --null ends a path with NUL instead of ":" (paths may hold colons). Paths-only searches ask for
  // each file's first matching line too, so that every file reported can be verified (below).
  rgArgs.push("--null");
  if (args.files_only) rgArgs.push("--max-count=1");
  if (args.glob) rgArgs.push(`--glob=${args.glob}`);
  rgArgs.push("--regexp", args.pattern, "--", scope.target);

  // Node's child_process and readline load on first use, not with the package (issue 44).
  const { spawn } = process.getBuiltinModule("node:child_process");
  const { createInterface } = process.getBuiltinModule("node:readline");
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
    const rest = line.slice(nul + 1);
    const colon = rest.indexOf(":");
    matches.push({
      file,
      line: Number(rest.slice(0, colon)),
      text: rest.slice(colon + 1).replace(/\r$/, ""),
    });
    if (matches.length > scope.limit) {
      overflow = true;
      matches.pop();
      child.kill();
      break;
    }
  }
  const code = await exit;
  if (scope.signal.aborted) throw new Error("Search aborted");
  // With --no-messages, rg is silent about files it could not read (exit 2, as the JavaScript search
  // skips them too); what it still prints is a real failure (a bad pattern, a bad glob).
  if (code === 2 && matches.length === 0 && !overflow && stderr.trim() !== "") {
    throw new Error(`ripgrep failed: ${stderr.trim()}`);
  }
  if (code === null && !overflow) throw new Error(`ripgrep could not be run: ${stderr.trim() || rg}`);
  // rg sorts by path already; sort again so both engines agree byte for byte (e.g. on non-ASCII names).
  matches.sort(compareMatches);
  const verified = await verifyMatches(root, matches, scope.signal);
  return { matches: verified, truncated: overflow };
}

/**
 * Keeps only the matches that the file at that path, opened through a descriptor verified to lie
 * inside the workspace, really has. rg does not follow symlinks while it walks, but it opens files by
 * path: a folder swapped for a symlink between its walk and its read would show an outside file's
 * lines. This re-reads each matching file up to its last matching line, so no line ever comes from
 * outside the workspace, whatever happened meanwhile.
 */
async function verifyMatches(root: string, matches: Match[], signal: AbortSignal): Promise<Match[]> {
  const byFile = new Map<string, Match[]>();
  for (const match of matches) {
    const list = byFile.get(match.file);
    if (list) list.push(match);
    else byFile.set(match.file, [match]);
  }
  const kept = new Set<Match>();
  for (const [file, fileMatches] of byFile) {
    if (signal.aborted) throw new Error("Search aborted");
    const handle = await openForReadInside(root, path.join(root, file), file).catch(() => undefined);
    if (!handle) continue;
    try {
      if (!(await handle.stat()).isFile()) continue;
      const wanted = new Map(fileMatches.map((match) => [match.line, match]));
      const last = Math.max(...wanted.keys());
      await forEachLine(handle, (text, lineNumber) => {
        const match = wanted.get(lineNumber);
        if (match && match.text === text) kept.add(match);
        return lineNumber < last;
      });
    } finally {
      await handle.close();
    }
  }
  return matches.filter((match) => kept.has(match));
}

/**
 * Calls `onLine` with each line of the open file (split on "\n" only, a trailing "\r" removed, as rg
 * numbers them) until it returns false.
 */
async function forEachLine(
  handle: FileHandle,
  onLine: (text: string, lineNumber: number) => boolean,
): Promise<void> {
  const stream = handle.createReadStream({ start: 0, autoClose: false, highWaterMark: 64 * 1024 });
  let pending: Buffer[] = [];
  let lineNumber = 0;
  const emit = (parts: Buffer[]) =>
    onLine(Buffer.concat(parts).toString("utf8").replace(/\r$/, ""), ++lineNumber);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
        pending.push(chunk.subarray(start, newline));
        const more = emit(pending);
        pending = [];
        start = newline + 1;
        if (!more) return;
      }
      if (start < chunk.length) pending.push(Buffer.from(chunk.subarray(start)));
    }
    if (pending.length > 0 && pending.some((part) => part.length > 0)) emit(pending);
  } finally {
    stream.destroy();
  }
}

function normalizeRgPath(file: string): string {
  return file.replace(/^\.\//, "");
}

async function isBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(8192);
  const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}

async function searchWithJavaScript(
  root: string,
  regex: RegExp,
  args: GrepArgs,
  scope: SearchScope,
): Promise<{ matches: Match[]; truncated: boolean }> {
  const matches: Match[] = [];
  // A leading "/" anchors the glob at the workspace root, as ripgrep (run from the root) reads it.
  const anchored = args.glob?.startsWith("/") ?? false;
  const fileFilter = args.glob
    ? globToRegExp(anchored ? args.glob.slice(1) : args.glob, { matchBaseName: !anchored })
    : undefined;
  const targetAbsolute = path.join(root, scope.target);
  const files: { relative: string; absolute: string }[] = [];
  if (scope.isFile) {
    files.push({ relative: scope.target, absolute: targetAbsolute });
  } else {
    for await (const entry of walk(root, targetAbsolute, { signal: scope.signal })) {
      // Symlinks are not followed (as rg does not): a link to a file outside must not be read.
      if (entry.isDirectory || entry.isSymbolicLink) continue;
      const relativeToTarget = path.relative(targetAbsolute, entry.absolute).split(path.sep).join("/");
      if (fileFilter && !fileFilter.test(anchored ? entry.relative : relativeToTarget)) continue;
      files.push(entry);
    }
  }
  files.sort((a, b) => (a.relative < b.relative ? -1 : a.relative > b.relative ? 1 : 0));
  for (const file of files) {
    if (scope.signal.aborted) throw new Error("Search aborted");
    // Opened without following links and verified to lie inside the workspace; anything else
    // (swapped for a symlink since the walk, unreadable) is skipped like an unreadable file.
    const handle = await openForReadInside(root, file.absolute, file.relative).catch(() => undefined);
    if (!handle) continue;
    let truncated = false;
    try {
      if (!(await handle.stat()).isFile() || (await isBinary(handle))) continue;
      await forEachLine(handle, (line, lineNumber) => {
        if (!regex.test(line)) return true;
        if (matches.length >= scope.limit) {
          truncated = true;
          return false;
        }
        matches.push({ file: file.relative, line: lineNumber, text: line });
        return !args.files_only;
      });
    } finally {
      await handle.close();
    }
    if (truncated) return { matches, truncated: true };
  }
  return { matches, truncated: false };
}
