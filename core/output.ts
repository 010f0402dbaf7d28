// The output contract, as types: what `createAgent({ output })` and `prompt(input, { output })`
// accept, what the model is asked for, and the output filters' verdicts. The logic (parsing,
// validation, the corrections the model gets) is in rules/output.logic.ts.
import type * as z from "zod";

/** A JSON Schema object, as a frontend or a file declares one (`{ type: "object", properties: … }`). */
export type JsonSchemaObject = Record<string, unknown>;

/** What an output schema may be: a zod 4 schema (validated by zod, typed) or a JSON Schema object. */
export type OutputSchema = z.ZodType | JsonSchemaObject;

/**
 * An output schema with its settings, for `createAgent({ output })` / `prompt(input, { output })`.
 *
 * @example
 * ```ts
 * const output: OutputOptions<typeof Triage> = { schema: Triage, name: "triage", maxRepairs: 1 };
 * ```
 */
export interface OutputOptions<TSchema extends OutputSchema = OutputSchema> {
  schema: TSchema;
  /** The name the provider gets for the schema (and for the output tool where one is used). Default `"final_answer"`. */
  name?: string;
  /** What the object is, for the model. */
  description?: string;
  /**
   * How many times the model is told why its answer was not valid (JSON that does not parse, or
   * fails the schema) and asked again, before the run ends with an error. Default 2.
   */
  maxRepairs?: number;
}

/** What `output` accepts: a schema, or a schema with its settings. */
export type OutputOption = OutputSchema | OutputOptions;

/**
 * The type of the object an output option produces: the zod schema's output type, `unknown` for a
 * JSON Schema.
 *
 * @example
 * ```ts
 * type Triage = InferOutput<typeof TriageSchema>; // { severity: "low" | "high"; summary: string }
 * ```
 */
export type InferOutput<T> = T extends z.ZodType
  ? z.output<T>
  : T extends { schema: infer S }
    ? S extends z.ZodType
      ? z.output<S>
      : unknown
    : unknown;

/**
 * The output schema of a run, in the JSON-safe form the machine keeps (in snapshots too): the JSON
 * Schema the provider gets, its name, and the repair budget. The zod schema it came from, when it
 * came from one, validates (see `registerOutputSchema`); a restored run validates by the JSON Schema.
 */
export interface OutputSpec {
  name: string;
  description?: string;
  schema: JsonSchemaObject;
  maxRepairs: number;
}

/** What a provider is asked for: the final answer is a JSON object of this schema. */
export interface OutputRequest {
  name: string;
  description?: string;
  schema: JsonSchemaObject;
}

/** The final answer an output filter sees: its text, and the object when the run has an output schema. */
export interface FinalAnswer {
  text: string;
  /** The validated object (only with an output schema). */
  output?: unknown;
}

/** The verdict of one output filter. */
export type OutputFilterResult = { pass: true } | { warn: string } | { reject: string };

/**
 * Checks the final answer (text or object) before the run ends with it: `pass`, `warn` (kept as an
 * annotation of the outcome and an event) or `reject` (the model is told the reason and answers
 * again; a throw rejects with its message). See `createAgent({ outputFilters })`.
 */
export type OutputFilter = (answer: FinalAnswer) => OutputFilterResult;
