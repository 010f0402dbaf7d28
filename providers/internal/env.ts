/**
 * The process environment where there is one (Node, Deno, Bun), else an empty one (a browser, a
 * worker), so the providers' `process.env` defaults never throw outside Node.
 *
 * @example
 * ```ts
 * const key = processEnv().OPENAI_API_KEY; // undefined in a browser
 * ```
 */
export function processEnv(): Record<string, string | undefined> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
}
