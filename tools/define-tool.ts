import * as z from "zod";
import { errorText, type ThrownError, thrownError } from "../core/error-text.js";
import type { ToolCall } from "../core/messages.js";
import type { ToolSpec } from "../core/provider.js";
import type { ApprovalContext, Tool, ToolContext, ToolResult } from "../core/tool.js";
import type { Workspace } from "../core/workspace.js";

export type { ApprovalContext, Tool, ToolContext, ToolResult } from "../core/tool.js";

/** Options of {@link defineTool}. */
export interface ToolDefinition<TSchema extends z.ZodType, TDetails = unknown> {
  name: string;
  description: string;
  parameters: TSchema;
  readOnly?: boolean;
  /** Defaults to `readOnly`. */
  concurrencySafe?: boolean;
  timeoutMs?: number;
  /**
   * Characters of text a result of this tool may put into the history; longer results are cut to
   * head and tail. Default: the agent's `toolResultBudget.maxChars` (50,000). `Infinity`: never cut.
   */
  maxResultChars?: number;
  /** The workspace the tool works in, if any. */
  workspace?: Workspace;
  /**
   * Calls wait for `agent.approve(id)` / `agent.deny(id)` before they run: `true` for every call,
   * or a function of the validated arguments deciding per call (a throw denies the call with its
   * message). A human may approve with corrected arguments: `agent.approve(id, { args })`. The
   * agent's permission checker, when set, is asked too: its deny wins, then any ask.
   */
  needsApproval?: boolean | ((args: z.output<TSchema>, ctx: ApprovalContext) => boolean | Promise<boolean>);
  execute(
    args: z.output<TSchema>,
    ctx: ToolContext,
  ): Promise<string | ToolResult<TDetails>> | string | ToolResult<TDetails>;
}

/**
 * Defines a tool from a zod 4 schema. The schema validates the model's arguments and is converted
 * to JSON Schema (`z.toJSONSchema`) for the provider.
 *
 * @example
 * ```ts
 * const add = defineTool({
 *   name: "add",
 *   description: "Adds two numbers",
 *   parameters: z.object({ a: z.number(), b: z.number() }),
 *   readOnly: true,
 *   execute: async ({ a, b }) => String(a + b),
 * });
 * ```
 */
export function defineTool<TSchema extends z.ZodType, TDetails = unknown>(
  definition: ToolDefinition<TSchema, TDetails>,
): Tool<z.output<TSchema>, TDetails> {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(definition.name)) {
    throw new Error(`Invalid tool name "${definition.name}": use 1-64 letters, digits, "_" or "-"`);
  }
  checkZod4Schema(definition.name, definition.parameters);
  if (typeof definition.execute !== "function") {
    throw new TypeError(
      `defineTool "${definition.name}": execute must be a function, got ${typeof definition.execute}`,
    );
  }
  const readOnly = definition.readOnly ?? false;
  return {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters as z.ZodType<z.output<TSchema>>,
    jsonSchema: toJsonSchema(definition.parameters),
    readOnly,
    concurrencySafe: definition.concurrencySafe ?? readOnly,
    timeoutMs: definition.timeoutMs,
    maxResultChars: checkedBudget(`Tool "${definition.name}" maxResultChars`, definition.maxResultChars),
    workspace: definition.workspace,
    ...(definition.needsApproval !== undefined && { needsApproval: definition.needsApproval }),
    execute: definition.execute,
  };
}

/** Options of {@link defineClientTool}. */
export interface ClientToolDefinition<TSchema extends z.ZodType> {
  name: string;
  description: string;
  /**
   * A zod schema (the model's arguments are validated by it, as for any tool), or a JSON Schema
   * object as a frontend declares it (sent to the provider as it is; the arguments pass unchecked,
   * the client validates them).
   */
  parameters: TSchema | Record<string, unknown>;
  /** A call not answered within this many ms is answered with an error the model reads. */
  timeoutMs?: number;
  needsApproval?: ToolDefinition<TSchema>["needsApproval"];
}

/**
 * Declares a tool the *client* runs (a frontend tool of AG-UI or the AI SDK, a human step): the
 * model can call it, but the agent has no `execute`. Each call waits in the tool-call state
 * `awaitingResult` (a `tool_result_requested` event, `agent.pendingToolCalls()`) until
 * `agent.resolveToolCall(id, result)` or `agent.rejectToolCall(id, reason)` answers it; the run
 * stays active meanwhile (abort, limits and `timeoutMs` answer it too), and a persisted snapshot
 * keeps the wait.
 *
 * @example
 * ```ts
 * const pickColor = defineClientTool({
 *   name: "pick_color",
 *   description: "Asks the user to pick a color in the page",
 *   parameters: z.object({ options: z.array(z.string()) }),
 * });
 * agent.events$.subscribe((e) => {
 *   if (e.type === "tool_result_requested") showPicker(e.args, (color) => agent.resolveToolCall(e.toolCallId, color));
 * });
 * ```
 */
export function defineClientTool<TSchema extends z.ZodType>(
  definition: ClientToolDefinition<TSchema>,
): Tool<z.output<TSchema>> {
  const zod = definition.parameters instanceof z.ZodType ? definition.parameters : undefined;
  const tool = defineTool({
    name: definition.name,
    description: definition.description,
    parameters: (zod ?? z.unknown()) as TSchema,
    timeoutMs: definition.timeoutMs,
    ...(definition.needsApproval !== undefined && { needsApproval: definition.needsApproval }),
    execute: () => {
      throw new Error(`Tool ${definition.name} is run by the client: answer it with agent.resolveToolCall`);
    },
  });
  return {
    ...tool,
    ...(zod === undefined && { jsonSchema: definition.parameters as Record<string, unknown> }),
    external: true,
  };
}

/**
 * Refuses a `parameters` that is not a zod 4 schema before zod's JSON Schema conversion fails on it
 * with an error of its own. A zod 4 schema carries `_zod`; a zod 3 one only `_def` (and `~standard`
 * with `vendor: "zod"`): told apart without importing zod 3.
 */
function checkZod4Schema(tool: string, schema: unknown): void {
  const candidate = schema as { _zod?: unknown; _def?: unknown; "~standard"?: { vendor?: unknown } } | null;
  if (candidate !== null && typeof candidate === "object" && candidate._zod !== undefined) return;
  const zod3 =
    candidate !== null &&
    typeof candidate === "object" &&
    (candidate._def !== undefined || candidate["~standard"]?.vendor === "zod");
  throw new TypeError(
    zod3
      ? `defineTool "${tool}": parameters is a zod 3 schema; agent-machine needs zod 4, a peer ` +
          'dependency (npm i zod@^4, then import * as z from "zod")'
      : `defineTool "${tool}": parameters must be a zod 4 schema, e.g. z.object({ city: z.string() }), ` +
          `got ${schema === null ? "null" : typeof schema}`,
  );
}

function toJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io: "input",
    unrepresentable: "any",
  }) as Record<string, unknown>;
  return rest;
}

/** Smallest budget a result can be cut to: below it the marker alone would not fit. */
export const MIN_RESULT_CHARS = 1_000;

/**
 * Checks a result budget (`maxResultChars`, `toolResultBudget.maxChars`): a number of at least
 * {@link MIN_RESULT_CHARS}, or `Infinity`. Throws a clear error naming `what` otherwise.
 *
 * @example
 * ```ts
 * checkedBudget("toolResultBudget.maxChars", 20_000); // 20000
 * ```
 */
export function checkedBudget(what: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || Number.isNaN(value) || value < MIN_RESULT_CHARS) {
    throw new Error(
      `${what} must be a number of characters ≥ ${MIN_RESULT_CHARS} (or Infinity), got ${String(value)}`,
    );
  }
  return value;
}

/** The spec a provider receives for a tool. */
export function toToolSpec(tool: Tool): ToolSpec {
  return { name: tool.name, description: tool.description, parameters: tool.jsonSchema };
}

/** Normalises what `execute` returned into a {@link ToolResult}. */
export function normalizeToolResult(value: unknown): ToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (value && typeof value === "object" && Array.isArray((value as ToolResult).content))
    return value as ToolResult;
  if (value === undefined || value === null) return { content: [{ type: "text", text: "" }] };
  return { content: [{ type: "text", text: JSON.stringify(value) }] };
}

/** A text-only error result. */
export function errorResult(text: string): ToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * The result of a tool call that threw: the model sees the error's message (a thrown non-Error
 * as JSON, never `[object Object]`); the app finds the whole error, JSON-safe, in
 * `details.error` (name, message, stack, cause, an Error's own fields such as `code`), in the
 * transcript and in `tool_execution_end`.
 *
 * @example
 * ```ts
 * thrownErrorResult(new Error("disk full", { cause: err }));
 * // { content: [{ type: "text", text: "disk full" }], details: { error: { name: "Error", message: "disk full", stack, cause } }, isError: true }
 * ```
 */
export function thrownErrorResult(error: unknown): ToolResult<{ error: ThrownError }> {
  return {
    content: [{ type: "text", text: errorText(error) }],
    details: { error: thrownError(error) },
    isError: true,
  };
}

export type { ToolCall };
