/**
 * The JSON inside a model's answer: the text without a Markdown code fence around it (```json …
 * ```), which models add now and then even when asked for JSON only.
 *
 * @example
 * ```ts
 * unfencedJson('```json\n{"a":1}\n```'); // '{"a":1}'
 * ```
 */
export function unfencedJson(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith("```")) return trimmed;
  const firstLine = trimmed.indexOf("\n");
  if (firstLine < 0) return "";
  const body = trimmed.slice(firstLine + 1);
  const close = body.lastIndexOf("```");
  return (close >= 0 ? body.slice(0, close) : body).trim();
}

/**
 * A best-effort parse of JSON that is still streaming: the value as far as it has arrived, with
 * open strings, arrays and objects closed, and a key or literal still incomplete left out
 * (`{"title": "Fix the lo` → `{ title: "Fix the lo" }`). `undefined` while nothing usable has
 * arrived (or the text is not JSON). For UIs that render an object's fields as they stream
 * (`output_delta` events carry it).
 *
 * @example
 * ```ts
 * parsePartialJson('{"severity": "high", "tags": ["a", "b'); // { severity: "high", tags: ["a", "b"] }
 * ```
 */
export function parsePartialJson(text: string): unknown {
  const source = unfencedJson(text);
  const start = firstOpener(source);
  if (start < 0) return undefined;
  const json = source.slice(start);
  const whole = tryParse(json);
  if (whole.ok) return whole.value;
  const scan = scanJson(json);
  const candidates: string[] = [];
  if (scan.inValueString) candidates.push(`${withoutOpenEscape(json)}"${closers(scan.stack)}`);
  candidates.push(`${json}${closers(scan.stack)}`);
  if (scan.safe) candidates.push(`${json.slice(0, scan.safe.end)}${closers(scan.safe.stack)}`);
  for (const candidate of candidates) {
    const parsed = tryParse(candidate);
    if (parsed.ok) return parsed.value;
  }
  return undefined;
}

interface Scan {
  /** The closing brackets still owed, innermost last. */
  stack: string[];
  /** The text ends inside a string that is a value (not a key). */
  inValueString: boolean;
  /** The last place where the text could be cut and closed: after a complete value or an opener. */
  safe?: { end: number; stack: string[] };
}

function scanJson(json: string): Scan {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  let stringIsKey = false;
  let expectKey = false;
  let safe: Scan["safe"];
  const markSafe = (end: number) => {
    safe = { end, stack: [...stack] };
  };
  for (let i = 0; i < json.length; i++) {
    const ch = json[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') {
        inString = false;
        if (!stringIsKey) markSafe(i + 1);
      }
      continue;
    }
    switch (ch) {
      case "{":
        stack.push("}");
        expectKey = true;
        markSafe(i + 1);
        break;
      case "[":
        stack.push("]");
        expectKey = false;
        markSafe(i + 1);
        break;
      case "}":
      case "]":
        stack.pop();
        markSafe(i + 1);
        expectKey = false;
        break;
      case '"':
        inString = true;
        stringIsKey = stack.at(-1) === "}" && expectKey;
        break;
      case ":":
        expectKey = false;
        break;
      case ",":
        // The value before the comma is complete (a number or a literal ends here).
        markSafe(i);
        expectKey = stack.at(-1) === "}";
        break;
    }
  }
  return { stack, inValueString: inString && !stringIsKey, ...(safe && { safe }) };
}

function firstOpener(text: string): number {
  const brace = text.indexOf("{");
  const bracket = text.indexOf("[");
  if (brace < 0) return bracket;
  if (bracket < 0) return brace;
  return Math.min(brace, bracket);
}

/** An escape cut in half (`\`, `\u00`) cannot be closed: it is dropped. */
function withoutOpenEscape(json: string): string {
  const match = /\\(u[0-9a-fA-F]{0,3})?$/.exec(json);
  if (!match) return json;
  // An even run of backslashes is escaped backslashes, not an open escape.
  let backslashes = 0;
  for (let i = match.index; i >= 0 && json[i] === "\\"; i--) backslashes++;
  if (!match[1] && backslashes % 2 === 0) return json;
  return json.slice(0, match.index);
}

function closers(stack: readonly string[]): string {
  let out = "";
  for (let i = stack.length - 1; i >= 0; i--) out += stack[i];
  return out;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
