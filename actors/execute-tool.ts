import type { AnyActorRef } from "xstate";
import type { ToolCall } from "../core/messages.js";
import { type AgentRuntime, runtimeOf } from "../core/runtime.js";
import {
  errorResult,
  normalizeToolResult,
  thrownErrorResult,
  type ToolContext,
  type ToolResult,
} from "../tools/define-tool.js";
import { fitToolResult } from "../tools/result-budget.js";
import { unstorableReason } from "../core/storable.js";
import { journalsOwnSteps, markOwnStepsCall } from "../core/journaled-child.js";
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
  new ToolExecution(runtimeOf(self), self, input).start();
}

/**
 * One execution of a call: it runs the tool, answers the call's actor once, and aborts the tool
 * when that actor stops first. A class rather than closures made per call: its methods are shared
 * by every call. It observes the actor (`complete` / `error`), so a stopped actor aborts it.
 */
class ToolExecution implements ExecutionState {
  settled = false;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  private answered = false;
  private watch: { unsubscribe(): void } | undefined = undefined;
  private resolveResult: ((result: ToolResult) => void) | undefined = undefined;
  private readonly controller: LazyAbort = createLazyAbort();
  private readonly toolCall: ToolCall;

  constructor(
    private readonly runtime: AgentRuntime,
    private readonly self: AnyActorRef,
    private readonly input: ExecuteToolInput,
  ) {
    this.toolCall = {
      type: "toolCall",
      id: input.toolCallId,
      name: input.toolName,
      arguments: asRecord(input.args),
    };
  }

  start(): void {
    this.watch = this.self.subscribe(this);
    const { journal } = this.runtime;
    // A sub-agent's call is its child's steps, each journaled under the call's path: not one step.
    const own = journal !== undefined && ownSteps(this.runtime, this.input.toolName);
    if (own) markOwnStepsCall(this.self);
    const result = journal && !own ? journal.toolCall(this.input.toolCallId, () => this.run()) : this.run();
    result.then(
      (value) => this.answer(value),
      (error: unknown) => this.answer(thrownErrorResult(error)),
    );
  }

  /** The call's actor stopped (observer): a tool still running is aborted. */
  complete(): void {
    this.stop();
  }

  /** The call's actor failed (observer): as when it stops. */
  error(): void {
    this.stop();
  }

  /** The tool's result, once (it never rejects). */
  private run(): Promise<ToolResult> {
    const result = new Promise<ToolResult>((resolve) => (this.resolveResult = resolve));
    runTool(this.runtime, this.self, this.input, this.toolCall, this.controller, this, (value) =>
      this.settle(value),
    ).catch((error: unknown) => this.settle(thrownErrorResult(error)));
    return result;
  }

  /** Decides the result (finished, timed out or stopped): the tool's later output is ignored. */
  private settle(result: ToolResult): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolveResult?.(result);
  }

  private stop(): void {
    // A finished tool is never aborted: its abort would only keep it alive.
    if (this.answered) return;
    this.answered = true;
    this.settle(errorResult(`Tool ${this.input.toolName} aborted`));
    this.controller.abort(abortReason);
  }

  private answer(result: ToolResult): void {
    if (this.answered) return;
    this.answered = true;
    this.watch?.unsubscribe();
    running.delete(this.self);
    this.self.send({ type: "TOOL_EXECUTED", result });
  }
}

interface ExecutionState {
  /** The call's result is decided (finished, timed out or stopped): the tool's later output is ignored. */
  settled: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
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
    const timedOut = () => {
      finish(errorResult(`Tool ${input.toolName} timed out after ${timeoutMs} ms`));
      controller.abort(timeoutReason);
    };
    // A journaled sub-agent's call times out on the journal's timer, so a replay stops its child at
    // the same step (a wall-clock timer would let the replayed child ask for steps the journal lacks).
    if (runtime.journal && ownSteps(runtime, input.toolName))
      void runtime.journal.timer(timeoutMs).then(timedOut, () => {});
    else state.timer = setTimeout(timedOut, timeoutMs);
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
    result = thrownErrorResult(error);
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
  finish(storableResult(result, input.toolName));
}

/**
 * The result, or an error result when JSON cannot hold it (a BigInt, a cycle in `details`): the
 * transcript is stored and sent as JSON, and a durable run journals the result, so such a result
 * would fail there (for ever: each retry makes it again). In process and durable alike, the model
 * reads the error, as for a tool that throws.
 */
function storableResult(result: ToolResult, toolName: string): ToolResult {
  const problem = unstorableReason(result);
  if (problem === undefined) return result;
  return errorResult(`Tool ${toolName} returned a result that cannot be stored as JSON: ${problem}`);
}

/**
 * Publishes a call's partial results in order, through `beforeToolUpdate` / `afterToolUpdate`.
 * Without hooks an update is published at once; with them, updates queue so that every update of
 * a call precedes its end. Made per call, so it names no function of its own (methods, and
 * `publishUpdate` outside): a transpiler that keeps names (tsx, esbuild's keepNames) gives each
 * named arrow a `defineProperty` call, which costs every call while V8 still runs the code cold.
 */
function createUpdateChannel(runtime: AgentRuntime, toolCall: ToolCall, state: { settled: boolean }) {
  const { beforeToolUpdate, afterToolUpdate } = runtime.hooks;
  let chain: Promise<void> = Promise.resolve();
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
      if (!hooked) return publishUpdate(runtime, toolCall, partialResult);
      chain = chain
        .then(async () => {
          let update = partialResult;
          if (beforeToolUpdate) {
            const verdict = await beforeToolUpdate({ toolCall, partialResult });
            if (verdict === false) return;
            if (verdict?.partialResult) update = verdict.partialResult;
          }
          if (state.settled) return;
          publishUpdate(runtime, toolCall, update);
          await afterToolUpdate?.({ toolCall, partialResult: update });
        })
        .catch(() => {
          // A failing update hook drops that update; it never fails the call.
        });
    },
    drained() {
      return chain;
    },
  };
}

/** A call's partial result, published as `tool_execution_update`. */
function publishUpdate(runtime: AgentRuntime, toolCall: ToolCall, partialResult: ToolResult): void {
  runtime.publish({
    type: "tool_execution_update",
    toolCallId: toolCall.id,
    toolName: toolCall.name,
    partialResult,
  });
}

/** Whether a call of `toolName` runs a sub-agent that journals its own steps under this agent's journal. */
function ownSteps(runtime: AgentRuntime, toolName: string): boolean {
  return runtime.journal?.child !== undefined && journalsOwnSteps(runtime.tools.get(toolName));
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
