import { assign, enqueueActions, setup, stopChild } from "xstate";
import { type ToolCallOutput, toolCallMachine } from "../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../core/messages.js";
import { messageIdsFor, nowFor } from "../core/runtime.js";
import { abortedText, doneActorId, type PlannedCall } from "../rules/tool-execution.logic.js";
import { answerUnran } from "./unran-calls.js";

export interface ToolShardInput {
  /** The calls the shard starts at once. */
  calls: PlannedCall[];
  /** A sealed shard finishes when its calls are answered; an open one waits for `SEAL` (eager calls may still join). */
  sealed: boolean;
}

export interface ToolShardContext {
  /** Its calls, in the order they joined. */
  calls: PlannedCall[];
  /** Results by call id, filled in place as calls finish (a copy per call would make a shard quadratic). */
  results: Record<string, ToolResultMessage>;
  /** Calls still running. */
  open: number;
  sealed: boolean;
}

export type ToolShardEvent =
  | { type: "ADD"; call: PlannedCall }
  | { type: "SEAL" }
  | { type: "ABORT" }
  /** Stops one call (an eager call the final message no longer has) and answers it as aborted. */
  | { type: "DROP"; toolCallId: string }
  | { type: `xstate.done.actor.${string}`; output: ToolCallOutput };

/**
 * A shard of the tool execution: the parent of up to `SHARD_SIZE` tool-call actors. XState copies a
 * parent's `children` on every spawn and stop, so thousands of calls under one parent cost O(n²);
 * spread over shards, each copy stays small and the fan-out is linear. The shard finishes, once
 * sealed, when every call is answered; its output is their results, in the order the calls joined.
 */
export const toolShardMachine = setup({
  types: {
    input: {} as ToolShardInput,
    context: {} as ToolShardContext,
    events: {} as ToolShardEvent,
    output: {} as ToolResultMessage[],
  },
  actors: { toolCall: toolCallMachine },
  guards: {
    allAnswered: ({ context }) => context.sealed && context.open === 0,
  },
  actions: {
    spawnInitialCalls: enqueueActions(({ context, enqueue }) => {
      for (const call of context.calls)
        enqueue.spawnChild("toolCall", { id: call.id, input: callInput(call) });
    }),
    addCall: enqueueActions(({ context, enqueue }, call: PlannedCall) => {
      enqueue.spawnChild("toolCall", { id: call.id, input: callInput(call) });
      context.calls.push(call);
      enqueue.assign({ open: context.open + 1 });
    }),
    seal: assign({ sealed: true }),
    recordResult: enqueueActions(({ context, enqueue, event }, done: ToolCallOutput) => {
      context.results[done.toolCallId] = done.message;
      enqueue.assign({ open: context.open - 1 });
      enqueue(stopChild(doneActorId(event)));
    }),
    dropCall: enqueueActions(({ context, enqueue, self }, toolCallId: string) => {
      const call = context.calls.find((c) => c.id === toolCallId);
      if (!call || context.results[toolCallId]) return;
      enqueue(stopChild(toolCallId));
      context.results[toolCallId] = answerUnran(enqueue, call, abortedText(call.name), {
        started: true,
        timestamp: nowFor(self),
        ids: messageIdsFor(self),
      });
      enqueue.assign({ open: context.open - 1 });
    }),
    abortOpenCalls: enqueueActions(({ context, enqueue, self }) => {
      for (const call of context.calls) {
        if (context.results[call.id]) continue;
        enqueue(stopChild(call.id));
        context.results[call.id] = answerUnran(enqueue, call, abortedText(call.name), {
          started: true,
          timestamp: nowFor(self),
          ids: messageIdsFor(self),
        });
      }
      enqueue.assign({ open: 0, sealed: true });
    }),
  },
}).createMachine({
  id: "toolShard",
  context: ({ input }) => ({
    calls: [...input.calls],
    results: {},
    open: input.calls.length,
    sealed: input.sealed,
  }),
  output: ({ context }) => context.calls.map((call) => context.results[call.id]!),
  initial: "running",
  states: {
    running: {
      entry: "spawnInitialCalls",
      always: { guard: "allAnswered", target: "done" },
      on: {
        ADD: { actions: { type: "addCall", params: ({ event }) => event.call } },
        SEAL: { actions: "seal" },
        DROP: { actions: { type: "dropCall", params: ({ event }) => event.toolCallId } },
        "xstate.done.actor.*": { actions: { type: "recordResult", params: ({ event }) => event.output } },
        ABORT: { target: "done", actions: "abortOpenCalls" },
      },
    },
    done: { type: "final" },
  },
});

function callInput(call: PlannedCall) {
  return { toolCallId: call.id, toolName: call.name, args: call.args };
}
