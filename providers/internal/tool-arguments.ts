/**
 * The key under which tool-call arguments that are not a JSON object are passed on. The tool-call
 * actor's schema validation then fails on the call and the model sees why, instead of the call
 * running with made-up arguments.
 */
export const INVALID_JSON_ARGUMENTS_KEY = "__invalid_json";

/**
 * Parses the raw JSON a model streamed as a tool call's arguments. An empty string is `{}` (a call
 * without arguments); anything that is not a JSON object becomes `{ __invalid_json: raw }`.
 *
 * @example
 * ```ts
 * parseToolArguments('{"path":"a.txt"}'); // { path: "a.txt" }
 * parseToolArguments('{"path":');         // { __invalid_json: '{"path":' }
 * ```
 */
export function parseToolArguments(raw: string): Record<string, unknown> {
  if (raw.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // fall through: reported to the tool as invalid
  }
  return { [INVALID_JSON_ARGUMENTS_KEY]: raw };
}
