import { fromPromise } from "xstate";
import { z } from "zod";
import { runtimeOf } from "../core/runtime.js";
import { INVALID_JSON_ARGUMENTS_KEY } from "../providers/internal/tool-arguments.js";
import { errorResult, type ToolResult } from "../tools/define-tool.js";

export interface PrepareToolCallInput {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** Where a call goes after preparation. */
export type Preparation =
  | { outcome: "settled"; result: ToolResult }
  | { outcome: "ask"; args: unknown }
  | { outcome: "run"; args: unknown };

/**
 * Looks the tool up, validates the arguments with its zod schema, and asks the permission checker.
 * Every refusal is a result the model can read, never an exception.
 */
export const prepareToolCallActor = fromPromise<Preparation, PrepareToolCallInput>(
  async ({ input, system }) => {
    const runtime = runtimeOf(system);
    const tool = runtime.tools.get(input.toolName);
    if (!tool) return { outcome: "settled", result: errorResult(`Tool ${input.toolName} not found`) };

    const rawJson = unparsedArguments(input.args);
    if (rawJson !== undefined) {
      return {
        outcome: "settled",
        result: errorResult(
          `Validation failed for tool "${input.toolName}": the arguments are not valid JSON: ${rawJson}`,
        ),
      };
    }
    const parsed = tool.parameters.safeParse(input.args);
    if (!parsed.success) {
      return {
        outcome: "settled",
        result: errorResult(
          `Validation failed for tool "${input.toolName}": ${z.prettifyError(parsed.error)}`,
        ),
      };
    }
    if (!runtime.permissions) return { outcome: "run", args: parsed.data };

    const toolCall = {
      type: "toolCall" as const,
      id: input.toolCallId,
      name: input.toolName,
      arguments: (input.args ?? {}) as Record<string, unknown>,
    };
    const decision = await runtime.permissions.check({ toolCall, tool, args: parsed.data });
    if (decision.behavior === "deny") return { outcome: "settled", result: errorResult(decision.reason) };
    return { outcome: decision.behavior === "ask" ? "ask" : "run", args: parsed.data };
  },
);

/** Providers pass arguments they could not parse as `{ __invalid_json: raw }`; the raw text, if so. */
function unparsedArguments(args: unknown): string | undefined {
  if (!args || typeof args !== "object" || !(INVALID_JSON_ARGUMENTS_KEY in args)) return undefined;
  return String((args as Record<string, unknown>)[INVALID_JSON_ARGUMENTS_KEY]);
}
