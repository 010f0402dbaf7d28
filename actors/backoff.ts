import type { RetryPolicy } from "../core/options.js";
import type { ProviderEvent } from "../core/provider.js";
import { isRetryableKind } from "../providers/provider.js";

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

/**
 * Whether a failed attempt is tried again: a transient kind the provider does not call hopeless,
 * within `maxRetries`; a server that was never reached (refused, unknown host) only within
 * `maxConnectRetries`, because retrying it for seconds tells the user nothing new.
 *
 * @example
 * ```ts
 * shouldRetry({ type: "error", kind: "network", message: "…", unreachable: true }, 0, 1, policy); // false by default
 * ```
 */
export function shouldRetry(
  failure: Extract<ProviderEvent, { type: "error" }>,
  attempt: number,
  unreachableSoFar: number,
  policy: Pick<Required<RetryPolicy>, "maxRetries" | "maxConnectRetries">,
): boolean {
  if (!isRetryableKind(failure.kind) || failure.retryable === false) return false;
  if (attempt >= policy.maxRetries) return false;
  return !failure.unreachable || unreachableSoFar <= policy.maxConnectRetries;
}
