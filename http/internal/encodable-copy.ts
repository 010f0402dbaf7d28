// What a frame holds when JSON cannot hold all of it. Only in-process events reach an encoder
// unchecked (a tool's `onUpdate` partial result: what a run keeps in its transcript is checked), so
// a BigInt or a cycle there must cost that one value, not the response: the frame keeps its place
// (a client that counts events by seq would stop at a gap) with the value replaced by text that says
// what it was.
import { errorText } from "../../core/error-text.js";

/**
 * A copy of `value` JSON can hold: a BigInt as its digits and `n` (`"12n"`), a cycle as
 * `"[cycle]"`, a value whose `toJSON` or getter throws as `"[cannot encode: why]"`. What JSON
 * holds is kept as it is (a value referenced twice is copied twice, as `JSON.stringify` writes it),
 * and what JSON drops (functions, symbols, `undefined` fields) is dropped the same way. Never throws.
 *
 * @example
 * ```ts
 * const node: Record<string, unknown> = { id: 1n };
 * node.self = node;
 * JSON.stringify(encodableCopy(node)); // '{"id":"1n","self":"[cycle]"}'
 * ```
 */
export function encodableCopy(value: unknown): unknown {
  return copyOf(value, "", new Set());
}

function copyOf(value: unknown, key: string, path: Set<object>): unknown {
  if (typeof value === "bigint") return `${value}n`;
  if (value === null || typeof value !== "object") return value;
  if (path.has(value)) return "[cycle]";
  // Boxed primitives, which JSON writes as their value.
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return value.valueOf();
  try {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      const replaced: unknown = toJSON.call(value, key);
      if (replaced !== value) return copyOf(replaced, key, path);
    }
    path.add(value);
    try {
      if (Array.isArray(value)) return value.map((item, index) => copyOf(item, String(index), path));
      const copy: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value)) copy[name] = copyOf(item, name, path);
      return copy;
    } finally {
      path.delete(value);
    }
  } catch (error) {
    return `[cannot encode: ${errorText(error).replace(/\s*\n\s*/g, " ")}]`;
  }
}
