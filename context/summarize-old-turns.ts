import type { AgentMessage, CustomMessage, Usage } from "../core/messages.js";
import {
  COMPACTION_SUMMARY_PREFIX,
  createSummaryMessage,
  isCompactionMessage,
  isCompactionSummary,
  summaryTextOf,
} from "./compaction-messages.js";
import type { ResolvedContextConfig, Summarizer } from "./config.js";
import { clampToTokens, digestSummary, digestTurns } from "./digest.js";
import {
  estimateMessageTokens,
  estimateTextTokens,
  estimateTokens,
  MESSAGE_OVERHEAD_TOKENS,
} from "./tokens.js";
import { earliestCutWithin, layoutTranscript, unitStartsOf } from "./units.js";

/** Tokens kept for the summariser's instructions and framing in every summary request. */
export const SUMMARY_REQUEST_OVERHEAD_TOKENS = 500;

/** Limits of one level-2 pass. */
export interface SummarizeOldTurnsOptions {
  /** Keep as many recent turns as fit in this many tokens (the level-2/3 target). */
  target: number;
  /** The result must fit in this many tokens; otherwise level 2 gives up (`undefined`). */
  bound: number;
  /** The budget every summary request must fit in. */
  budget: number;
  /** What the summary should keep above all (handed to the summariser as `SummaryRequest.focus`). */
  focus?: string;
  signal?: AbortSignal;
  /** Told what each summary request used, when the summariser reports it (the calls are paid for, used or not). */
  onUsage?: (usage: Usage) => void;
}

/**
 * The largest summary level 2 writes for a budget: `summaryMaxTokens`, and never more than a
 * sixth of the budget.
 *
 * @example
 * ```ts
 * summaryCapFor(2_000, 32_000); // 2_000
 * ```
 */
export function summaryCapFor(summaryMaxTokens: number, budget: number): number {
  return Math.max(1, Math.min(summaryMaxTokens, Math.floor(budget / 6)));
}

/**
 * Level 2: replaces the old turns between the protected head and the recent turns that fit the
 * target with one summary message. The summary comes from `config.summarizer` when there is one
 * (falling back to a digest if it throws), else it is a one-line-per-turn digest. Earlier summaries
 * in the replaced span are handed over as `previousSummary` and removed, so summaries never nest,
 * and a summary is capped (`summaryCapFor`), so it never grows with the number of compactions.
 * Returns `undefined` when there is nothing to summarise or the result cannot fit `bound`.
 *
 * @example
 * ```ts
 * const compacted = await summarizeOldTurns(messages, resolveContextConfig(config), { target, bound: budget, budget });
 * ```
 */
export async function summarizeOldTurns(
  messages: readonly AgentMessage[],
  config: ResolvedContextConfig,
  options: SummarizeOldTurnsOptions,
): Promise<AgentMessage[] | undefined> {
  const { unitStarts, headEnd, recentStart } = layoutTranscript(
    messages,
    config.keepFirst,
    config.keepRecent,
  );
  const cap = summaryCapFor(config.summaryMaxTokens, options.budget);
  const reserve = MESSAGE_OVERHEAD_TOKENS + estimateTextTokens(COMPACTION_SUMMARY_PREFIX) + cap;
  const head = messages.slice(0, headEnd);
  const headTokens = estimateTokens(head);
  const cut = earliestCutWithin(
    messages,
    unitStarts,
    headEnd,
    recentStart,
    headTokens + reserve,
    options.target,
  );
  const middle = messages.slice(headEnd, cut);
  const toSummarise = middle.filter((m) => !isCompactionMessage(m));
  const earlier = middle.filter(isCompactionSummary) as CustomMessage[];
  if (toSummarise.length === 0 && earlier.length <= 1) return undefined;
  const kept = messages.slice(cut);
  const keptTokens = estimateTokens(kept);
  if (config.summarizer && headTokens + reserve + keptTokens > options.bound) return undefined;

  const previous = earlier.length > 0 ? clampToTokens(earlier.map(summaryTextOf).join("\n"), cap) : undefined;
  const summary = await writeSummary(toSummarise, previous, cap, config.summarizer, options);
  const message = createSummaryMessage(
    summary.text,
    summary.method,
    middle[0].timestamp,
    summary.error,
    middle,
  );
  if (headTokens + estimateMessageTokens(message) + keptTokens > options.bound) return undefined;
  return [...head, message, ...kept];
}

interface WrittenSummary {
  text: string;
  method: "summarizer" | "digest";
  error?: string;
}

async function writeSummary(
  messages: AgentMessage[],
  previous: string | undefined,
  cap: number,
  summarizer: Summarizer | undefined,
  options: SummarizeOldTurnsOptions,
): Promise<WrittenSummary> {
  const digest = (error?: string): WrittenSummary => ({
    text: digestSummary(previous, messages, cap),
    method: "digest",
    error,
  });
  if (!summarizer) return digest();
  // The request holds a chunk, the running summary (≤ cap) and the instructions.
  const chunkLimit = options.budget - cap - SUMMARY_REQUEST_OVERHEAD_TOKENS;
  if (chunkLimit < MESSAGE_OVERHEAD_TOKENS * 4) return digest("budget too small for a summary request");
  const signal = options.signal ?? new AbortController().signal;
  let running = previous;
  try {
    for (const chunk of chunksWithin(messages, chunkLimit)) {
      signal.throwIfAborted();
      const answer = await summarizer(
        {
          messages: chunk,
          previousSummary: running,
          maxTokens: cap,
          ...(options.focus && { focus: options.focus }),
        },
        signal,
      );
      const text = typeof answer === "string" ? answer : answer?.text;
      if (typeof answer === "object" && answer?.usage) options.onUsage?.(answer.usage);
      if (typeof text !== "string")
        throw new TypeError("the summarizer did not return a string (or { text, usage })");
      running = clampToTokens(text.trim(), cap);
    }
    return { text: running ?? "", method: "summarizer" };
  } catch (error) {
    if (signal.aborted) throw error;
    return digest(error instanceof Error ? error.message : String(error));
  }
}

/**
 * Splits messages into consecutive runs of whole units, each within `limit` tokens, so every
 * summary request fits the budget. A unit too large on its own is replaced by a one-line stand-in.
 */
function chunksWithin(messages: readonly AgentMessage[], limit: number): AgentMessage[][] {
  const starts = unitStartsOf(messages);
  const chunks: AgentMessage[][] = [];
  let chunk: AgentMessage[] = [];
  let tokens = 0;
  for (let u = 0; u < starts.length; u++) {
    let unit: AgentMessage[] = messages.slice(starts[u], starts[u + 1] ?? messages.length);
    let unitTokens = estimateTokens(unit);
    if (unitTokens > limit) {
      unit = [oversizedStandIn(unit, limit)];
      unitTokens = estimateTokens(unit);
    }
    if (tokens + unitTokens > limit && chunk.length > 0) {
      chunks.push(chunk);
      chunk = [];
      tokens = 0;
    }
    chunk.push(...unit);
    tokens += unitTokens;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

function oversizedStandIn(unit: readonly AgentMessage[], limit: number): CustomMessage {
  const line = digestTurns(unit).join(" ");
  return {
    role: "custom",
    customType: "compaction_oversized",
    content: clampToTokens(
      `[A message too large to summarise whole; digest: ${line}]`,
      Math.max(1, limit - 8),
    ),
    display: "model",
    timestamp: unit[0].timestamp,
  };
}
