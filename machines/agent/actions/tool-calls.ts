import { type AnyActorRef, enqueueActions, sendTo, stopChild } from "xstate";
import type { AgentEvent } from "../../../core/events.js";
import { addUsage, emptyUsage, type ToolResultMessage, type Usage } from "../../../core/messages.js";
import { withMessageId } from "../../../core/message-id.js";
import { messageIdsFor, nowFor } from "../../../core/runtime.js";
import {
  callsOf,
  ensureUniqueToolCallIds,
  isTruncated,
  type RunState,
  unranCallText,
} from "../../../rules/agent.logic.js";
import {
  loopNotice,
  loopStopText,
  recordToolResults,
  resolveLoopDetection,
} from "../../../rules/loop-detection.logic.js";
import {
  abortedText,
  doneActorId,
  type PlannedCall,
  planCalls,
} from "../../../rules/tool-execution.logic.js";
import { unranResult } from "../../unran-calls.js";
import { appendToTranscript } from "../../../rules/transcript.js";
import type { AgentContext, AgentMachineEvent, StreamDone, StreamReady } from "../context.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions of a turn's tool calls: started eagerly as the stream finishes each, planned when
 * the message is complete (one call as the agent's own child, more through the execution machine
 * and its strategy), their results recorded (and counted by loop detection), and every call
 * answered exactly once when something fails or aborts.
 *
 * @example
 * ```ts
 * setup({ actions: { ...toolCallActions } }); // executing's entry: `planExecution`
 * ```
 */
export const toolCallActions = defineAgentActions({
  startEagerCall: enqueueActions(({ context, enqueue }, toolCall: StreamReady["toolCall"]) => {
    const [call] = planCalls([toolCall], (name) => context.concurrencySafeTools.includes(name));
    if (!context.run.executionSpawned) {
      enqueue.spawnChild("toolExecution", {
        id: "toolExecution",
        input: { strategy: context.strategy, steeringQueued: context.steeringQueue.length > 0 },
      });
      enqueue.assign({ run: { ...context.run, executionSpawned: true } });
    }
    enqueue.sendTo("toolExecution", { type: "CALL_READY", call: call! });
  }),
  planExecution: enqueueActions(({ context, enqueue }) => {
    const calls = planCalls(callsOf(context.run.turnMessage), (name) =>
      context.concurrencySafeTools.includes(name),
    );
    if (context.run.executionSpawned) {
      // A failed or aborted message's calls that started eagerly are answered, no more run; so are
      // a truncated answer's. One event: the plan alone may finish the execution, and an ABORT
      // after it would find it stopped.
      enqueue.sendTo("toolExecution", {
        type: "PLAN",
        calls,
        abort: context.run.endReason !== undefined,
        truncated: isTruncated(context.run.turnMessage),
      });
    } else if (calls.length === 1) {
      // One call needs no strategy: its actor is the agent's own child.
      const [call] = calls as [PlannedCall];
      enqueue.spawnChild("toolCall", {
        id: call.id,
        input: { toolCallId: call.id, toolName: call.name, args: call.args },
      });
    } else {
      enqueue.spawnChild("toolExecution", {
        id: "toolExecution",
        input: { strategy: context.strategy, steeringQueued: context.steeringQueue.length > 0, calls },
      });
      enqueue.assign({ run: { ...context.run, executionSpawned: true } });
    }
  }),
  appendToolResults: enqueueActions(({ context, enqueue, self }, results: ToolResultMessage[]) =>
    appendResults(context, enqueue, results, self),
  ),
  answerMissingResults: enqueueActions(({ context, enqueue, self }, error: unknown) => {
    const answered = new Set(context.run.turnResults.map((r) => r.toolCallId));
    const text = `Tool execution failed: ${error instanceof Error ? error.message : String(error)}`;
    const now = nowFor(self);
    const missing = callsOf(context.run.turnMessage)
      .filter((c) => !answered.has(c.id))
      .map((c) => unranResult(c, text, now, messageIdsFor(self)));
    for (const message of missing) {
      const { toolCallId, toolName, content } = message;
      enqueue.emit({
        type: "tool_execution_end",
        toolCallId,
        toolName,
        result: { content, isError: true },
        isError: true,
      });
    }
    appendResults(context, enqueue, missing, self);
  }),
  stopCall: stopChild(({ event }) => doneActorId(event)),
  abortCall: enqueueActions(({ context, enqueue, self }) => {
    // The one call of the turn runs as the agent's child: stopped, and answered as aborted.
    const [call] = callsOf(context.run.turnMessage);
    if (!call) return;
    enqueue(stopChild(call.id));
    const message = unranResult(call, abortedText(call.name), nowFor(self), messageIdsFor(self));
    const { content } = message;
    enqueue.emit({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result: { content, isError: true },
      isError: true,
    });
    appendResults(context, enqueue, [message], self);
  }),
  answerUnranCalls: enqueueActions(({ context, enqueue, self }, done: StreamDone) => {
    const now = nowFor(self);
    const textFor = unranCallText(context.run, done.message);
    const calls = callsOf(ensureUniqueToolCallIds(done.message));
    const ids = messageIdsFor(self);
    const results = calls.map((call) => unranResult(call, textFor(call.name), now, ids));
    for (const [index, { toolCallId, toolName, content }] of results.entries()) {
      enqueue.emit({ type: "tool_execution_start", toolCallId, toolName, args: calls[index]!.arguments });
      enqueue.emit({
        type: "tool_execution_end",
        toolCallId,
        toolName,
        result: { content, isError: true },
        isError: true,
      });
    }
    appendResults(context, enqueue, results, self);
  }),
  // Stopped where executing ends with it, not on exit: a stop clones the snapshot even when
  // nothing runs (a turn with one call), and most turns have one.
  stopExecution: stopChild("toolExecution"),
  stopFailedChild: stopChild(({ event }) => event.type.slice("xstate.error.actor.".length)),
  forwardAbortToExecution: sendTo("toolExecution", { type: "ABORT" }),
});

/**
 * Tool results enter the transcript, the run and the turn, each announced with message_start/end;
 * then loop detection counts them (a warning queues a notice for the next turn; a repeat after
 * a warning marks the run to end with reason "loop" before another turn starts).
 */
function appendResults(
  context: AgentContext,
  enqueue: {
    emit(event: AgentEvent): void;
    assign(values: Partial<AgentContext>): void;
  },
  given: ToolResultMessage[],
  self: AnyActorRef,
): void {
  // Results carry the ids their call actors drew; one sent to the machine by hand gets one here.
  const results = given.some((message) => message.id === undefined)
    ? given.map((message) => withMessageId(message, messageIdsFor(self)))
    : given;
  for (const message of results) {
    enqueue.emit({ type: "message_start", message });
    enqueue.emit({ type: "message_end", message });
  }
  const turnResults = [...context.run.turnResults, ...results];
  const thresholds = resolveLoopDetection(context.loopDetection);
  const verdict =
    thresholds && results.length > 0
      ? recordToolResults(
          context.run.loop,
          thresholds,
          callsOf(context.run.turnMessage),
          results,
          context.run.turn,
        )
      : undefined;
  // One copy of the run with every change (it has some twenty fields, copied on each update).
  let run: RunState = verdict
    ? { ...context.run, turnResults, loop: verdict.state }
    : { ...context.run, turnResults };
  let pending = context.pending;
  for (const hit of verdict?.warnings ?? []) {
    enqueue.emit({ type: "loop_detected", action: "warned", ...hit });
    pending = [...pending, loopNotice(hit, nowFor(self), messageIdsFor(self).next())];
  }
  const subAgentUsd = context.costModel ? subAgentCost(results) : 0;
  if (subAgentUsd > 0) run = { ...run, subAgentUsd: (run.subAgentUsd ?? 0) + subAgentUsd };
  const below = subAgentUsage(results);
  if (below) run = { ...run, subAgentUsage: addUsage(run.subAgentUsage ?? emptyUsage(), below) };
  if (verdict?.stop && !run.endReason) {
    enqueue.emit({ type: "loop_detected", action: "stopped", ...verdict.stop });
    run = { ...run, endReason: "loop", limitText: loopStopText(verdict.stop) };
  }
  enqueue.assign({
    messages: appendToTranscript(context.messages, results),
    run,
    pending,
    ...(subAgentUsd > 0 && { spentUsd: (context.spentUsd ?? 0) + subAgentUsd }),
  });
}

/** What the sub-agents among the results spent (a sub-agent tool's details carry its run's usage). */
function subAgentCost(results: readonly ToolResultMessage[]): number {
  let usd = 0;
  for (const result of results) {
    const details = result.details as
      { childAgentId?: unknown; usage?: Usage; costUsd?: unknown } | undefined;
    if (!details || typeof details.childAgentId !== "string") continue;
    // The child's whole tree (its own sub-agents' spending too), when it says so.
    usd += typeof details.costUsd === "number" ? details.costUsd : (details.usage?.cost?.total ?? 0);
  }
  return usd;
}

/**
 * What the sub-agents among the results used, their whole trees (`details.treeUsage`; a result from
 * before it existed: its `usage`); `undefined` when no result is a sub-agent's.
 */
function subAgentUsage(results: readonly ToolResultMessage[]): Usage | undefined {
  let sum: Usage | undefined;
  for (const result of results) {
    const details = result.details as
      { childAgentId?: unknown; usage?: Usage; treeUsage?: Usage } | undefined;
    if (!details || typeof details.childAgentId !== "string") continue;
    const used = details.treeUsage ?? details.usage;
    if (used) sum = addUsage(sum ?? emptyUsage(), used);
  }
  return sum;
}

/**
 * The results in the tool execution machine's done event (those it had not reported yet), as
 * `appendToolResults` takes them.
 *
 * @example
 * ```ts
 * { type: "appendToolResults", params: ({ event }) => executionOutput(event) }
 * ```
 */
export function executionOutput(event: AgentMachineEvent): ToolResultMessage[] {
  return "output" in event && Array.isArray(event.output) ? event.output : [];
}

/**
 * The result in the done event of a turn's one call actor, as `appendToolResults` takes it.
 *
 * @example
 * ```ts
 * { type: "appendToolResults", params: ({ event }) => callOutput(event) }
 * ```
 */
export function callOutput(event: AgentMachineEvent): ToolResultMessage[] {
  const output = "output" in event ? event.output : undefined;
  return output && !Array.isArray(output) ? [output.message] : [];
}
