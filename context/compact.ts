import type { CompactionResult } from "../core/context-config.js";
import { addUsage, type AgentMessage, type Usage } from "../core/messages.js";

export type { CompactionResult } from "../core/context-config.js";
import type { ContextConfig, TokenCalibration } from "./config.js";
import { resolveContextConfig } from "./config.js";
import { dropMiddle } from "./drop-middle.js";
import { summarizeOldTurns } from "./summarize-old-turns.js";
import { contextBudget, estimateTokens } from "./tokens.js";
import { truncateToolOutputs } from "./truncate-tool-outputs.js";

/**
 * Options of `compactContext`.
 *
 * @example
 * ```ts
 * const options: CompactOptions = { force: true, minLevel: 2 };
 * ```
 */
export interface CompactOptions {
  /** Use at least this level (overflow recovery goes one deeper than last time). */
  minLevel?: 1 | 2 | 3;
  /**
   * Compact even when the estimate says the context fits (the provider said it did not; the agent
   * passes the window it learned from the error as the budget). When no level fits, a forced
   * compaction also truncates the tool outputs of the protected turns (the one exception to keeping
   * them verbatim: the provider has refused the request, so keeping them would fail).
   */
  force?: boolean;
  /** What a level-2 summary should keep above all (`SummaryRequest.focus`). */
  focus?: string;
  calibration?: TokenCalibration;
  signal?: AbortSignal;
}

/**
 * Whether the transcript's estimate is over the budget of `config` (`maxContextTokens` minus the
 * larger of `systemPromptTokens` and the overhead measured by `calibration`).
 *
 * @example
 * ```ts
 * if (isOverBudget(agent.messages, { maxContextTokens: 32_000 })) console.log("will compact");
 * ```
 */
export function isOverBudget(
  messages: readonly AgentMessage[],
  config: ContextConfig,
  calibration?: TokenCalibration,
): boolean {
  return tokensOverBudget(estimateTokens(messages), config, calibration);
}

/**
 * Whether `tokens` (an estimate of messages, as `estimateTokens` makes it) are over the budget:
 * `isOverBudget` for a caller that keeps its own running estimate.
 *
 * @example
 * ```ts
 * tokensOverBudget(estimateTokens(messages), { maxContextTokens: 32_000 }); // isOverBudget(messages, ...)
 * ```
 */
export function tokensOverBudget(
  tokens: number,
  config: ContextConfig,
  calibration?: TokenCalibration,
): boolean {
  return tokens > contextBudget(resolveContextConfig(config), calibration);
}

/**
 * Compacts `messages` to fit the budget with the cheapest level that fits (docs/compaction.md,
 * "Levels"): 1 truncate old tool outputs, 2 summarise old turns, 3 drop the middle. Returns
 * `undefined` when the context already fits (and `force` is not set) or when no level can change
 * anything, so compacting a compacted context is a no-op. When no level fits, the deepest result
 * is returned with `fits: false`: it is the smallest context the invariants allow.
 *
 * Invariants: a tool call and its results are kept or dropped together; the first `keepFirst` and
 * last `keepRecent` messages (widened to whole units) are kept as the same objects; every other
 * kept message is the same object too, except old tool results cut by level 1; summaries and
 * markers take their timestamps from the messages they replace, so the output is deterministic.
 *
 * @example
 * ```ts
 * const result = await compactContext(agent.messages, { maxContextTokens: 32_000 });
 * if (result) console.log(`level ${result.level}: ${result.tokensBefore} → ${result.tokensAfter}`);
 * ```
 */
export async function compactContext(
  messages: readonly AgentMessage[],
  config: ContextConfig,
  options: CompactOptions = {},
): Promise<CompactionResult | undefined> {
  const resolved = resolveContextConfig(config);
  const budget = contextBudget(resolved, options.calibration);
  const tokensBefore = estimateTokens(messages);
  if (!options.force && tokensBefore <= budget) return undefined;
  options.signal?.throwIfAborted();

  let target = Math.floor(resolved.targetRatio * Math.min(budget, tokensBefore));
  // The cheapest level that fits the budget wins, forced or not: after an overflow the agent has
  // already lowered the budget to the window it learned, so what fits it now is what fits the model.
  const bound = budget;
  const minLevel = options.minLevel ?? 1;
  // What the summary requests used: reported whichever level wins (they were paid for either way).
  let summaryUsage: Usage | undefined;
  const result = (level: 1 | 2 | 3, out: AgentMessage[]): CompactionResult => {
    const tokensAfter = estimateTokens(out);
    return {
      messages: out,
      level,
      tokensBefore,
      tokensAfter,
      budget,
      target,
      fits: tokensAfter <= budget,
      ...(summaryUsage && { summaryUsage }),
    };
  };

  // A level that does not fit is remembered: when none fits, the smallest shrinking one is the answer.
  let fallback: CompactionResult | undefined;
  const consider = (level: 1 | 2 | 3, out: AgentMessage[] | undefined): CompactionResult | undefined => {
    if (!out) return undefined;
    const candidate = result(level, out);
    if (candidate.tokensAfter >= tokensBefore) return undefined;
    if (candidate.tokensAfter <= bound && level >= minLevel) return candidate;
    if (!fallback || candidate.tokensAfter < fallback.tokensAfter) fallback = candidate;
    return undefined;
  };

  const truncated = truncateToolOutputs(messages, resolved);
  const base = truncated ?? messages;
  const level1 = consider(1, truncated);
  if (level1) return level1;
  // Asked for a deeper level than 1 (overflow recovery): shrink below what truncation reached too.
  if (minLevel > 1) target = Math.min(target, Math.floor(resolved.targetRatio * estimateTokens(base)));
  if (minLevel <= 2) {
    const summarised = await summarizeOldTurns(base, resolved, {
      target,
      bound,
      budget,
      ...(options.focus && { focus: options.focus }),
      signal: options.signal,
      onUsage: (usage) => {
        summaryUsage = summaryUsage ? addUsage(summaryUsage, usage) : usage;
      },
    });
    const level2 = consider(2, summarised);
    if (level2) return level2;
  }
  const dropped = dropMiddle(base, resolved, { target });
  const level3 = consider(3, dropped);
  if (level3) return level3;
  if (options.force) {
    // Last resort of overflow recovery: the protected turns alone are too big (typically one huge
    // tool output), so their tool outputs are truncated too rather than failing the run.
    const smallest = dropped ?? base;
    const everywhere = truncateToolOutputs(smallest, { ...resolved, keepFirst: 0, keepRecent: 0 });
    const lastResort = everywhere && result(3, everywhere);
    if (lastResort && lastResort.tokensAfter < (fallback?.tokensAfter ?? tokensBefore)) return lastResort;
  }
  // A fallback remembered before the summary requests ran still reports what they used.
  return fallback && { ...fallback, ...(summaryUsage && { summaryUsage }) };
}
