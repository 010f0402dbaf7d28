import * as z from "zod";
import { PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import type { AssistantMessage, CustomMessage } from "../core/messages.js";
import type {
  FinalAnswer,
  JsonSchemaObject,
  OutputFilter,
  OutputOption,
  OutputRequest,
  OutputSpec,
} from "../core/output.js";
import { unfencedJson } from "../core/partial-json.js";
import { describeValue } from "../core/option-values.js";

/** The schema's name when none is given: what the provider (and the output tool) is told. */
export const DEFAULT_OUTPUT_NAME = "final_answer";
/** Times the model is asked to mend an answer that does not parse or fails the schema. */
export const DEFAULT_MAX_REPAIRS = 2;
/** Times the model is asked for another answer after an output filter rejected one. */
export const DEFAULT_MAX_REJECTIONS = 2;
/** `customType` of the message that tells the model why its answer was not taken. */
export const OUTPUT_CORRECTION_TYPE = "output_correction";

/** The zod schema each spec was made from, so a run validates with it (transforms, refinements too). */
const zodOf = new WeakMap<JsonSchemaObject, z.ZodType>();
/** Validators made from a JSON Schema alone (a spec given as one, or restored from a snapshot). */
const fromJson = new WeakMap<JsonSchemaObject, z.ZodType>();

/**
 * The JSON-safe spec of an output option, as the machine keeps it: a zod schema is converted to
 * JSON Schema (and remembered, so the run validates with zod itself); a JSON Schema is kept as it is.
 * Throws a `TypeError` naming `where` for anything else.
 *
 * @example
 * ```ts
 * outputSpecOf(z.object({ ok: z.boolean() })).schema; // { type: "object", properties: { ok: … }, … }
 * ```
 */
export function outputSpecOf(option: OutputOption, where = "output"): OutputSpec {
  const options = isOptionsObject(option) ? option : { schema: option };
  const { schema } = options;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError(
      `${where} must be a zod 4 schema, a JSON Schema object or { schema, name?, maxRepairs? }, got ${describeValue(schema)}`,
    );
  }
  const maxRepairs = options.maxRepairs ?? DEFAULT_MAX_REPAIRS;
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0) {
    throw new TypeError(`${where}.maxRepairs must be a whole number ≥ 0, got ${describeValue(maxRepairs)}`);
  }
  const name = options.name ?? DEFAULT_OUTPUT_NAME;
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new TypeError(`${where}.name must be 1-64 letters, digits, _ or -, got ${describeValue(name)}`);
  }
  const zod = schema instanceof z.ZodType ? schema : undefined;
  const json = zod ? jsonSchemaOf(zod) : withoutMeta(schema as JsonSchemaObject);
  if (zod) zodOf.set(json, zod);
  else validatorOf({ name, schema: json, maxRepairs }, where);
  return { name, schema: json, maxRepairs, ...(options.description && { description: options.description }) };
}

/** What the provider is asked for, from a run's spec. */
export function outputRequestOf(spec: OutputSpec): OutputRequest {
  return {
    name: spec.name,
    schema: spec.schema,
    ...(spec.description !== undefined && { description: spec.description }),
  };
}

function isOptionsObject(option: OutputOption): option is Extract<OutputOption, { schema: unknown }> {
  return (
    option !== null &&
    typeof option === "object" &&
    !(option instanceof z.ZodType) &&
    "schema" in option &&
    typeof option.schema === "object" &&
    // A JSON Schema whose own property is called `schema` is not an options object.
    !("type" in option)
  );
}

function jsonSchemaOf(schema: z.ZodType): JsonSchemaObject {
  return withoutMeta(z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as JsonSchemaObject);
}

function withoutMeta(schema: JsonSchemaObject): JsonSchemaObject {
  if (!("$schema" in schema)) return schema;
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** The validator of a spec: its zod schema, or one made from its JSON Schema. */
function validatorOf(spec: OutputSpec, where = "output"): z.ZodType {
  const zod = zodOf.get(spec.schema) ?? fromJson.get(spec.schema);
  if (zod) return zod;
  let made: z.ZodType;
  try {
    made = z.fromJSONSchema(spec.schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new TypeError(`${where}: the JSON Schema cannot be used: ${(error as Error).message}`, {
      cause: error,
    });
  }
  fromJson.set(spec.schema, made);
  return made;
}

/** The text of an assistant message (its text blocks, joined). */
export function answerText(message: AssistantMessage): string {
  let text = "";
  for (const block of message.content) if (block.type === "text") text += block.text;
  return text;
}

/** Whether a message is a final answer the output checks apply to: the model stopped, with no tool call. */
export function isFinalAnswer(message: AssistantMessage): boolean {
  if (message.stopReason !== "stop" && message.stopReason !== "length") return false;
  return !message.content.some((block) => block.type === "toolCall");
}

/**
 * Parses and validates an answer against a spec: the object, or why it is not one (the parse
 * error, or zod's account of every field that fails).
 *
 * @example
 * ```ts
 * validateOutput(spec, '{"severity":"urgent"}'); // { ok: false, error: '✖ Invalid option: … → at severity' }
 * ```
 */
export function validateOutput(
  spec: OutputSpec,
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  const json = unfencedJson(text);
  if (json === "") return { ok: false, error: "The answer was empty: a JSON object was expected" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return { ok: false, error: `The answer is not valid JSON: ${(error as Error).message}` };
  }
  const result = validatorOf(spec).safeParse(parsed);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, error: `The answer does not match the schema:\n${z.prettifyError(result.error)}` };
}

/**
 * Why an answer stopped at the output token limit fails: said first, so the model answers shorter
 * and the user reads the cause (a provider's `maxTokens`), not only the JSON parser's complaint.
 */
function cutOffNote(message: AssistantMessage): string {
  return message.stopReason === "length"
    ? "The answer was cut off at the output token limit before it was complete (answer shorter, or raise the provider's maxTokens). "
    : "";
}

/** One output filter's verdict on an answer. */
export interface OutputVerdict {
  /** The filter's function name, or `outputFilters[i]`. */
  filter: string;
  verdict: "pass" | "warn" | "reject";
  /** The warning or the reason of the rejection. */
  reason?: string;
}

/**
 * What the checks found in a final answer: the object (with an output schema), or the problem (an
 * invalid object, or a filter's rejection), and each filter's verdict. The model stream works it
 * out as the answer ends; the machine records it and decides whether the model tries again.
 */
export interface AnswerCheck {
  /** The answer as the model gave it. */
  raw: string;
  /** The validated object, when the run has an output schema and the answer meets it. */
  output?: { value: unknown };
  problem?: { kind: "invalid"; error: string } | { kind: "rejected"; reason: string; filter: string };
  verdicts: OutputVerdict[];
  /** How many times a problem of this kind may be sent back to the model in this run. */
  maxRetries: number;
}

/**
 * Checks a final answer: parsed and validated against the run's output schema (when it has one),
 * then through the output filters in order, the first reject winning (a throwing filter rejects
 * with its message); filters see only a valid answer. `undefined` when there is nothing to check.
 *
 * @example
 * ```ts
 * checkAnswer(message, spec, [noSecrets], 2)?.problem; // { kind: "rejected", reason: "…", filter: "noSecrets" }
 * ```
 */
export function checkAnswer(
  message: AssistantMessage,
  spec: OutputSpec | undefined,
  filters: readonly OutputFilter[],
  maxRejections = DEFAULT_MAX_REJECTIONS,
): AnswerCheck | undefined {
  if (!spec && filters.length === 0) return undefined;
  if (!isFinalAnswer(message)) return undefined;
  const raw = answerText(message);
  let output: AnswerCheck["output"];
  if (spec) {
    const validated = validateOutput(spec, raw);
    if (!validated.ok) {
      return {
        raw,
        problem: { kind: "invalid", error: cutOffNote(message) + validated.error },
        verdicts: [],
        maxRetries: spec.maxRepairs,
      };
    }
    output = { value: validated.value };
  }
  const answer: FinalAnswer = output ? { text: raw, output: output.value } : { text: raw };
  const verdicts: OutputVerdict[] = [];
  for (let i = 0; i < filters.length; i++) {
    const filter = filters[i];
    const name = filter.name || `outputFilters[${i}]`;
    const verdict = runFilter(filter, answer);
    verdicts.push({ filter: name, ...verdict });
    if (verdict.verdict === "reject") {
      return {
        raw,
        ...(output && { output }),
        problem: { kind: "rejected", reason: verdict.reason ?? "", filter: name },
        verdicts,
        maxRetries: maxRejections,
      };
    }
  }
  return { raw, ...(output && { output }), verdicts, maxRetries: 0 };
}

function runFilter(filter: OutputFilter, answer: FinalAnswer): Omit<OutputVerdict, "filter"> {
  let result: ReturnType<OutputFilter>;
  try {
    result = filter(answer);
  } catch (error) {
    return { verdict: "reject", reason: error instanceof Error ? error.message : String(error) };
  }
  if (result && typeof result === "object") {
    if ("reject" in result) return { verdict: "reject", reason: String(result.reject) };
    if ("warn" in result) return { verdict: "warn", reason: String(result.warn) };
  }
  return { verdict: "pass" };
}

/** The warnings of an accepted answer's filters. */
export function warningsOf(check: AnswerCheck | undefined): string[] {
  if (!check) return [];
  const out: string[] = [];
  for (const verdict of check.verdicts) if (verdict.verdict === "warn") out.push(verdict.reason ?? "");
  return out;
}

/**
 * What the model reads when its answer was not taken: the validation error or the filter's reason,
 * and what to do (a custom message shown to the model, as the loop and limit notices are).
 *
 * @example
 * ```ts
 * outputCorrection({ kind: "invalid", error: "The answer is not valid JSON: …" }, spec).content;
 * // "[Your answer was not accepted. The answer is not valid JSON: … Answer again with only …]"
 * ```
 */
export function outputCorrection(
  problem: NonNullable<AnswerCheck["problem"]>,
  spec: OutputSpec | undefined,
  timestamp = Date.now(),
  id = PROCESS_MESSAGE_IDS.next(),
): CustomMessage {
  const how = spec
    ? ` Answer again with only the corrected JSON object for "${spec.name}" (or call the ${spec.name} tool when you have one), matching the schema.`
    : " Answer again, taking this into account.";
  const why = problem.kind === "invalid" ? problem.error : `It was rejected: ${problem.reason}`;
  return {
    role: "custom",
    customType: OUTPUT_CORRECTION_TYPE,
    content: `[Your answer was not accepted. ${why}${how}]`,
    display: "model",
    details: { kind: problem.kind },
    timestamp,
    id,
    source: "agent",
  };
}

/**
 * The run's error when the model never gave a valid answer: what failed last, with the answer.
 *
 * @example
 * ```ts
 * outputFailureText("The answer is not valid JSON: …", 3); // "No valid output after 3 attempts: …"
 * ```
 */
export function outputFailureText(error: string, attempts: number): string {
  return `No valid output after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${error}`;
}

/**
 * What a run's `agent_end` reports of its output: the object of an answer that was taken (reason
 * `"stop"`, or `"limit"` when the answer the limit asked for is valid), the filters' warnings, and
 * for a run that ends on an answer not taken, why and the answer itself (withheld from `output`).
 *
 * @example
 * ```ts
 * outputOfRun(run); // { output: { severity: "high" }, outputWarnings: ["mentions a customer"] }
 * ```
 */
export function outputOfRun(run: { endReason?: string; answer?: AnswerCheck }): {
  output?: unknown;
  outputWarnings?: string[];
  rejection?: string;
  rawOutput?: string;
} {
  const { answer } = run;
  if (!answer) return {};
  const reason = run.endReason ?? "stop";
  const { problem } = answer;
  if (problem) {
    if (problem.kind === "rejected" && reason === "rejected")
      return { rejection: problem.reason, rawOutput: answer.raw };
    if (problem.kind === "invalid" && (reason === "error" || reason === "limit"))
      return { rawOutput: answer.raw };
    return {};
  }
  if (reason !== "stop" && reason !== "limit") return {};
  const warnings = warningsOf(answer);
  return {
    ...(answer.output && { output: answer.output.value }),
    ...(warnings.length > 0 && { outputWarnings: warnings }),
  };
}
