// The context budget's contract, as types: how much the model may see, how a summariser is
// asked, what a compaction did. Resolving defaults and compacting live in context/.
import type { AgentMessage, Usage } from "./messages.js";

/**
 * What a summariser is asked: condense `messages` (whole turns: a tool call always comes with its
 * results) into one text of at most `maxTokens` tokens. `previousSummary` is the text of the summary
 * an earlier compaction wrote; the answer replaces it, so it must carry over what still matters.
 *
 * @example
 * ```ts
 * const request: SummaryRequest = { messages: oldTurns, previousSummary: "…", maxTokens: 2_000 };
 * ```
 */
export interface SummaryRequest {
  messages: AgentMessage[];
  previousSummary?: string;
  maxTokens: number;
  /** What the summary should keep above all, when the compaction was asked with one (`agent.compact({ focus })`). */
  focus?: string;
}

/**
 * Writes the level-2 summary. Throwing (other than on abort) makes compaction fall back to the
 * one-line-per-turn digest, so a failing summariser never stops the agent.
 *
 * @example
 * ```ts
 * const summarizer: Summarizer = async ({ messages, previousSummary }) =>
 *   `${previousSummary ?? ""}\n${messages.length} more messages`;
 * ```
 */
export type Summarizer = (request: SummaryRequest, signal: AbortSignal) => Promise<string | SummaryAnswer>;

/**
 * A summariser's answer with what its model call used: the usage is added to the `compaction`
 * event (`summaryUsage`), so a session's totals count the summary call too. A summariser may
 * return the plain text instead when it has no usage to report.
 *
 * @example
 * ```ts
 * const answer: SummaryAnswer = { text: "The user wants…", usage };
 * ```
 */
export interface SummaryAnswer {
  text: string;
  usage?: Usage;
}

/**
 * How much context the model may see. Compaction keeps the prompt at or under
 * `maxContextTokens - systemPromptTokens`.
 *
 * @example
 * ```ts
 * const context: ContextConfig = { maxContextTokens: 100_000, keepRecent: 10 };
 * ```
 */
export interface ContextConfig {
  /** The model's context window, in tokens, minus what you reserve for its answer. */
  maxContextTokens: number;
  /**
   * Tokens the system prompt and tool schemas take. When the provider has reported usage, the
   * measured overhead is used instead if it is larger (see `TokenCalibration`).
   */
  systemPromptTokens?: number;
  /** Messages at the start that are always kept verbatim (default 1: the task). */
  keepFirst?: number;
  /** Messages at the end that are always kept verbatim (default 6). */
  keepRecent?: number;
  /** Old tool outputs longer than this are truncated to head + tail (level 1; default 80). */
  toolOutputMaxLines?: number;
  /** Old tool outputs longer than this many characters are truncated too (default 8,000). */
  toolOutputMaxChars?: number;
  /** Levels 2 and 3 aim at `targetRatio × budget`, leaving headroom for the next turns (default 0.6). */
  targetRatio?: number;
  /** Writes level-2 summaries; without it level 2 writes a one-line digest per turn. */
  summarizer?: Summarizer;
  /** Upper bound of a level-2 summary (default 2,000, and never more than a sixth of the budget). */
  summaryMaxTokens?: number;
}

/**
 * How the last model call's prompt compared with our estimate, so the next estimate can include
 * what we cannot see (system prompt, tool schemas, provider framing).
 *
 * @example
 * ```ts
 * const calibration: TokenCalibration = { estimated: 12_000, reported: 14_500 };
 * ```
 */
export interface TokenCalibration {
  /** Our estimate (`estimateTokens`) of the messages we sent. */
  estimated: number;
  /** What the provider reported as the prompt: input + cacheRead + cacheWrite. */
  reported: number;
}

/**
 * What one compaction did.
 *
 * @example
 * ```ts
 * const result = await compactContext(messages, config);
 * if (result && !result.fits) console.warn("even the protected turns exceed the budget");
 * ```
 */
export interface CompactionResult {
  messages: AgentMessage[];
  level: 1 | 2 | 3;
  tokensBefore: number;
  tokensAfter: number;
  /** The budget the messages had to fit (`maxContextTokens` minus the measured overhead). */
  budget: number;
  /** What levels 2 and 3 aimed at: `targetRatio × budget` (of the smaller bound when forced). */
  target: number;
  /** Whether the result fits the budget; `false` only when no answer the invariants allow does. */
  fits: boolean;
  /** What the summariser's model calls of this compaction used, when it reported it. */
  summaryUsage?: Usage;
}
