import type { AgentMessage } from "../core/messages.js";
import type { ContextConfig, TokenCalibration } from "./config.js";

/** What one compaction did. */
export interface CompactionResult {
  messages: AgentMessage[];
  level: 1 | 2 | 3;
  tokensBefore: number;
  tokensAfter: number;
}

export interface CompactOptions {
  /** Use at least this level (overflow recovery goes one deeper than last time). */
  minLevel?: 1 | 2 | 3;
  /** Compact even when the estimate says the context fits (the provider said it did not). */
  force?: boolean;
  calibration?: TokenCalibration;
  signal?: AbortSignal;
}

/**
 * Whether the transcript is over the budget of `config`.
 * (Placeholder until the compaction issue lands: never over budget.)
 */
export function isOverBudget(
  _messages: readonly AgentMessage[],
  _config: ContextConfig,
  _calibration?: TokenCalibration,
): boolean {
  return false;
}

/**
 * Compacts `messages` to fit the budget with the cheapest level that fits; `undefined` when nothing
 * had to (or could) be done. (Placeholder until the compaction issue lands.)
 */
export async function compactContext(
  _messages: readonly AgentMessage[],
  _config: ContextConfig,
  _options: CompactOptions = {},
): Promise<CompactionResult | undefined> {
  return undefined;
}
