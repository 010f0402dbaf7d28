import { fromPromise } from "xstate";
import * as z from "zod";
import type { AgentRuntime } from "../core/runtime.js";
import { runtimeOf } from "../core/runtime.js";
import { INVALID_JSON_ARGUMENTS_KEY } from "../providers/internal/tool-arguments.js";
import type { PermissionDecision } from "../core/options.js";
import { errorResult, type ToolResult } from "../tools/define-tool.js";
import { cutText } from "../tools/result-budget.js";

export interface PrepareToolCallInput {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** Where a call goes after preparation. */
export type Preparation =
  | { outcome: "settled"; result: ToolResult }
  | { outcome: "ask"; args: unknown }
  /** `edited`: a human corrected the arguments at approval; these are what runs. */
  | { outcome: "run"; args: unknown; edited?: true };

/** Preparation so far: `check` when validated arguments still wait for the permission checker. */
export type Validation = Preparation | { outcome: "check"; args: unknown };

/**
 * Looks the tool up and validates the arguments with its zod schema, synchronously. Every refusal
 * is a result the model can read, never an exception.
 *
 * @example
 * ```ts
 * validateToolCall(runtime, { toolCallId: "c1", toolName: "nope", args: {} });
 * // { outcome: "settled", result: { content: [{ type: "text", text: "Tool nope not found" }], isError: true } }
 * ```
 */
export function validateToolCall(runtime: AgentRuntime, input: PrepareToolCallInput): Validation {
  const tool = runtime.tools.get(input.toolName);
  if (!tool) return { outcome: "settled", result: errorResult(`Tool ${input.toolName} not found`) };
  const rawJson = unparsedArguments(input.args);
  if (rawJson !== undefined) {
    return {
      outcome: "settled",
      result: errorResult(
        `Validation failed for tool "${input.toolName}": the arguments are not valid JSON: ${echoed(rawJson, runtime)}`,
      ),
    };
  }
  try {
    const parsed = tool.parameters.safeParse(input.args);
    if (!parsed.success) {
      return {
        outcome: "settled",
        result: errorResult(
          `Validation failed for tool "${input.toolName}": ${z.prettifyError(parsed.error)}`,
        ),
      };
    }
    // A client-run call is neither checked nor held for approval: the client, where the user is, runs it.
    if (tool.external) return { outcome: "run", args: parsed.data };
    const asks = tool.needsApproval !== undefined && tool.needsApproval !== false;
    return { outcome: runtime.permissions || asks ? "check" : "run", args: parsed.data };
  } catch (error) {
    return {
      outcome: "settled",
      result: errorResult(`Validation failed for tool "${input.toolName}": ${(error as Error).message}`),
    };
  }
}

/** The model's broken arguments, quoted back within the result budget (they can be megabytes). */
function echoed(rawJson: string, runtime: AgentRuntime): string {
  const maxChars = Math.max(1_000, runtime.toolResultMaxChars - 200);
  return cutText(rawJson, maxChars, ({ cutChars }) => `[... ${cutChars} characters of the arguments cut ...]`)
    .text;
}

/** Asks the agent's permission checker about validated arguments (`args`). */
export const checkPermissionActor = fromPromise<Preparation, PrepareToolCallInput & { rawArgs: unknown }>(
  async ({ input, self }) => {
    const runtime = runtimeOf(self);
    const tool = runtime.tools.get(input.toolName);
    const { permissions, journal } = runtime;
    if (!tool || (!permissions && (tool.needsApproval === undefined || tool.needsApproval === false))) {
      return { outcome: "run", args: input.args };
    }
    const toolCall = {
      type: "toolCall" as const,
      id: input.toolCallId,
      name: input.toolName,
      arguments: (input.rawArgs ?? {}) as Record<string, unknown>,
    };
    // The checker's deny wins; then an ask from either the checker or the tool.
    const check = async (): Promise<PermissionDecision> => {
      const decision = permissions
        ? await permissions.check({ toolCall, tool, args: input.args })
        : undefined;
      if (decision?.behavior === "deny") return decision;
      const { needsApproval } = tool;
      let asks = needsApproval === true;
      if (typeof needsApproval === "function") {
        try {
          asks = await needsApproval(input.args, { toolCallId: input.toolCallId, toolName: input.toolName });
        } catch (error) {
          return {
            behavior: "deny",
            reason: `needsApproval of tool ${tool.name} failed: ${errorText(error)}`,
          };
        }
      }
      return asks ? { behavior: "ask" } : (decision ?? { behavior: "allow" });
    };
    const decision = journal ? await journal.permission(input.toolCallId, check) : await check();
    if (decision.behavior === "deny") return { outcome: "settled", result: errorResult(decision.reason) };
    return { outcome: decision.behavior === "ask" ? "ask" : "run", args: input.args };
  },
);

// Where the agent and durable/ found it before the rules moved to tools/call-answers.ts.
export { checkEditedArgs } from "../tools/call-answers.js";

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Providers pass arguments they could not parse as `{ __invalid_json: raw }`; the raw text, if so. */
function unparsedArguments(args: unknown): string | undefined {
  if (!args || typeof args !== "object" || !(INVALID_JSON_ARGUMENTS_KEY in args)) return undefined;
  return String((args as Record<string, unknown>)[INVALID_JSON_ARGUMENTS_KEY]);
}
