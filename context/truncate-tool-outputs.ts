import type { AgentMessage, ToolResultMessage } from "../core/messages.js";
import type { ResolvedContextConfig } from "./config.js";
import { layoutTranscript } from "./units.js";

/** Room kept for the marker line and its two newlines; the longest marker is 36 characters. */
const MARKER_ROOM = 40;

function truncationMarker(lines: number): string {
  return `[... ${lines} lines truncated ...]`;
}

/**
 * Cuts a text to at most `maxLines` lines and `maxChars` characters, keeping its head and tail
 * around a `[... N lines truncated ...]` line (a line cut in part counts as truncated). A text
 * within both limits comes back unchanged, and every output is within them, so truncating twice
 * is the same as truncating once. `maxLines` ≥ 3 and `maxChars` ≥ 200 (`resolveContextConfig`
 * ensures both).
 *
 * @example
 * ```ts
 * truncateText(Array.from({ length: 10 }, (_, i) => `line ${i}`).join("\n"), 5, 1000);
 * // "line 0\nline 1\n[... 6 lines truncated ...]\nline 8\nline 9"
 * ```
 */
export function truncateText(text: string, maxLines: number, maxChars: number): string {
  if (text.length <= maxChars && countLines(text, maxLines) <= maxLines) return text;
  const lines = text.split("\n");
  const n = lines.length;
  const slots = Math.max(0, maxLines - 1);
  const headSlots = Math.ceil(slots / 2);
  const tailSlots = Math.floor(slots / 2);
  const room = Math.max(0, maxChars - MARKER_ROOM);
  const headChars = Math.ceil(room / 2);
  const tailChars = Math.floor(room / 2);

  const head: string[] = [];
  let used = 0;
  let fullHead = 0;
  while (fullHead < headSlots && fullHead < n) {
    const cost = lines[fullHead].length + (head.length > 0 ? 1 : 0);
    if (used + cost > headChars) break;
    head.push(lines[fullHead]);
    used += cost;
    fullHead++;
  }
  if (fullHead === 0 && headSlots > 0 && headChars > 0) head.push(lines[0].slice(0, headChars));

  const tail: string[] = [];
  used = 0;
  let t = n - 1;
  while (tail.length < tailSlots && t >= fullHead) {
    const cost = lines[t].length + (tail.length > 0 ? 1 : 0);
    if (used + cost > tailChars) break;
    tail.unshift(lines[t]);
    used += cost;
    t--;
  }
  const fullTail = tail.length;
  // A last line too long to keep whole is kept in part, unless the head already holds it whole.
  if (fullTail === 0 && tailSlots > 0 && tailChars > 0 && n - 1 >= fullHead)
    tail.push(lines[n - 1].slice(-tailChars));

  const truncated = n - fullHead - fullTail;
  return [...head, truncationMarker(truncated), ...tail].join("\n");
}

/** Lines in `text`, counting no further than `limit + 1`. */
function countLines(text: string, limit: number): number {
  let lines = 1;
  let at = text.indexOf("\n");
  while (at !== -1 && lines <= limit) {
    lines++;
    at = text.indexOf("\n", at + 1);
  }
  return lines;
}

const truncatedCache = new WeakMap<ToolResultMessage, { key: string; message: ToolResultMessage }>();

/**
 * A tool result with every text block truncated (`truncateText`); the same object when nothing
 * needed cutting. The copy keeps `details` (never sent to the model) and is cached per message, so
 * repeated compactions hand back the same object.
 *
 * @example
 * ```ts
 * truncateToolResult(result, 80, 8_000).content;
 * ```
 */
export function truncateToolResult(
  message: ToolResultMessage,
  maxLines: number,
  maxChars: number,
): ToolResultMessage {
  const key = `${maxLines}:${maxChars}`;
  const cached = truncatedCache.get(message);
  if (cached?.key === key) return cached.message;
  let changed = false;
  const content = message.content.map((block) => {
    if (block.type !== "text") return block;
    const text = truncateText(block.text, maxLines, maxChars);
    if (text === block.text) return block;
    changed = true;
    return { ...block, text };
  });
  const result = changed ? { ...message, content } : message;
  truncatedCache.set(message, { key, message: result });
  return result;
}

/**
 * Level 1: truncates the tool outputs outside the protected head and tail to head + tail lines.
 * Returns `undefined` when no output was long enough to cut. Every other message is kept as the
 * same object.
 *
 * @example
 * ```ts
 * const shorter = truncateToolOutputs(messages, resolveContextConfig({ maxContextTokens: 32_000 }));
 * ```
 */
export function truncateToolOutputs(
  messages: readonly AgentMessage[],
  config: Pick<
    ResolvedContextConfig,
    "keepFirst" | "keepRecent" | "toolOutputMaxLines" | "toolOutputMaxChars"
  >,
): AgentMessage[] | undefined {
  const { headEnd, recentStart } = layoutTranscript(messages, config.keepFirst, config.keepRecent);
  let out: AgentMessage[] | undefined;
  for (let i = headEnd; i < recentStart; i++) {
    const message = messages[i];
    if (message.role !== "toolResult") continue;
    const cut = truncateToolResult(message, config.toolOutputMaxLines, config.toolOutputMaxChars);
    if (cut === message) continue;
    out ??= messages.slice();
    out[i] = cut;
  }
  return out;
}
