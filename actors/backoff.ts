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
 * Whether the server asked for a longer wait (`retry-after`) than one delay may last
 * (`retry.maxDelayMs`). The agent still retries at the cap, as the vendors' SDKs do (the user's
 * limit is the longest it waits), and says the wait in the call's final error; a fallback chain
 * hands the call to its next model at once instead.
 *
 * @example
 * ```ts
 * asksTooLongAWait({ type: "error", kind: "rate_limit", message: "429", retryAfterMs: 3_600_000 }, { maxDelayMs: 60_000 }); // true
 * ```
 */
export function asksTooLongAWait(
  failure: Extract<ProviderEvent, { type: "error" }>,
  policy: Pick<Required<RetryPolicy>, "maxDelayMs">,
): boolean {
  return failure.retryAfterMs !== undefined && failure.retryAfterMs > policy.maxDelayMs;
}

/**
 * The final error of a call whose server asked for a longer wait than `retry.maxDelayMs`: the
 * provider's text, then the wait it asked for and the cap, so the user knows what to change.
 *
 * @example
 * ```ts
 * tooLongAWaitText("429 Rate limited", 3_600_000, 60_000);
 * // "429 Rate limited (the server asked to wait 3600 s before trying again, longer than retry.maxDelayMs, 60 s)"
 * ```
 */
export function tooLongAWaitText(message: string, retryAfterMs: number, maxDelayMs: number): string {
  return `${message} (the server asked to wait ${duration(retryAfterMs)} before trying again, longer than retry.maxDelayMs, ${duration(maxDelayMs)})`;
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

/** `250 ms`, `1.5 s`, `3600 s`: a delay as a person reads it. */
function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}
