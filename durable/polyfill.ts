// Node 20 lacks Promise.withResolvers (Node 22 has it); the Restate SDK (>= 1.14) calls it while it
// serves an invocation, without declaring an engine. createAgentServices and serveAgents install it
// before anything of the SDK runs (a call, not an import for its side effect: bundlers keep calls).

interface WithResolvers {
  withResolvers?: unknown;
}

/**
 * Defines `Promise.withResolvers` when the runtime lacks it (Node 20); does nothing otherwise.
 *
 * @example
 * ```ts
 * ensurePromiseWithResolvers();
 * const { promise, resolve } = Promise.withResolvers<number>();
 * ```
 */
export function ensurePromiseWithResolvers(): void {
  if (typeof (Promise as unknown as WithResolvers).withResolvers === "function") return;
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value: function withResolvers<T>() {
      let resolve!: (value: T) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
