import { toolExecutionSetup } from "./tool-execution/execution-setup.js";
import { boundChildEvents } from "./child-event-candidates.js";
import {
  initialExecutionContext,
  notPlanned,
  startedHere,
  unreported,
  unstarted,
} from "./tool-execution/context.js";

export type {
  GroupDoneEvent,
  ToolExecutionContext,
  ToolExecutionEvent,
  ToolExecutionInput,
} from "./tool-execution/context.js";

/**
 * Runs the tool calls of one assistant message with a strategy (parallel, sequential, batched,
 * auto): one `toolCall` actor per call, id = the tool call id, stopped as soon as its result is
 * recorded. Each group but the last is reported as it completes (`GROUP_DONE`); the output is the
 * results nobody was told about yet (the last group's, or the skipped and aborted calls'). Up to
 * `HOSTED_CALLS` call actors are children of this machine; a bigger fan-out goes to shards of
 * `SHARD_SIZE` calls each (`tool-shard.ts`), so its cost stays linear in the
 * number of calls. Between groups it checks whether the user queued a message and skips the rest
 * if so.
 *
 * This file is the statechart alone: its guards and actions are in
 * `tool-execution/execution-setup.ts`, its context and the helpers its transitions call in
 * `tool-execution/context.ts`.
 *
 * @example
 * ```ts
 * const execution = createActor(toolExecutionMachine, { input: { strategy: "parallel", steeringQueued: false, calls } });
 * ```
 */
export const toolExecutionMachine = toolExecutionSetup.createMachine({
  id: "toolExecution",
  context: ({ input }) => initialExecutionContext(input),
  output: ({ context }) => unreported(context),
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
              { type: "startCalls", params: ({ event }) => ({ calls: [event.call], eager: true }) },
              { type: "noteReady", params: ({ event }) => event.call },
            ],
          },
          { actions: { type: "noteReady", params: ({ event }) => event.call } },
        ],
        // Calls started eagerly from a stream that was then retried are not in the final message.
        // A failed, aborted or truncated message goes straight to aborting, so no call that had not
        // started runs.
        PLAN: [
          {
            guard: "planTruncated",
            target: "aborting",
            actions: [
              { type: "stopCalls", params: ({ context, event }) => notPlanned(context.ready, event.calls) },
              { type: "adoptPlan", params: ({ event }) => event.calls },
              { type: "answerCutOff", params: ({ event }) => event.calls },
            ],
          },
          {
            guard: "planAborts",
            target: "aborting",
            actions: [
              { type: "stopCalls", params: ({ context, event }) => notPlanned(context.ready, event.calls) },
              { type: "adoptPlan", params: ({ event }) => event.calls },
            ],
          },
          {
            target: "running",
            actions: [
              { type: "stopCalls", params: ({ context, event }) => notPlanned(context.ready, event.calls) },
              { type: "adoptPlan", params: ({ event }) => event.calls },
            ],
          },
        ],
        "xstate.done.actor.*": { actions: { type: "recordDone", params: ({ event }) => event.output } },
        ABORT: { target: "aborting" },
      },
    },
    running: {
      entry: [
        "countOpenCalls",
        { type: "startCalls", params: ({ context }) => ({ calls: unstarted(context), eager: false }) },
      ],
      always: { guard: "groupComplete", target: "groupDone" },
      on: {
        "xstate.done.actor.*": { actions: { type: "recordDone", params: ({ event }) => event.output } },
        ABORT: { target: "aborting" },
      },
    },
    groupDone: {
      always: [
        { guard: "allGroupsDone", target: "done" },
        { guard: "steeringQueued", target: "skipping", actions: "reportGroup" },
        { target: "running", actions: ["reportGroup", "nextGroup"] },
      ],
    },
    skipping: {
      entry: "skipRemaining",
      always: "done",
    },
    aborting: {
      entry: [{ type: "stopCalls", params: ({ context }) => startedHere(context) }, "abortShards"],
      always: { guard: "nothingRunning", target: "done", actions: "answerUnstarted" },
      on: {
        "xstate.done.actor.*": { actions: { type: "recordDone", params: ({ event }) => event.output } },
      },
    },
    done: { type: "final" },
  },
});

// Each call's done event is typed with its id (see boundChildEvents).
boundChildEvents(toolExecutionMachine);
