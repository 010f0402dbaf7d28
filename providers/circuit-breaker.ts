/** When a circuit breaker keeps a failing model out, and for how long. */
export interface CircuitBreakerOptions {
  /** Failures in a row (with no answer between them) that open the breaker. Default 3. */
  failures?: number;
  /** How long an open breaker keeps the model out before one call may try it again. Default 60 000 ms. */
  cooldownMs?: number;
  /** The clock, in ms (tests pass a fake one). Default `Date.now`. */
  now?: () => number;
}

/** Keeps a model that keeps failing out of its chain for a while (see {@link createCircuitBreaker}). */
export interface CircuitBreaker {
  /** Whether the model may be asked now: closed, or open with its cooldown over (a trial call). */
  allows(key: string): boolean;
  /**
   * Records how a call of the model ended. `waitMs`: the wait its server asked for (`retry-after`);
   * the model is kept out at least that long, whatever the count, since the server said so.
   */
  record(key: string, ok: boolean, waitMs?: number): void;
}

/**
 * A circuit breaker per model key: `failures` failures in a row open it, and for `cooldownMs` the
 * model is skipped (so a chain does not pay a failing model's timeout every turn); then one call
 * may try it again, and one answer closes it. A failure whose server asked for a wait
 * (`retry-after`) keeps the model out for that wait at once: asking it sooner would be refused.
 *
 * @example
 * ```ts
 * const breaker = createCircuitBreaker({ failures: 2, cooldownMs: 30_000 });
 * breaker.record("anthropic/claude-sonnet-4-5", false);
 * breaker.allows("anthropic/claude-sonnet-4-5"); // true: one failure is not two
 * ```
 */
export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const threshold = options.failures ?? 3;
  const cooldownMs = options.cooldownMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, number>();
  const openUntil = new Map<string, number>();
  return {
    allows(key) {
      // The usual case, nothing ever failed: no clock read.
      if (openUntil.size === 0) return true;
      const until = openUntil.get(key);
      return until === undefined || now() >= until;
    },
    record(key, ok, waitMs) {
      if (ok) {
        if (failures.size > 0) failures.delete(key);
        if (openUntil.size > 0) openUntil.delete(key);
        return;
      }
      const count = (failures.get(key) ?? 0) + 1;
      failures.set(key, count);
      const until = Math.max(
        count >= threshold ? now() + cooldownMs : 0,
        waitMs !== undefined && waitMs > 0 ? now() + waitMs : 0,
        openUntil.get(key) ?? 0,
      );
      if (until > 0) openUntil.set(key, until);
    },
  };
}
