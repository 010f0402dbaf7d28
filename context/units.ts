import type { AgentMessage } from "../core/messages.js";
import { estimateMessageTokens } from "./tokens.js";

/**
 * Where a transcript may be cut. A unit is a run of messages that must stay together: an assistant
 * message with tool calls and every result answering them (results of parallel calls included, and
 * anything that sits between a call and its result); every other message is a unit of its own.
 */
export interface TranscriptLayout {
  /** Start index of every unit, ascending; the first is 0 when the transcript is not empty. */
  unitStarts: number[];
  /** End (exclusive) of the protected head: the first `keepFirst` messages, widened to a unit end. */
  headEnd: number;
  /** Start of the protected tail: the last `keepRecent` messages, widened to a unit start. Never before `headEnd`. */
  recentStart: number;
}

/**
 * The unit start indices of a transcript (see `TranscriptLayout`).
 *
 * @example
 * ```ts
 * unitStartsOf([user, assistantWithTwoCalls, result1, result2, assistantText]); // [0, 1, 4]
 * ```
 */
export function unitStartsOf(messages: readonly AgentMessage[]): number[] {
  const n = messages.length;
  const spanEnd = new Int32Array(n);
  const callOwner = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    spanEnd[i] = i;
    const message = messages[i];
    if (message.role === "assistant") {
      for (const block of message.content) if (block.type === "toolCall") callOwner.set(block.id, i);
    } else if (message.role === "toolResult") {
      const owner = callOwner.get(message.toolCallId);
      if (owner !== undefined && spanEnd[owner] < i) spanEnd[owner] = i;
    }
  }
  const starts: number[] = [];
  let i = 0;
  while (i < n) {
    starts.push(i);
    let end = spanEnd[i];
    for (let j = i + 1; j <= end; j++) if (spanEnd[j] > end) end = spanEnd[j];
    i = end + 1;
  }
  return starts;
}

/**
 * Lays out a transcript for compaction. The protected regions are widened, never narrowed, to unit
 * boundaries: a head cut inside a unit moves to the unit's end, a recent cut inside a unit moves to
 * the unit's start, so a tool call and its results are always kept or dropped together.
 *
 * @example
 * ```ts
 * const { headEnd, recentStart } = layoutTranscript(messages, 1, 6);
 * const middle = messages.slice(headEnd, recentStart); // what levels 1–3 may touch
 * ```
 */
export function layoutTranscript(
  messages: readonly AgentMessage[],
  keepFirst: number,
  keepRecent: number,
): TranscriptLayout {
  const n = messages.length;
  const unitStarts = unitStartsOf(messages);
  let headEnd = n;
  if (keepFirst <= 0) headEnd = 0;
  else
    for (const start of unitStarts)
      if (start >= keepFirst) {
        headEnd = start;
        break;
      }
  let recentStart = n;
  if (keepRecent > 0) {
    const firstKept = Math.max(0, n - keepRecent);
    recentStart = 0;
    for (const start of unitStarts) {
      if (start > firstKept) break;
      recentStart = start;
    }
  }
  return { unitStarts, headEnd, recentStart: Math.max(recentStart, headEnd) };
}

/**
 * The earliest unit start `c` in `[from, to]` such that `fixedTokens` plus the tokens of
 * `messages[c..]` stay within `limit`; `to` when even that does not fit. Used by levels 2 and 3 to
 * keep as many recent turns as the target allows.
 *
 * @example
 * ```ts
 * const cut = earliestCutWithin(messages, layout.unitStarts, layout.headEnd, layout.recentStart, headTokens, target);
 * ```
 */
export function earliestCutWithin(
  messages: readonly AgentMessage[],
  unitStarts: readonly number[],
  from: number,
  to: number,
  fixedTokens: number,
  limit: number,
): number {
  let total = fixedTokens;
  for (let i = to; i < messages.length; i++) total += estimateMessageTokens(messages[i]);
  if (total > limit) return to;
  let best = to;
  let next = to;
  for (let u = unitStarts.length - 1; u >= 0; u--) {
    const start = unitStarts[u];
    if (start >= to) continue;
    if (start < from) break;
    for (let i = start; i < next; i++) total += estimateMessageTokens(messages[i]);
    if (total > limit) break;
    best = start;
    next = start;
  }
  return best;
}
