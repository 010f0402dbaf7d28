import { fitToColumns, terminalSafe } from "./terminal-text.js";

/** Lines of a successful call's output shown under its line. */
export const FOLDED_LINES = 4;
/** Lines of an error shown at most: errors show in full, but a 10,000-line one must not flood. */
export const ERROR_LINES = 40;

/**
 * Tools whose output is a file's or folder's contents, which the model reads and the user has no
 * need to: their line gets the size only.
 */
const CONTENT_TOOLS = new Set(["read_file", "list_files", "glob", "grep"]);
/** Tools whose output is a one-line report already (what was written, what was edited). */
const REPORT_TOOLS = new Set(["write_file", "edit_file"]);

/** `1.2 KB`, `340 B`, `2.5 MB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What a finished call shows of its output: a size beside its line, and lines under it. */
export interface FoldedOutput {
  /** Beside the tool line, after its time (`42 lines`, the error's first line). */
  detail?: string;
  /** Under the tool line, each cut to one row. */
  lines: string[];
}

/**
 * Folds a finished call's output for the screen, so a long output never floods the scrollback:
 * a command's last {@link FOLDED_LINES} lines (where a test run's verdict and the exit code are)
 * under a `… n lines above (size)` marker; the size only for tools that return contents (a file, a
 * listing); an error's first line beside the call and the rest under it, up to
 * {@link ERROR_LINES}. Every line is made terminal-safe and cut to `columns`.
 *
 * @example
 * ```ts
 * foldToolOutput("bash", "ok 1\nok 2\nok 3\nnot ok 4\n1 failed\n[Exit code: 1]", false, 80);
 * // { lines: ["… 2 lines above (46 B in all)", "ok 3", "not ok 4", "1 failed", "[Exit code: 1]"] }
 * ```
 */
export function foldToolOutput(
  toolName: string,
  text: string,
  isError: boolean,
  columns: number,
): FoldedOutput {
  const width = Math.max(10, columns);
  // Cut before measuring: a single line of megabytes must not be measured whole.
  const fit = (line: string) => fitToColumns(terminalSafe(line.slice(0, width * 4)), width);
  const trimmed = text.replace(/\s+$/, "");
  const all = trimmed === "" ? [] : trimmed.split("\n");
  const size = formatBytes(Buffer.byteLength(text));
  if (isError) {
    const [first = "", ...rest] = all;
    const shown = rest.length > ERROR_LINES ? rest.slice(0, ERROR_LINES - 1) : rest;
    const hidden = rest.length - shown.length;
    return {
      detail: first ? fit(first) : undefined,
      lines: [...shown.map(fit), ...(hidden ? [`… ${hidden} more lines (${size} in all)`] : [])],
    };
  }
  if (CONTENT_TOOLS.has(toolName)) {
    return {
      detail: all.length ? `${all.length} line${all.length === 1 ? "" : "s"}, ${size}` : undefined,
      lines: [],
    };
  }
  if (REPORT_TOOLS.has(toolName)) return { detail: all[0] ? fit(all[0]) : undefined, lines: [] };
  if (all.length === 0 || (all.length === 1 && all[0] === "(no output)")) return { lines: [] };
  if (all.length <= FOLDED_LINES + 1) return { lines: all.map(fit) };
  const hidden = all.length - FOLDED_LINES;
  return {
    lines: [
      `… ${hidden} line${hidden === 1 ? "" : "s"} above (${size} in all)`,
      ...all.slice(-FOLDED_LINES).map(fit),
    ],
  };
}
