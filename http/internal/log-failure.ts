// A listener's own failure, told to the server's log and to no one else: the client gets a plain
// "failed on the server", the log gets what failed with anything that reads as a secret redacted
// (an app's authorize hook that throws with the bearer token it was shown, a URL with a password).
import { errorText } from "../../core/error-text.js";
import { redactText } from "../../core/redact.js";

/**
 * Logs `error` under `what` on `console.error`, its message and stack with secrets redacted by
 * value (a key's shape, `Bearer …`, `Authorization: …`, a URL's password).
 *
 * @example
 * ```ts
 * logFailure("agent-machine/http: a route failed", new Error("bad token Bearer sk-ant-…"));
 * // agent-machine/http: a route failed Error: bad token Bearer [redacted] …
 * ```
 */
export function logFailure(what: string, error: unknown): void {
  const text = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : errorText(error);
  console.error(what, redactText(text));
}
