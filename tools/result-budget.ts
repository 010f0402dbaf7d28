import type { ImageContent, TextContent } from "../core/messages.js";
import type { ToolResult } from "./define-tool.js";
import type { Workspace } from "./workspace.js";

/**
 * Characters of text a tool result may put into the history when neither the agent
 * (`toolResultBudget.maxChars`) nor the tool (`maxResultChars`) says otherwise: about 12,500 tokens,
 * so a 200k-token context holds a dozen such results with room to spare, while a page of code, a
 * test run's failures or a long diff still arrive whole.
 */
export const DEFAULT_TOOL_RESULT_MAX_CHARS = 50_000;

/** What the budget cut from one result; kept in the result's `details.outputCut`. */
export interface OutputCut {
  /** Characters of text the tool returned. */
  totalChars: number;
  /** Lines of text the tool returned. */
  totalLines: number;
  /** Characters cut from the middle (the marker line not counted). */
  cutChars: number;
  /** Lines the cut touched. */
  cutLines: number;
  /** The budget that applied. */
  maxChars: number;
  /** Workspace-relative file holding the full output, when it was spilled to one. */
  path?: string;
}

/** Where the full output of a cut result goes: a workspace file `read_file` can page, or `details`. */
export interface SpillTarget {
  workspace: Workspace;
}

/**
 * Fits a tool result into `maxChars` characters of text before it enters the history: a result
 * within budget comes back unchanged (the same object); a longer one keeps its head and its tail
 * (cut at line ends where one is near) around a marker saying how much was cut and where the full
 * output is. The full text is spilled to a workspace file (`Workspace.saveToolOutput`, under
 * `.agent-machine/tool-output/`) when `spill` is given and the write succeeds (the marker tells the model to page it with `read_file`), else kept in
 * `details.fullOutput`; `details.outputCut` says what was cut. The tool's own details stay: merged
 * when they are an object, else under `details.toolDetails`. Images are not counted or cut.
 *
 * @example
 * ```ts
 * const fitted = await fitToolResult(result, { maxChars: 50_000, toolName: "fetch", toolCallId: "c1" });
 * fitted.details.outputCut; // { totalChars: 5_000_000, cutChars: 4_950_412, … }
 * ```
 */
export async function fitToolResult(
  result: ToolResult,
  options: { maxChars: number; toolName: string; toolCallId: string; spill?: SpillTarget },
): Promise<ToolResult> {
  const { maxChars } = options;
  if (!(maxChars > 0) || !Number.isFinite(maxChars)) return result;
  const totalChars = textChars(result);
  if (totalChars <= maxChars) return result;

  const full = joinedText(result);
  const spilled = options.spill ? await spill(full, options.spill, options) : undefined;
  const cut = cutText(full, maxChars, (counts) => markerText(counts, spilled));
  const outputCut: OutputCut = {
    totalChars: full.length,
    totalLines: lineCount(full),
    cutChars: cut.cutChars,
    cutLines: cut.cutLines,
    maxChars,
    ...(spilled !== undefined && { path: spilled }),
  };
  const content: (TextContent | ImageContent)[] = [
    { type: "text", text: cut.text },
    ...result.content.filter((block) => block.type !== "text"),
  ];
  const kept = spilled !== undefined ? { fullOutputPath: spilled } : { fullOutput: full };
  return { ...result, content, details: withDetails(result.details, { ...kept, outputCut }) };
}

/** Characters of text in a result (images do not count). */
export function textChars(result: ToolResult): number {
  let chars = 0;
  for (const block of result.content) if (block.type === "text") chars += block.text.length;
  return chars;
}

interface CutCounts {
  cutChars: number;
  cutLines: number;
  totalChars: number;
  totalLines: number;
}

/**
 * Keeps the head and the tail of `text` so that head + marker + tail fit in `maxChars`. The cut
 * moves to a line end when one lies within a fifth of a window, and never splits a surrogate pair.
 *
 * @example
 * ```ts
 * cutText("a\n".repeat(1000), 100, ({ cutLines }) => `[${cutLines} lines cut]`).text;
 * ```
 */
export function cutText(
  text: string,
  maxChars: number,
  marker: (counts: CutCounts) => string,
): { text: string; cutChars: number; cutLines: number } {
  if (text.length <= maxChars) return { text, cutChars: 0, cutLines: 0 };
  const totalLines = lineCount(text);
  // The marker's length depends on the counts only through their digits: size it for the largest.
  const room = Math.max(
    0,
    maxChars -
      marker({ cutChars: text.length, cutLines: totalLines, totalChars: text.length, totalLines }).length -
      4,
  );
  const headWindow = Math.ceil(room / 2);
  const tailWindow = Math.floor(room / 2);

  let headEnd = headWindow;
  const lastNewline = text.lastIndexOf("\n", headWindow - 1);
  if (lastNewline >= 0 && headWindow - lastNewline <= headWindow / 5) headEnd = lastNewline + 1;
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd--;

  let tailStart = text.length - tailWindow;
  const nextNewline = text.indexOf("\n", tailStart);
  if (nextNewline >= 0 && nextNewline + 1 - tailStart <= tailWindow / 5) tailStart = nextNewline + 1;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart++;
  tailStart = Math.max(tailStart, headEnd);

  const cutChars = tailStart - headEnd;
  const cutLines = Math.max(1, lineCount(text.slice(headEnd, tailStart)) - 1);
  const line = marker({ cutChars, cutLines, totalChars: text.length, totalLines });
  const head = text.slice(0, headEnd);
  const tail = text.slice(tailStart);
  const before = head.endsWith("\n") || head === "" ? "" : "\n";
  const after = tail.startsWith("\n") || tail === "" ? "" : "\n";
  return { text: `${head}${before}${line}${after}${tail}`, cutChars, cutLines };
}

function markerText(counts: CutCounts, spilledTo: string | undefined): string {
  const what =
    `[... ${n(counts.cutChars)} of ${n(counts.totalChars)} characters (${n(counts.cutLines)} of ` +
    `${n(counts.totalLines)} lines) cut from the middle of this output`;
  return spilledTo !== undefined
    ? `${what}. The full output is in ${spilledTo}: read it with read_file, using offset and limit to page through it ...]`
    : `${what}; only its start and end are shown ...]`;
}

function n(value: number): string {
  return value.toLocaleString("en-US");
}

function lineCount(text: string): number {
  let lines = 1;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function joinedText(result: ToolResult): string {
  const texts = result.content.filter((block): block is TextContent => block.type === "text");
  return texts.length === 1 ? texts[0]!.text : texts.map((block) => block.text).join("\n");
}

function withDetails(details: unknown, extra: Record<string, unknown>): Record<string, unknown> {
  if (details === undefined) return extra;
  if (typeof details === "object" && details !== null && !Array.isArray(details)) {
    return { ...(details as Record<string, unknown>), ...extra };
  }
  return { toolDetails: details, ...extra };
}

/**
 * Saves the full output with the workspace (`saveToolOutput`). Returns the workspace-relative path,
 * or `undefined` when the workspace cannot save files or the write failed (the caller keeps the
 * output in `details` instead: a full disk never fails the call).
 */
async function spill(
  text: string,
  target: SpillTarget,
  names: { toolName: string; toolCallId: string },
): Promise<string | undefined> {
  if (!target.workspace.saveToolOutput) return undefined;
  const name = `${safe(names.toolName)}-${safe(names.toolCallId)}-${randomHex(6)}.txt`;
  try {
    return await target.workspace.saveToolOutput(name, text);
  } catch {
    return undefined;
  }
}

function randomHex(digits: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(Math.ceil(digits / 2)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0"))
    .join("")
    .slice(0, digits);
}

function safe(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "call";
}
