import { readFileSync, realpathSync, statSync } from "node:fs";
import * as path from "node:path";
import { importPageModule } from "../visualizer/page-directory.js";
import type { Style } from "./style.js";
import { fitToColumns, terminalSafe, visibleText, wrapToColumns } from "./terminal-text.js";

// The page's diff (visualizer/page/diff-rows.js): approval cards in the browser and in the terminal
// show the same rows. It ships as the page's plain JavaScript, so it is loaded from the page's folder.
const { diffHunks } =
  await importPageModule<typeof import("../visualizer/page/diff-rows.js")>("diff-rows.js");

/** Files larger than this are not read to show a change (the size is shown instead). */
const MAX_SHOWN_BYTES = 1024 * 1024;
/** Lines of a diff shown before the rest is folded. */
export const DIFF_LINES = 40;

/** A file of the workspace as it is now: its text, `missing`, or why it cannot be shown. */
type FileNow = { kind: "text"; text: string } | { kind: "missing" } | { kind: "unshown"; why: string };

/**
 * Reads a workspace file to show what a call changes in it. Only for the screen: a path outside
 * the workspace (also through a symbolic link) or a large file is not read.
 */
function readWorkspaceFile(cwd: string, file: string): FileNow {
  const absolute = path.resolve(cwd, file);
  const inside = (p: string, root: string) => p === root || p.startsWith(`${root}${path.sep}`);
  if (!inside(absolute, cwd)) return { kind: "unshown", why: "outside the workspace" };
  let real: string;
  try {
    real = realpathSync(absolute);
  } catch {
    return { kind: "missing" };
  }
  let root = cwd;
  try {
    root = realpathSync(cwd);
  } catch {}
  if (!inside(real, root)) return { kind: "unshown", why: "outside the workspace" };
  const info = statSync(real);
  if (!info.isFile()) return { kind: "unshown", why: "not a regular file" };
  if (info.size > MAX_SHOWN_BYTES) return { kind: "unshown", why: `${info.size} bytes` };
  return { kind: "text", text: readFileSync(real, "utf8") };
}

/** The file's text after `edit_file` with these arguments, as the tool computes it; or why it fails. */
function editedText(
  text: string,
  args: { old_string?: unknown; new_string?: unknown; replace_all?: unknown },
): string | { fails: string } {
  const { old_string: oldString, new_string: newString } = args;
  if (typeof oldString !== "string" || typeof newString !== "string" || oldString === "")
    return { fails: "malformed arguments" };
  const count = text.split(oldString).length - 1;
  if (count === 0) return { fails: "old_string is not in the file" };
  if (count > 1 && args.replace_all !== true) return { fails: `old_string occurs ${count} times` };
  return args.replace_all === true
    ? text.split(oldString).join(newString)
    : text.replace(oldString, () => newString);
}

/**
 * A coloured unified diff of `before` → `after`, hunks only (the call's line names the file):
 * `@@` headers, removed and added lines in the theme's diff colours (the sign says which). Each line is terminal-safe
 * and cut to `columns`, the diff folded after {@link DIFF_LINES} lines; with `whole` (what an
 * approval shows) nothing is cut or folded: long lines wrap, and invisible characters are shown
 * as escapes ({@link visibleText}).
 *
 * @example
 * ```ts
 * diffLines("a\nb\n", "a\nc\n", createStyle(false), 80);
 * // ["@@ -1,2 +1,2 @@", " a", "-b", "+c"]
 * ```
 */
export function diffLines(
  before: string,
  after: string,
  style: Style,
  columns: number,
  options: { whole?: boolean } = {},
): string[] {
  const lines: string[] = [];
  const fit = (line: string): string[] =>
    options.whole
      ? wrapToColumns(visibleText(line), columns, " ")
      : [fitToColumns(terminalSafe(line.slice(0, columns * 4)), columns)];
  for (const hunk of diffHunks(before, after)) {
    // As `diff -u` writes it: an empty side starts at the line before (`-0,0` for a new file).
    const start = (at: number, count: number) => `${count === 0 ? at - 1 : at},${count}`;
    lines.push(
      style.hunk(`@@ -${start(hunk.oldStart, hunk.oldLines)} +${start(hunk.newStart, hunk.newLines)} @@`),
    );
    for (const { sign, text } of hunk.rows) {
      const paint = sign === "+" ? style.added : sign === "-" ? style.removed : style.muted;
      for (const row of fit(`${sign}${text}`)) lines.push(paint(row));
    }
  }
  if (options.whole || lines.length <= DIFF_LINES) return lines;
  const hidden = lines.length - (DIFF_LINES - 1);
  return [...lines.slice(0, DIFF_LINES - 1), style.muted(`… ${hidden} more diff lines`)];
}

const record = (args: unknown): Record<string, unknown> =>
  args && typeof args === "object" ? (args as Record<string, unknown>) : {};

/**
 * What an approval question is about, as lines shown above it: the coloured diff of an
 * `edit_file`; for a `write_file` the diff against the file it replaces, or the new file; the
 * whole command of a `bash` call; the arguments of any other tool. Nothing is cut or folded: long
 * lines wrap to `columns` (a command's next line starts with `> `, a wrapped row with spaces),
 * and every character that could make the text look other than it is (a right-to-left override,
 * a zero-width space, a control character) is shown as its escape (`\u202E`), so what is shown is
 * what runs.
 *
 * @example
 * ```ts
 * for (const line of approvalPreview(cwd, "edit_file", args, style, 100)) view.note(line);
 * ```
 */
export function approvalPreview(
  cwd: string,
  toolName: string,
  args: unknown,
  style: Style,
  columns: number,
): string[] {
  const a = record(args);
  const wrap = (line: string, indent = "  ") => wrapToColumns(visibleText(line), columns, indent);
  if (toolName === "bash" && typeof a.command === "string") {
    return a.command
      .split("\n")
      .flatMap((line, i) => wrap(`${i === 0 ? "$ " : "> "}${line}`))
      .map((row) => style.bold(row));
  }
  if ((toolName === "edit_file" || toolName === "write_file") && typeof a.path === "string") {
    const shownPath = visibleText(a.path, { newlines: "mark" });
    const now = readWorkspaceFile(cwd, a.path);
    if (now.kind === "unshown") return [style.muted(`(${shownPath}: ${now.why}; not shown)`)];
    if (toolName === "edit_file") {
      if (now.kind === "missing") return [style.warning(`(${shownPath} does not exist: the edit will fail)`)];
      const after = editedText(now.text, a);
      if (typeof after !== "string") return [style.warning(`(${after.fails}: the edit will fail)`)];
      return diffLines(now.text, after, style, columns, { whole: true });
    }
    if (typeof a.content !== "string") return [style.warning("(no content: the write will fail)")];
    if (now.kind === "text") return diffLines(now.text, a.content, style, columns, { whole: true });
    const lines = a.content.replace(/\n$/, "").split("\n");
    const size = Buffer.byteLength(a.content);
    return [
      style.muted(`new file, ${lines.length} line${lines.length === 1 ? "" : "s"}, ${size} bytes`),
      ...lines.flatMap((line) => wrap(`+${line}`, " ")).map((row) => style.added(row)),
    ];
  }
  const json = JSON.stringify(args, null, 2) ?? "";
  return json
    .split("\n")
    .flatMap((line) => wrap(line, "    "))
    .map((row) => style.muted(row));
}

/**
 * Captures a file before an `edit_file` / `write_file` call runs, and returns what gives the diff
 * the call applied once it has run (`undefined` for other tools, or a file that cannot be shown).
 *
 * @example
 * ```ts
 * const applied = captureChange(cwd, "edit_file", args); // at tool_execution_start
 * const lines = applied?.(style, 100); // at tool_execution_end
 * ```
 */
export function captureChange(
  cwd: string,
  toolName: string,
  args: unknown,
): ((style: Style, columns: number) => string[]) | undefined {
  const file = record(args).path;
  if ((toolName !== "edit_file" && toolName !== "write_file") || typeof file !== "string") return undefined;
  let before: FileNow;
  try {
    before = readWorkspaceFile(cwd, file);
  } catch {
    return undefined;
  }
  if (before.kind === "unshown") return undefined;
  return (style, columns) => {
    try {
      const after = readWorkspaceFile(cwd, file);
      if (after.kind !== "text") return [];
      return diffLines(before.kind === "text" ? before.text : "", after.text, style, columns);
    } catch {
      return [];
    }
  };
}
