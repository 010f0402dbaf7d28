import type { AgentMessage } from "../core/messages.js";
import { textOf } from "../core/messages.js";
import { isCompactionMessage } from "./compaction-messages.js";
import { CHARS_PER_TOKEN, estimateTextTokens } from "./tokens.js";

/** Characters of a user or assistant text a digest line keeps. */
const SNIPPET_CHARS = 120;
const OMITTED_LINE = /^\[(\d+) earlier turns omitted\]$/;

function snippet(text: string): string {
  // Only the start can end up in the line: do not flatten a whole file's worth of text.
  const flat = text
    .slice(0, SNIPPET_CHARS * 4)
    .replace(/\s+/g, " ")
    .trim();
  return flat.length <= SNIPPET_CHARS ? flat : `${flat.slice(0, SNIPPET_CHARS - 1)}…`;
}

function imageCount(content: AgentMessage["content"]): number {
  if (typeof content === "string") return 0;
  let images = 0;
  for (const block of content) if (block.type === "image") images++;
  return images;
}

interface TurnDigest {
  openers: string[];
  tools: Map<string, { calls: number; failed: number }>;
  reply?: string;
  hasAssistant: boolean;
}

const newTurn = (): TurnDigest => ({ openers: [], tools: new Map(), hasAssistant: false });

function renderTurn(turn: TurnDigest): string {
  const parts: string[] = [...turn.openers];
  if (turn.reply) parts.push(`assistant: ${turn.reply}`);
  if (turn.tools.size > 0) {
    const tools = [...turn.tools].map(([name, { calls, failed }]) => {
      const count = calls > 1 ? ` ×${calls}` : "";
      return failed > 0 ? `${name}${count} (${failed} failed)` : `${name}${count}`;
    });
    parts.push(`tools: ${tools.join(", ")}`);
  }
  return `- ${parts.length > 0 ? parts.join("; ") : "(empty turn)"}`;
}

/**
 * One line per turn (one model call) of a transcript: the user or application messages that led
 * to it, the start of the assistant's text, and which tools it called (and how many failed).
 * Compaction messages are skipped. The level-2 summary when no summariser is configured.
 *
 * @example
 * ```ts
 * digestTurns(messages);
 * // ["- user: fix the test; assistant: Looking.; tools: read ×2, bash (1 failed)",
 * //  "- assistant: Fixed: the mock was stale."]
 * ```
 */
export function digestTurns(messages: readonly AgentMessage[]): string[] {
  const lines: string[] = [];
  let turn: TurnDigest | undefined;
  const flush = () => {
    if (turn) lines.push(renderTurn(turn));
    turn = undefined;
  };
  for (const message of messages) {
    if (isCompactionMessage(message)) continue;
    if (message.role === "user" || message.role === "custom") {
      if (turn?.hasAssistant) flush();
      turn ??= newTurn();
      const images = imageCount(message.content);
      const label = message.role === "user" ? "user" : message.customType;
      const text = snippet(textOf(message.content));
      turn.openers.push(`${label}: ${text}${images > 0 ? ` [${images} image${images > 1 ? "s" : ""}]` : ""}`);
      continue;
    }
    if (message.role === "assistant") {
      if (turn?.hasAssistant) flush();
      turn ??= newTurn();
      turn.hasAssistant = true;
      for (const block of message.content) {
        if (block.type !== "toolCall") continue;
        const entry = turn.tools.get(block.name) ?? { calls: 0, failed: 0 };
        entry.calls++;
        turn.tools.set(block.name, entry);
      }
      const text = snippet(textOf(message.content));
      if (text) turn.reply = text;
    } else if (message.isError) {
      turn ??= newTurn();
      const entry = turn.tools.get(message.toolName) ?? { calls: 0, failed: 0 };
      entry.failed++;
      turn.tools.set(message.toolName, entry);
    }
  }
  flush();
  return lines;
}

/**
 * Appends new digest lines to an earlier summary's lines and keeps the newest that fit in
 * `maxTokens`, counting the dropped ones in a leading `[N earlier turns omitted]` line. The size is
 * bounded by `maxTokens` however many compactions came before.
 *
 * @example
 * ```ts
 * mergeDigest("[3 earlier turns omitted]\n- user: a", ["- user: b"], 10);
 * // "[4 earlier turns omitted]\n- user: b"
 * ```
 */
export function mergeDigest(
  previous: string | undefined,
  lines: readonly string[],
  maxTokens: number,
): string {
  let omitted = 0;
  const entries: string[] = [];
  for (const line of previous?.split("\n") ?? []) {
    const match = OMITTED_LINE.exec(line);
    if (match) omitted += Number(match[1]);
    else if (line.trim()) entries.push(line);
  }
  entries.push(...lines);
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  // The header's length depends on the count; reserve room for a long one.
  const headerRoom = 32;
  let kept = 0;
  let chars = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const cost = entries[i].length + 1;
    if (chars + cost + (i > 0 || omitted > 0 ? headerRoom : 0) > maxChars) break;
    chars += cost;
    kept++;
  }
  const dropped = entries.length - kept + omitted;
  const out = entries.slice(entries.length - kept);
  if (dropped > 0) out.unshift(`[${dropped} earlier turns omitted]`);
  return clampToTokens(out.join("\n"), maxTokens);
}

/**
 * Cuts a text to at most `maxTokens` estimated tokens.
 *
 * @example
 * ```ts
 * clampToTokens("x".repeat(100), 10).length; // 40
 * ```
 */
export function clampToTokens(text: string, maxTokens: number): string {
  return estimateTextTokens(text) <= maxTokens ? text : text.slice(0, maxTokens * CHARS_PER_TOKEN);
}
