// Whether a value can be stored: a durable run journals every step's value and the transcript as
// JSON, and a value JSON cannot hold would fail the write on every retry, for ever.
import { errorText } from "./error-text.js";

/**
 * Why `value` cannot be stored as JSON (a BigInt, a cycle, a `toJSON` that throws), in one line;
 * `undefined` when it can. What JSON drops quietly (functions, symbols, `undefined` fields) is not
 * a problem here: the stored value simply lacks it.
 *
 * @example
 * ```ts
 * unstorableReason({ n: 1n }); // "Do not know how to serialize a BigInt"
 * unstorableReason({ text: "ok" }); // undefined
 * ```
 */
export function unstorableReason(value: unknown): string | undefined {
  try {
    JSON.stringify(value);
    return undefined;
  } catch (error) {
    // V8's message for a cycle spans lines (the path around it): one line reads better in a result.
    return errorText(error).replace(/\s*\n\s*/g, " ");
  }
}
