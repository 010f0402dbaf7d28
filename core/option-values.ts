/**
 * Checks of option *values*, the companion of `checkOptionKeys`: a value of the wrong type or out of
 * range is refused where the option is taken (`createAgent`, a provider factory), with a
 * `TypeError` naming the option, what it accepts and what it got, never later inside an actor.
 * Plain-JavaScript callers and `option: cond ? value : undefined` reach these checks; TypeScript
 * callers mostly do not.
 */

/**
 * A short, readable rendering of a value for an error message: strings quoted, objects as
 * (truncated) JSON, functions by name.
 *
 * @example
 * ```ts
 * describeValue("5"); // 'the string "5"'
 * describeValue({ batched: 0 }); // '{"batched":0}'
 * ```
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(truncate(value, 60))}`;
  if (typeof value === "function") return `a function${value.name ? ` (${value.name})` : ""}`;
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol") return value.toString();
  if (value === null || typeof value !== "object") return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  try {
    return truncate(JSON.stringify(value) ?? String(value), 80);
  } catch {
    return "an object";
  }
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * Throws the `TypeError` every value check throws: `<where>: <option> must be <accepts>, got <value>`.
 *
 * @example
 * ```ts
 * refuseValue("createAgent", "limits.maxTurns", "a whole number ≥ 1", "5");
 * // TypeError: createAgent: limits.maxTurns must be a whole number ≥ 1, got the string "5"
 * ```
 */
export function refuseValue(where: string, option: string, accepts: string, value: unknown): never {
  // "model is required:" reads on without "must be".
  const verb = option.endsWith(":") ? "" : " must be";
  throw new TypeError(`${where}: ${option}${verb} ${accepts}, got ${describeValue(value)}`);
}

/**
 * A whole number of at least `min` (absent is fine).
 *
 * @example
 * ```ts
 * checkInteger("createAgent", "limits.maxTurns", options.limits?.maxTurns, 1);
 * ```
 */
export function checkInteger(where: string, option: string, value: unknown, min: number): void {
  if (value === undefined) return;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    refuseValue(where, option, `a whole number ≥ ${min}`, value);
  }
}

/**
 * A number of at least `min` (absent is fine); `Infinity` only when `infinite` says so.
 *
 * @example
 * ```ts
 * checkNumber("createAgent", "toolTimeoutMs", options.toolTimeoutMs, { min: 0, exclusive: true });
 * ```
 */
export function checkNumber(
  where: string,
  option: string,
  value: unknown,
  range: { min: number; max?: number; exclusive?: boolean; infinite?: boolean },
): void {
  if (value === undefined) return;
  const { min, max, exclusive = false, infinite = false } = range;
  const ok =
    typeof value === "number" &&
    !Number.isNaN(value) &&
    (exclusive ? value > min : value >= min) &&
    (max === undefined || value <= max) &&
    (infinite || Number.isFinite(value));
  if (!ok) {
    const bounds = `${exclusive ? ">" : "≥"} ${min}${max === undefined ? "" : ` and ≤ ${max}`}`;
    refuseValue(where, option, `a number ${bounds}${infinite ? " (or Infinity)" : ""}`, value);
  }
}

/**
 * One of the listed strings (absent is fine).
 *
 * @example
 * ```ts
 * checkOneOf("createAgent", "hibernate", options.hibernate, ["whenIdle", "manual"]);
 * ```
 */
export function checkOneOf(where: string, option: string, value: unknown, allowed: readonly string[]): void {
  if (value === undefined || (typeof value === "string" && allowed.includes(value))) return;
  refuseValue(where, option, `one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`, value);
}

/**
 * A value of a `typeof` kind (absent is fine).
 *
 * @example
 * ```ts
 * checkType("createAgent", "systemPrompt", options.systemPrompt, "string");
 * ```
 */
export function checkType(
  where: string,
  option: string,
  value: unknown,
  type: "string" | "boolean" | "function" | "object",
): void {
  if (value === undefined) return;
  const ok = type === "object" ? value !== null && typeof value === "object" : typeof value === type;
  if (!ok) refuseValue(where, option, type === "object" ? "an object" : `a ${type}`, value);
}

/**
 * A non-empty string, required or not; `accepts` says what it is (e.g. `"the model name the server
 * knows, e.g. \"llama3.1:8b\""`).
 *
 * @example
 * ```ts
 * checkString("openaiCompatible", "model", options.model, { required: true });
 * // openaiCompatible: model is required: a non-empty string, got undefined
 * ```
 */
export function checkString(
  where: string,
  option: string,
  value: unknown,
  { required = false, accepts = "a non-empty string" }: { required?: boolean; accepts?: string } = {},
): void {
  if (value === undefined && !required) return;
  if (typeof value !== "string" || value.trim() === "") {
    refuseValue(where, value === undefined ? `${option} is required:` : option, accepts, value);
  }
}

/**
 * An absolute http(s) URL (absent is fine unless `required`): `localhost:11434/v1` without its
 * scheme parses as a URL of scheme `localhost:`, and fails only at the first request.
 *
 * @example
 * ```ts
 * checkHttpUrl("openaiCompatible", "baseURL", options.baseURL, "http://localhost:11434/v1");
 * ```
 */
export function checkHttpUrl(where: string, option: string, value: unknown, example: string): void {
  if (value === undefined) return;
  const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    refuseValue(where, option, `an absolute http(s) URL, e.g. ${JSON.stringify(example)}`, value);
  }
}
