import type { AnyActorRef } from "xstate";
import type { ToolCall } from "../core/messages.js";
import { type AgentRuntime, runtimeOf } from "../core/runtime.js";
import { errorResult, normalizeToolResult, type ToolContext, type ToolResult } from "../tools/define-tool.js";
import { fitToolResult } from "../tools/result-budget.js";
import { createLazyAbort, type LazyAbort } from "./abort-hub.js";
import { abortReason, timeoutReason } from "./abort-reason.js";

export interface ExecuteToolInput {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

export type ExecuteToolEvent = { type: "TOOL_EXECUTED"; result: ToolResult };

/** Calls whose tool is running, so a call is never run twice at once. */
const running = new WeakSet<AnyActorRef>();

/**
 * Runs one approved call for its tool-call actor (`self`), and sends the actor `TOOL_EXECUTED`
 * with the result: `beforeToolCall` (may block or replace the arguments) → `execute` with an
 * AbortSignal, a timeout, `onUpdate` and `onProgress` → `afterToolCall` → the result budget (a
 * result longer than the call's `maxResultChars` is cut to head and tail, its full output spilled
 * or kept in `details`). A thrown error becomes an error result with its message; nothing the tool
 * does escapes. With a journal (a durable agent) the whole call is one journaled step named by the
 * tool call id.
 *
 * The tool runs in the call's own actor, not in a child actor of its own (one actor fewer per call
 * saves about a quarter of a call's cost): stopping the call's actor aborts the tool, because a
 * stopped actor completes its observers.
 *
 * @example
 * ```ts
 * executing: { entry: ({ context, self }) => executeToolCall(self, context), on: { TOOL_EXECUTED: "done" } }
 * ```
 */
export function executeToolCall(self: AnyActorRef, input: ExecuteToolInput): void {
  if (running.has(self)) return;
  running.add(self);
  const runtime = runtimeOf(self);
  const execution = createExecution(runtime, self, input);
  let answered = false;
  const stop = () => {
    // A finished tool is never aborted: its abort would only keep it alive.
    if (answered) return;
    answered = true;
    execution.stop();
  };
  const watch = self.subscribe({ complete: stop, error: stop });
  const answer = (result: ToolResult) => {
    if (answered) return;
    answered = true;
    watch.unsubscribe();
    running.delete(self);
    self.send({ type: "TOOL_EXECUTED", result });
  };
  const result = runtime.journal
    ? runtime.journal.toolCall(input.toolCallId, execution.run)
    : execution.run();
  result.then(answer, (error: unknown) => answer(errorResult(errorText(error))));
}

interface ExecutionState {
  /** The call's result is decided (finished, timed out or stopped): the tool's later output is ignored. */
  settled: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/** One execution of a call: `run` resolves with its result (never rejects); `stop` aborts it. */
function createExecution(runtime: AgentRuntime, self: AnyActorRef, input: ExecuteToolInput) {
  const controller = createLazyAbort();
  const state: ExecutionState = { settled: false, timer: undefined };
  let resolveResult: (result: ToolResult) => void = () => {};
  const settle = (result: ToolResult) => {
    if (state.settled) return;
    state.settled = true;
    clearTimeout(state.timer);
    resolveResult(result);
  };
  const toolCall: ToolCall = {
    type: "toolCall",
    id: input.toolCallId,
    name: input.toolName,
    arguments: asRecord(input.args),
  };
  return {
    run(): Promise<ToolResult> {
      const result = new Promise<ToolResult>((resolve) => (resolveResult = resolve));
      runTool(runtime, self, input, toolCall, controller, state, settle).catch((error: unknown) =>
        settle(errorResult(errorText(error))),
      );
      return result;
    },
    stop() {
      settle(errorResult(`Tool ${input.toolName} aborted`));
      controller.abort(abortReason);
    },
  };
}

async function runTool(
  runtime: AgentRuntime,
  self: AnyActorRef,
  input: ExecuteToolInput,
  toolCall: ToolCall,
  controller: LazyAbort,
  state: ExecutionState,
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
    if (state.settled) return;
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
    idempotencyKey: input.toolCallId,
    // Made when the tool reads it: a tool that never looks at its signal costs none.
    get signal() {
      return controller.signal;
    },
    maxResultChars,
    onUpdate: updates.push,
    onProgress: updates.progress,
    actor: self,
  };

  let result: ToolResult;
  try {
    result = normalizeToolResult(await tool.execute(args, ctx));
  } catch (error) {
    if (state.settled) return;
    result = errorResult(errorText(error));
  }
  if (state.settled) return;
  await updates.drained();
  if (state.settled) return;

  if (hooks.afterToolCall) {
    const isError = result.isError ?? false;
    const override = await hooks.afterToolCall({ toolCall, args, result, isError });
    if (state.settled) return;
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
  if (state.settled) return;
  finish(result);
}

/**
 * Publishes a call's partial results in order, through `beforeToolUpdate` / `afterToolUpdate`.
 * Without hooks an update is published at once; with them, updates queue so that every update of
 * a call precedes its end.
 */
function createUpdateChannel(runtime: AgentRuntime, toolCall: ToolCall, state: { settled: boolean }) {
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
      if (state.settled) return;
      const note = () => {
        if (!state.settled) {
          runtime.publish({ type: "tool_progress", toolCallId: toolCall.id, toolName: toolCall.name, text });
        }
      };
      if (!hooked) return note();
      chain = chain.then(note);
    },
    push(partial: ToolResult | string) {
      if (state.settled) return;
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
          if (state.settled) return;
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

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
