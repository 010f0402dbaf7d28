import { isSecretKey, REDACTED, redactText } from "../core/redact.js";

/** Limits applied when a value leaves the process (inspector, visualizer page, recording). */
export interface SanitizeOptions {
  /** Longer strings are cut, with a `… [N more characters]` marker. Default 2,000. */
  maxStringLength?: number;
  /** Longer arrays keep their first and last items around a `[… N more items …]` marker. Default 50. */
  maxArrayLength?: number;
  /** Deeper values become `"[…]"`. Default 12. */
  maxDepth?: number;
}

// The secrets' rules are shared with the command's session files (core/redact.ts).
export { isSecretKey, REDACTED, SECRET_KEY_PATTERN } from "../core/redact.js";

/**
 * Returns a JSON-safe copy of a value: secrets redacted by key name and by value (`API_KEY=…`,
 * `Bearer …`, a URL's password, key shapes; see `redactText`), long strings and arrays cut,
 * cycles, functions, symbols, bigints and errors turned into plain data. Never throws.
 *
 * @example
 * ```ts
 * sanitize({ apiKey: "sk-…", text: "x".repeat(10_000) }, { maxStringLength: 100 });
 * // → { apiKey: "[redacted]", text: "xxxx…xx… [9900 more characters]" }
 * ```
 */
export function sanitize(value: unknown, options: SanitizeOptions = {}): unknown {
  const maxString = options.maxStringLength ?? 2_000;
  const maxArray = options.maxArrayLength ?? 50;
  const maxDepth = options.maxDepth ?? 12;
  const seen = new WeakSet<object>();

  const visit = (input: unknown, depth: number): unknown => {
    switch (typeof input) {
      case "string": {
        if (input.length <= maxString) return redactText(input);
        // Redacted before it is cut (a cut could leave half a key no pattern knows), with a margin
        // past the cut rather than the whole of a long text.
        const kept = redactText(input.slice(0, maxString + 512)).slice(0, maxString);
        return `${kept}… [${input.length - maxString} more characters]`;
      }
      case "number":
        return Number.isFinite(input) ? input : String(input);
      case "boolean":
        return input;
      case "bigint":
        return input.toString();
      case "undefined":
        return undefined;
      case "function":
        return `[function ${input.name || "anonymous"}]`;
      case "symbol":
        return input.toString();
    }
    if (input === null) return null;
    const object = input as object;
    if (seen.has(object)) return "[circular]";
    if (depth >= maxDepth) return "[…]";
    if (object instanceof Error) return { name: object.name, message: visit(object.message, depth + 1) };
    if (object instanceof Date) return object.toISOString();
    const toJSON = (object as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      try {
        return visit(toJSON.call(object), depth);
      } catch {
        return "[unserializable]";
      }
    }
    seen.add(object);
    try {
      if (Array.isArray(object)) {
        if (object.length <= maxArray) return object.map((item) => visit(item, depth + 1) ?? null);
        const head = Math.ceil(maxArray / 2);
        const tail = maxArray - head;
        return [
          ...object.slice(0, head).map((item) => visit(item, depth + 1) ?? null),
          `[… ${object.length - maxArray} more items …]`,
          ...object.slice(object.length - tail).map((item) => visit(item, depth + 1) ?? null),
        ];
      }
      if (object instanceof Map) return visit(Object.fromEntries(object), depth);
      if (object instanceof Set) return visit([...object], depth);
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(object)) {
        if (isSecretKey(key, item) && item !== undefined && item !== null && item !== "") {
          out[key] = REDACTED;
          continue;
        }
        const copy = visit(item, depth + 1);
        if (copy !== undefined) out[key] = copy;
      }
      return out;
    } catch {
      return "[unserializable]";
    } finally {
      seen.delete(object);
    }
  };
  return visit(value, 0);
}

/** `JSON.stringify(sanitize(value, options))`, never throwing. */
export function safeJson(value: unknown, options?: SanitizeOptions): string {
  return JSON.stringify(sanitize(value, options)) ?? "null";
}
