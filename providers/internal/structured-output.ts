import type { JsonSchemaObject, OutputRequest } from "../../core/output.js";
import type { ProviderEvent, ProviderRequest, ToolSpec } from "../provider.js";

/**
 * Whether a JSON Schema meets OpenAI's strict structured outputs (every object closed with
 * `additionalProperties: false` and every property required, no `$ref`-free gaps we can see): then
 * the request asks for `strict: true` and the API guarantees the shape; otherwise `strict: false`
 * and the agent's own validation (and repair) is what holds the answer to the schema.
 *
 * @example
 * ```ts
 * isStrictSchema(z.toJSONSchema(z.object({ a: z.string() }), { io: "output" })); // true
 * ```
 */
export function isStrictSchema(schema: unknown): boolean {
  if (schema === null || typeof schema !== "object") return true;
  if (Array.isArray(schema)) return schema.every(isStrictSchema);
  const node = schema as Record<string, unknown>;
  if (node.type === "object" || node.properties !== undefined) {
    if (node.additionalProperties !== false) return false;
    const properties = Object.keys((node.properties as object | undefined) ?? {});
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    if (properties.some((key) => !required.has(key))) return false;
  }
  for (const [key, value] of Object.entries(node)) {
    if (key === "enum" || key === "const" || key === "default" || key === "examples") continue;
    if (value !== null && typeof value === "object" && !isStrictSchema(value)) return false;
  }
  return true;
}

/** OpenAI Chat Completions' `response_format` for an output schema. */
export function chatResponseFormat(output: OutputRequest) {
  return {
    type: "json_schema" as const,
    json_schema: {
      name: output.name,
      ...(output.description !== undefined && { description: output.description }),
      schema: output.schema,
      strict: isStrictSchema(output.schema),
    },
  };
}

/** OpenAI Responses' `text` parameter for an output schema. */
export function responsesTextFormat(output: OutputRequest) {
  return {
    format: {
      type: "json_schema" as const,
      name: output.name,
      ...(output.description !== undefined && { description: output.description }),
      schema: output.schema,
      strict: isStrictSchema(output.schema),
    },
  };
}

/** Anthropic Messages' `output_config` for an output schema (structured outputs, JSON format). */
export function anthropicOutputConfig(output: OutputRequest) {
  return { format: { type: "json_schema" as const, schema: output.schema } };
}

/** The output tool's spec: the schema as the tool's parameters (a JSON Schema of an object). */
export function outputToolSpec(output: OutputRequest): ToolSpec {
  return {
    name: output.name,
    description:
      output.description ??
      "Gives your final answer. Call it exactly once, when you are done, with the answer as its arguments; " +
        "do not answer in text.",
    parameters: objectSchema(output.schema),
  };
}

/** Tool parameters must be an object schema; any other schema is wrapped as `{ value }`. */
function objectSchema(schema: JsonSchemaObject): JsonSchemaObject {
  return schema.type === "object"
    ? schema
    : { type: "object", properties: { value: schema }, required: ["value"] };
}

/**
 * A provider's stream with the output schema given as a tool the model must call to finish (the
 * way of the OpenAI Agents SDK and pydantic-ai), for APIs whose structured output cannot be combined
 * with tools, or that have none. The request gets the output tool and `toolChoice: "required"`
 * (unless it says `"none"`: the answer a limit asks for comes as text); the stream's calls of that
 * tool come back as text deltas of their arguments, so the agent sees a final answer in text, as
 * with native structured output, and the transcript needs no result for it. A message whose only
 * call is the output tool ends with `stop`.
 *
 * @example
 * ```ts
 * stream: (request, signal) => withOutputTool(request, (r) => streamGemini(r, signal)),
 * ```
 */
export async function* withOutputTool(
  request: ProviderRequest,
  stream: (request: ProviderRequest) => AsyncIterable<ProviderEvent>,
): AsyncGenerator<ProviderEvent> {
  const output = request.output;
  if (!output) {
    yield* stream(request);
    return;
  }
  const spec = outputToolSpec(output);
  const wrapped = spec.parameters !== output.schema;
  const forced: ProviderRequest = {
    systemPrompt: request.systemPrompt,
    messages: request.messages,
    tools: [...request.tools.filter((tool) => tool.name !== spec.name), spec],
    ...(request.toolChoice !== "none"
      ? { toolChoice: "required" as const }
      : { toolChoice: "none" as const }),
  };
  const outputCalls = new Map<string, boolean>();
  let otherCalls = false;
  for await (const event of stream(forced)) {
    switch (event.type) {
      case "toolcall_start":
        if (event.name === spec.name) {
          outputCalls.set(event.id, false);
          continue;
        }
        otherCalls = true;
        break;
      case "toolcall_delta":
        if (outputCalls.has(event.id)) {
          // A wrapped schema's arguments are `{ value }`: only the end has the answer itself.
          if (!wrapped) {
            outputCalls.set(event.id, true);
            yield { type: "text_delta", delta: event.delta };
          }
          continue;
        }
        break;
      case "toolcall_end":
        if (outputCalls.has(event.id) || event.name === spec.name) {
          if (!outputCalls.get(event.id)) {
            const value = wrapped ? event.arguments.value : event.arguments;
            yield { type: "text_delta", delta: JSON.stringify(value) };
          }
          continue;
        }
        otherCalls = true;
        break;
      case "done":
        if (event.stopReason === "toolUse" && outputCalls.size > 0 && !otherCalls) {
          yield { ...event, stopReason: "stop" };
          continue;
        }
        break;
    }
    yield event;
  }
}
