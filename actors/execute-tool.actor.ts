import { type AnyActorRef, type EventObject, fromCallback } from "xstate";
import type { ToolCall } from "../core/messages.js";
import { type AgentRuntime, runtimeOf } from "../core/runtime.js";
import { errorResult, normalizeToolResult, type ToolContext, type ToolResult } from "../tools/define-tool.js";
import { fitToolResult } from "../tools/result-budget.js";
import { abortReason, timeoutReason } from "./abort-reason.js";

export interface ExecuteToolInput {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

export type ExecuteToolEvent = { type: "TOOL_EXECUTED"; result: ToolResult };

/**
 * Runs one approved call: `beforeToolCall` (may block or replace the arguments) → `execute` with an
 * AbortSignal, a timeout, `onUpdate` and `onProgress` → `afterToolCall` → the result budget (a
 * result longer than the call's `maxResultChars` is cut to head and tail, its full output spilled
 * or kept in `details`). A thrown error becomes an
 * error result with its message; nothing the tool does escapes. Stopping the actor aborts the tool.
 */
export const executeToolActor = fromCallback<EventObject, ExecuteToolInput, ExecuteToolEvent>(
  ({ input, self, sendBack }) => {
    const runtime = runtimeOf(self);
    const controller = new AbortController();
    const state = { finished: false, timer: undefined as ReturnType<typeof setTimeout> | undefined };
    const toolCall: ToolCall = {
      type: "toolCall",
      id: input.toolCallId,
      name: input.toolName,
      arguments: asRecord(input.args),
    };

    const finish = (result: ToolResult) => {
      if (state.finished) return;
      state.finished = true;
      clearTimeout(state.timer);
      sendBack({ type: "TOOL_EXECUTED", result });
    };

    runTool(runtime, self, input, toolCall, controller, state, finish).catch((error: unknown) => {
      finish(errorResult(error instanceof Error ? error.message : String(error)));
    });

    return () => {
      clearTimeout(state.timer);
      // A finished tool is never aborted: its abort would only keep it alive.
      if (!state.finished) {
        state.finished = true;
        controller.abort(abortReason);
      }
    };
  },
);

async function runTool(
  runtime: AgentRuntime,
  self: AnyActorRef,
  input: ExecuteToolInput,
  toolCall: ToolCall,
  controller: AbortController,
  state: { finished: boolean; timer: ReturnType<typeof setTimeout> | undefined },
  finish: (result: ToolResult) => void,
): Promise<void> {
  const { hooks } = runtime;
  const tool = runtime.tools.get(input.toolName);
  if (!tool) return finish(errorResult(`Tool ${input.toolName} not found`));

  let args = input.args;
  if (hooks.beforeToolCall) {
    const verdict = await hooks.beforeToolCall({
      toolCall,
      args,
      context: { systemPrompt: runtime.systemPrompt, messages: runtime.transcript() },
    });
    if (state.finished) return;
    if (verdict?.block) return finish(errorResult(verdict.reason ?? `Tool ${input.toolName} was blocked`));
    if (verdict && "args" in verdict && verdict.args !== undefined) args = verdict.args;
  }

  const timeoutMs = tool.timeoutMs ?? runtime.toolTimeoutMs;
  if (timeoutMs !== undefined && timeoutMs > 0 && Number.isFinite(timeoutMs)) {
    state.timer = setTimeout(() => {
      finish(errorResult(`Tool ${input.toolName} timed out after ${timeoutMs} ms`));
      controller.abort(timeoutReason);
    }, timeoutMs);
  }

  const updates = createUpdateChannel(runtime, toolCall, state);
  const maxResultChars = tool.maxResultChars ?? runtime.toolResultMaxChars;
  const ctx: ToolContext = {
    toolCallId: input.toolCallId,
    signal: controller.signal,
    maxResultChars,
    onUpdate: updates.push,
    onProgress: updates.progress,
    actor: self,
  };

  let result: ToolResult;
  try {
    result = normalizeToolResult(await tool.execute(args, ctx));
  } catch (error) {
    if (state.finished) return;
    result = errorResult(error instanceof Error ? error.message : String(error));
  }
  if (state.finished) return;
  await updates.drained();
  if (state.finished) return;

  if (hooks.afterToolCall) {
    const isError = result.isError ?? false;
    const override = await hooks.afterToolCall({ toolCall, args, result, isError });
    if (state.finished) return;
    if (override) {
      result = {
        ...result,
        ...(override.content !== undefined && { content: override.content }),
        ...(override.details !== undefined && { details: override.details }),
        ...(override.isError !== undefined && { isError: override.isError }),
      };
    }
  }
  // The one place every tool's output meets its budget, before it enters the history.
  result = await fitToolResult(result, {
    maxChars: maxResultChars,
    toolName: input.toolName,
    toolCallId: input.toolCallId,
    spill: runtime.spillWorkspace && { workspace: runtime.spillWorkspace },
  });
  if (state.finished) return;
  finish(result);
}

/**
 * Publishes a call's partial results in order, through `beforeToolUpdate` / `afterToolUpdate`.
 * Without hooks an update is published at once; with them, updates queue so that every update of
 * a call precedes its end.
 */
function createUpdateChannel(runtime: AgentRuntime, toolCall: ToolCall, state: { finished: boolean }) {
  const { beforeToolUpdate, afterToolUpdate } = runtime.hooks;
  let chain: Promise<void> = Promise.resolve();
  const publish = (partialResult: ToolResult) =>
    runtime.publish({
      type: "tool_execution_update",
      toolCallId: toolCall.id,
      toolName: toolCall.name,
      partialResult,
    });

  const hooked = beforeToolUpdate !== undefined || afterToolUpdate !== undefined;
  return {
    /** Progress notes keep their place among the updates the tool published before them. */
    progress(text: string) {
      if (state.finished) return;
      const note = () => {
        if (!state.finished) {
          runtime.publish({ type: "tool_progress", toolCallId: toolCall.id, toolName: toolCall.name, text });
        }
      };
      if (!hooked) return note();
      chain = chain.then(note);
    },
    push(partial: ToolResult | string) {
      if (state.finished) return;
      const partialResult = normalizeToolResult(partial);
      if (!hooked) return publish(partialResult);
      chain = chain
        .then(async () => {
          let update = partialResult;
          if (beforeToolUpdate) {
            const verdict = await beforeToolUpdate({ toolCall, partialResult });
            if (verdict === false) return;
            if (verdict?.partialResult) update = verdict.partialResult;
          }
          if (state.finished) return;
          publish(update);
          await afterToolUpdate?.({ toolCall, partialResult: update });
        })
        .catch(() => {
          // A failing update hook drops that update; it never fails the call.
        });
    },
    drained: () => chain,
  };
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
