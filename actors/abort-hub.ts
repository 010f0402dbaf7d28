/**
 * An abort that costs nothing until someone listens: a flag and a set of callbacks. Node creates an
 * `AbortSignal` lazily, and making one costs about 10 µs, so a model call that would hold one for
 * the actor and one per attempt holds only the attempt's (the signal the provider gets).
 */
export interface AbortHub {
  readonly aborted: boolean;
  abort(): void;
  /** Calls `listener` on abort (at once when already aborted); returns the function that forgets it. */
  onAbort(listener: () => void): () => void;
}

/**
 * A fresh {@link AbortHub}.
 *
 * @example
 * ```ts
 * const hub = createAbortHub();
 * const controller = new AbortController();
 * const forget = hub.onAbort(() => controller.abort());
 * ```
 */
export function createAbortHub(): AbortHub {
  let aborted = false;
  const listeners = new Set<() => void>();
  return {
    get aborted() {
      return aborted;
    },
    abort() {
      if (aborted) return;
      aborted = true;
      for (const listener of [...listeners]) listener();
      listeners.clear();
    },
    onAbort(listener) {
      if (aborted) {
        listener();
        return () => {};
      }
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** An `AbortController` made only when its signal is read. */
export interface LazyAbort {
  /** The signal, made on first read (already aborted when the abort came first). */
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
}

/**
 * An abort whose `AbortSignal` exists only once someone reads it: a tool that never looks at its
 * signal costs no signal.
 *
 * @example
 * ```ts
 * const abort = createLazyAbort();
 * const ctx = { get signal() { return abort.signal; } };
 * abort.abort(reason); // aborts the signal if it was read; a later read gets an aborted one
 * ```
 */
export function createLazyAbort(): LazyAbort {
  let controller: AbortController | undefined;
  let aborted = false;
  let reason: unknown;
  return {
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (aborted) controller.abort(reason);
      }
      return controller.signal;
    },
    abort(why) {
      if (aborted) return;
      aborted = true;
      reason = why;
      controller?.abort(why);
    },
  };
}
