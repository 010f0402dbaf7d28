/**
 * Something thrown, kept as JSON-safe data: what a tool's thrown error leaves in its result's
 * `details.error` and in `tool_execution_end` (the model sees only `message`). `value` holds a
 * thrown non-Error (`throw { code: 42 }`) as JSON-safe data.
 */
export interface ThrownError {
  /** `Error`, `TypeError`, …; `"NonError"` for a thrown value that is not an Error. */
  name: string;
  /** The Error's message, or the thrown value rendered as text (JSON for objects). */
  message: string;
  stack?: string;
  /** The Error's `cause`, kept the same way. */
  cause?: ThrownError;
  /** An Error's own enumerable fields (`code`, `errno`, `path`, …), JSON-safe. */
  fields?: Record<string, unknown>;
  /** The thrown value itself when it was not an Error, JSON-safe. */
  value?: unknown;
}

/**
 * The text of something thrown: an Error's message, a string as it is, any other value as JSON
 * (so `throw { code: 42 }` reads `{"code":42}`, not `[object Object]`).
 *
 * @example
 * ```ts
 * errorText(new Error("disk full")); // "disk full"
 * errorText({ code: 42 }); // '{"code":42}'
 * ```
 */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === "string") return error;
  if (error === undefined) return "undefined";
  try {
    const json = JSON.stringify(toJsonSafe(error, 0));
    if (json !== undefined) return json;
  } catch {
    // fall through to String()
  }
  return String(error);
}

/**
 * Codes of a connection that failed: Node's `E…` system errors, undici's `UND_ERR_…`, and TLS:
 * Node's `ERR_TLS_…` / `ERR_SSL_…` and OpenSSL's certificate verdicts (`CERT_HAS_EXPIRED`,
 * `DEPTH_ZERO_SELF_SIGNED_CERT`, `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, …).
 */
const CONNECTION_CODE =
  /^(E[A-Z]+|UND_ERR_[A-Z_]+|ERR_(TLS|SSL)_[A-Z0-9_]+|CERT_[A-Z_]+|[A-Z_]*SELF_SIGNED_CERT[A-Z_]*|UNABLE_TO_[A-Z_]+)$/;

/**
 * The low-level cause of a failed connection, from an error's `cause` chain: the deepest error
 * with a string `code` (`ECONNREFUSED`, `ENOTFOUND`, `UND_ERR_CONNECT_TIMEOUT`, …) and its message.
 * `undefined` when the chain names none.
 *
 * @example
 * ```ts
 * connectionCause(apiConnectionError); // { code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:1" }
 * ```
 */
export function connectionCause(error: unknown): { code: string; message: string } | undefined {
  let found: { code: string; message: string } | undefined;
  const seen = new Set<unknown>();
  for (
    let e: unknown = error;
    e && typeof e === "object" && !seen.has(e);
    e = (e as { cause?: unknown }).cause
  ) {
    seen.add(e);
    const { code, message, reason } = e as { code?: unknown; message?: unknown; reason?: unknown };
    if (typeof code === "string" && CONNECTION_CODE.test(code)) {
      // OpenSSL's message is a dump of its error queue; its `reason` says the same in words.
      const text = typeof reason === "string" ? reason : typeof message === "string" ? message : code;
      found = { code, message: text };
    }
    // Node's AggregateError (several addresses tried): the first attempt's cause says it.
    const inner = (e as { errors?: unknown }).errors;
    if (!found && Array.isArray(inner) && inner.length > 0) {
      const first = connectionCause(inner[0]);
      if (first) found = first;
    }
  }
  return found;
}

/**
 * Something thrown as JSON-safe data (see {@link ThrownError}), its `cause` chain included (up to
 * a few levels, cycles cut).
 *
 * @example
 * ```ts
 * thrownError(new TypeError("bad", { cause: { code: 42 } }));
 * // { name: "TypeError", message: "bad", stack: "...", cause: { name: "NonError", message: '{"code":42}', value: { code: 42 } } }
 * ```
 */
export function thrownError(error: unknown, depth = 0): ThrownError {
  if (error instanceof Error) {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) {
      if (key === "cause" || key === "stack" || key === "message" || key === "name") continue;
      fields[key] = toJsonSafe(value, 1);
    }
    return {
      name: error.name,
      message: error.message,
      ...(typeof error.stack === "string" && { stack: error.stack }),
      ...(error.cause !== undefined && depth < 4 && { cause: thrownError(error.cause, depth + 1) }),
      ...(Object.keys(fields).length > 0 && { fields }),
    };
  }
  return { name: "NonError", message: errorText(error), value: toJsonSafe(error, 0) };
}

/** A JSON-safe copy: functions, symbols and bigints as text, cycles and depth cut. */
function toJsonSafe(value: unknown, depth: number, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value === undefined) return null;
  if (typeof value === "function") return `[function ${value.name || "anonymous"}]`;
  if (typeof value === "symbol") return value.toString();
  if (value instanceof Error) return thrownError(value, 4);
  if (seen.has(value) || depth > 5) return "[…]";
  seen.add(value);
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => toJsonSafe(item, depth + 1, seen));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value).slice(0, 50)) copy[key] = toJsonSafe(item, depth + 1, seen);
  return copy;
}
