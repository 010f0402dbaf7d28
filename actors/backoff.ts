import type { RetryPolicy } from "../core/options.js";

/**
 * The delay before retry number `attempt` (0 for the first retry): exponential from `baseDelayMs`,
 * ± `jitter`, at least the server's `retry-after`, and never over `maxDelayMs`.
 *
 * @example
 * ```ts
 * retryDelay(2, { baseDelayMs: 1000, maxDelayMs: 60_000, jitter: 0 }); // 4000
 * ```
 */
export function retryDelay(
  attempt: number,
  policy: Required<Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs" | "jitter">>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exponential = policy.baseDelayMs * 2 ** attempt;
  const jittered = exponential * (1 + policy.jitter * (2 * random() - 1));
  const wanted = Math.max(jittered, retryAfterMs ?? 0);
  return Math.round(Math.min(policy.maxDelayMs, Math.max(0, wanted)));
}
