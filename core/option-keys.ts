/**
 * Every key an options object of type `T` may carry, each mapped to `true`. Written as an object
 * (not an array) so that TypeScript insists on every key of the interface and refuses any other:
 * adding a field to an options interface without adding it here is a compile error, so the runtime
 * check below can never lag behind the type.
 *
 * @example
 * ```ts
 * interface RetryPolicy { maxRetries?: number; baseDelayMs?: number }
 * const RETRY_KEYS: OptionKeys<RetryPolicy> = { maxRetries: true, baseDelayMs: true };
 * ```
 */
export type OptionKeys<T> = { readonly [K in keyof Required<T>]-?: true };

/**
 * Why a key that looks right is refused anyway (an option the library does not implement yet), by
 * key: the message replaces the generic "unknown option" text.
 */
export type RefusedOptions = Readonly<Record<string, string>>;

/**
 * Throws a `TypeError` naming `where` when `options` carries a key that `keys` does not list: a typo
 * in an option (above all a security option) must never silently turn it off. A key listed in
 * `refused` is refused with its own explanation (e.g. an option of a later release). Non-objects are
 * left to the caller's own checks; inherited and symbol keys are ignored.
 *
 * To give an options object a new field: add it to its interface and to its `OptionKeys` constant
 * (the compiler points at the constant until you do).
 *
 * @example
 * ```ts
 * checkOptionKeys("createAgent", options, AGENT_OPTION_KEYS);
 * // createAgent: unknown option "permisions" (did you mean "permissions"?). Known options: provider, ...
 * ```
 */
export function checkOptionKeys<T>(
  where: string,
  options: T | undefined,
  keys: OptionKeys<T>,
  refused: RefusedOptions = {},
): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) return;
  const known = Object.keys(keys);
  for (const key of Object.keys(options)) {
    if (Object.hasOwn(keys, key)) continue;
    if (Object.hasOwn(refused, key)) {
      throw new TypeError(`${where}: option "${key}" is not supported: ${refused[key]}`);
    }
    const suggestion = closestKey(key, known);
    throw new TypeError(
      `${where}: unknown option "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}. ` +
        `Known options: ${known.join(", ")}`,
    );
  }
}

/**
 * The known key a typo most likely meant: same letters ignoring case, or at most 2 edits away
 * (`undefined` when none is that close). Also what the command's "did you mean" uses.
 *
 * @example
 * ```ts
 * closestKey("permisions", ["provider", "permissions"]); // "permissions"
 * closestKey("--modle", ["--model", "--print"]); // "--model"
 * ```
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}
