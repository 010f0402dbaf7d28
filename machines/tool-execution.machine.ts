import { assign, enqueueActions, sendParent, setup, stopChild } from "xstate";
import { type ToolCallOutput, toolCallMachine } from "../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../core/messages.js";
import type { ToolExecutionStrategy } from "../core/options.js";
import { nowFor, runtimeOf } from "../core/runtime.js";
import {
  abortedText,
  groupCalls,
  type PlannedCall,
  SKIPPED_TEXT,
  startsEagerly,
  unranResult,
} from "./tool-execution.logic.js";

export interface ToolExecutionInput {
  strategy: ToolExecutionStrategy;
  steeringQueued: boolean;
  /** The calls to run; omitted when calls arrive one by one (`CALL_READY`) before the `PLAN`. */
  calls?: PlannedCall[];
}

export interface ToolExecutionContext {
  strategy: ToolExecutionStrategy;
  steeringQueued: boolean;
  planned: boolean;
  calls: PlannedCall[];
  groups: string[][];
  groupIndex: number;
  /** Ids of calls whose actor was spawned. */
  started: string[];
  /** Calls that arrived eagerly, before the plan. */
  ready: PlannedCall[];
  results: Record<string, ToolResultMessage>;
}

export type ToolExecutionEvent =
  | { type: "CALL_READY"; call: PlannedCall }
  | { type: "PLAN"; calls: PlannedCall[] }
  | { type: "STEERING_QUEUED" }
  | { type: "ABORT" }
  /** A call actor reached its final state (its id is the tool call id). */
  | { type: `xstate.done.actor.${string}`; output: ToolCallOutput };

/** Results of one finished group, in the order the model asked for them. */
export interface GroupDoneEvent {
  type: "GROUP_DONE";
  results: ToolResultMessage[];
}

const currentGroup = (context: ToolExecutionContext) => context.groups[context.groupIndex] ?? [];

/**
 * Runs the tool calls of one assistant message with a strategy (parallel, sequential, batched,
 * auto): one `toolCall` child per call, id = the tool call id, stopped as soon as its result is
 * recorded. Between groups it checks whether the user queued a message and skips the rest if so.
 */
export const toolExecutionMachine = setup({
  types: {
    input: {} as ToolExecutionInput,
    context: {} as ToolExecutionContext,
    events: {} as ToolExecutionEvent,
  },
  actors: { toolCall: toolCallMachine },
  guards: {
    isPlanned: ({ context }) => context.planned,
    startsEagerly: ({ context }, call: PlannedCall) =>
      startsEagerly(context.strategy, context.ready.length, call, context.ready),
    groupComplete: ({ context }) => currentGroup(context).every((id) => context.results[id]),
    allGroupsDone: ({ context }) => context.groupIndex >= context.groups.length - 1,
    steeringQueued: ({ context }) => context.steeringQueued,
  },
  actions: {
    noteReady: assign({ ready: ({ context }, call: PlannedCall) => [...context.ready, call] }),
    spawnCall: enqueueActions(({ enqueue }, call: PlannedCall) => {
      enqueue.spawnChild("toolCall", {
        id: call.id,
        input: { toolCallId: call.id, toolName: call.name, args: call.args },
      });
      enqueue.assign({ started: ({ context }) => [...context.started, call.id] });
    }),
    adoptPlan: enqueueActions(({ context, enqueue, self }, calls: PlannedCall[]) => {
      // Calls started eagerly from a stream that was then retried are not in the final message.
      const planned = new Set(calls.map((c) => c.id));
      for (const call of context.ready) {
        if (planned.has(call.id) || !context.started.includes(call.id) || context.results[call.id]) continue;
        enqueue(stopChild(call.id));
        endUnfinished(enqueue, call, abortedText(call.name), nowFor(self));
      }
      enqueue.assign({ planned: true, calls, groups: groupCalls(calls, context.strategy), groupIndex: 0 });
    }),
    spawnCurrentGroup: enqueueActions(({ context, enqueue }) => {
      const byId = new Map(context.calls.map((c) => [c.id, c]));
      const toStart = currentGroup(context).filter((id) => !context.started.includes(id));
      for (const id of toStart) {
        const call = byId.get(id)!;
        enqueue.spawnChild("toolCall", {
          id,
          input: { toolCallId: id, toolName: call.name, args: call.args },
        });
      }
      if (toStart.length) enqueue.assign({ started: [...context.started, ...toStart] });
    }),
    recordResult: enqueueActions(({ enqueue }, done: ToolCallOutput) => {
      enqueue.assign({ results: ({ context }) => ({ ...context.results, [done.toolCallId]: done.message }) });
      enqueue(stopChild(done.toolCallId));
    }),
    reportGroup: sendParent(({ context }): GroupDoneEvent => ({
      type: "GROUP_DONE",
      results: currentGroup(context).map((id) => context.results[id]!),
    })),
    nextGroup: assign({ groupIndex: ({ context }) => context.groupIndex + 1 }),
    noteSteering: assign({ steeringQueued: true }),
    skipRemaining: enqueueActions(({ context, enqueue, self }) => {
      const remaining = context.calls.filter((c) => !context.results[c.id]);
      const now = nowFor(self);
      const results = remaining.map((call) => endUnstarted(enqueue, call, SKIPPED_TEXT, now));
      enqueue.assign({
        results: { ...context.results, ...Object.fromEntries(results.map((r) => [r.toolCallId, r])) },
      });
      enqueue.sendParent({ type: "GROUP_DONE", results } satisfies GroupDoneEvent);
    }),
    abortOpenCalls: enqueueActions(({ context, enqueue, self }) => {
      // Everything not yet reported to the parent: finished results of the current group as they
      // are, open calls answered as aborted, in the order the model asked for them.
      const reported = new Set(context.groups.slice(0, context.groupIndex).flat());
      const calls = (context.planned ? context.calls : context.ready).filter((c) => !reported.has(c.id));
      const results: ToolResultMessage[] = [];
      const now = nowFor(self);
      for (const call of calls) {
        const finished = context.results[call.id];
        if (finished) {
          results.push(finished);
        } else if (context.started.includes(call.id)) {
          enqueue(stopChild(call.id));
          results.push(endUnfinished(enqueue, call, abortedText(call.name), now));
        } else {
          results.push(endUnstarted(enqueue, call, abortedText(call.name), now));
        }
      }
      enqueue.assign({
        results: { ...context.results, ...Object.fromEntries(results.map((r) => [r.toolCallId, r])) },
      });
      if (results.length) enqueue.sendParent({ type: "GROUP_DONE", results } satisfies GroupDoneEvent);
    }),
  },
}).createMachine({
  id: "toolExecution",
  context: ({ input }) => ({
    strategy: input.strategy,
    steeringQueued: input.steeringQueued,
    planned: input.calls !== undefined,
    calls: input.calls ?? [],
    groups: input.calls ? groupCalls(input.calls, input.strategy) : [],
    groupIndex: 0,
    started: [],
    ready: [],
    results: {},
  }),
  initial: "collecting",
  on: {
    STEERING_QUEUED: { actions: "noteSteering" },
  },
  states: {
    collecting: {
      always: { guard: "isPlanned", target: "running" },
      on: {
        CALL_READY: [
          {
            guard: { type: "startsEagerly", params: ({ event }) => event.call },
            actions: [
              { type: "spawnCall", params: ({ event }) => event.call },
              { type: "noteReady", params: ({ event }) => event.call },
            ],
          },
          { actions: { type: "noteReady", params: ({ event }) => event.call } },
        ],
        PLAN: { target: "running", actions: { type: "adoptPlan", params: ({ event }) => event.calls } },
        "xstate.done.actor.*": { actions: { type: "recordResult", params: ({ event }) => event.output } },
        ABORT: { target: "done", actions: "abortOpenCalls" },
      },
    },
    running: {
      entry: "spawnCurrentGroup",
      always: { guard: "groupComplete", target: "groupDone" },
      on: {
        "xstate.done.actor.*": { actions: { type: "recordResult", params: ({ event }) => event.output } },
        ABORT: { target: "done", actions: "abortOpenCalls" },
      },
    },
    groupDone: {
      entry: "reportGroup",
      always: [
        { guard: "allGroupsDone", target: "done" },
        { guard: "steeringQueued", target: "skipping" },
        { target: "running", actions: "nextGroup" },
      ],
    },
    skipping: {
      entry: "skipRemaining",
      always: "done",
    },
    done: { type: "final" },
  },
});

type Enqueue = (action: (args: { self: Parameters<typeof runtimeOf>[0] }) => void) => void;

/** An error result for a call that ran no further, and the `tool_execution_end` that announces it. */
function endUnfinished(
  enqueue: Enqueue,
  call: PlannedCall,
  text: string,
  timestamp: number,
): ToolResultMessage {
  const message = unranResult(call, text, timestamp);
  enqueue(({ self }) =>
    runtimeOf(self).publish({
      type: "tool_execution_end",
      toolCallId: call.id,
      toolName: call.name,
      result: { content: message.content, isError: true },
      isError: true,
    }),
  );
  return message;
}

/** Start and end events plus an error result for a call that never ran (skipped or aborted). */
function endUnstarted(
  enqueue: Enqueue,
  call: PlannedCall,
  text: string,
  timestamp: number,
): ToolResultMessage {
  enqueue(({ self }) =>
    runtimeOf(self).publish({
      type: "tool_execution_start",
      toolCallId: call.id,
      toolName: call.name,
      args: call.args,
    }),
  );
  return endUnfinished(enqueue, call, text, timestamp);
}
