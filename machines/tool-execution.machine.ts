import { assign, enqueueActions, setup, stopChild } from "xstate";
import { type ToolCallOutput, toolCallMachine } from "../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../core/messages.js";
import { messageIdsFor, nowFor } from "../core/runtime.js";
import type { ToolExecutionStrategy } from "../core/options.js";
import {
  abortedText,
  answerUnran,
  doneActorId,
  groupCalls,
  type PlannedCall,
  placeCalls,
  SKIPPED_TEXT,
  startsEagerly,
} from "./tool-execution.logic.js";
import { toolShardMachine } from "./tool-shard.machine.js";

export interface ToolExecutionInput {
  strategy: ToolExecutionStrategy;
  steeringQueued: boolean;
  /** The calls to run; omitted when calls arrive one by one (`CALL_READY`) before the `PLAN`. */
  calls?: PlannedCall[];
}

/**
 * The execution's bookkeeping. The records (`hosts`, `results`, `groupOf`) and the lists `ready`
 * and `shards` are filled in place: a copy per finished call would make n calls cost O(n²).
 */
export interface ToolExecutionContext {
  strategy: ToolExecutionStrategy;
  steeringQueued: boolean;
  planned: boolean;
  /** The message's calls, in order (empty until the plan arrives). */
  calls: PlannedCall[];
  groups: string[][];
  groupIndex: number;
  /** Groups already reported to the parent (`GROUP_DONE`); the rest are the machine's output. */
  reported: number;
  /** The group of each planned call. */
  groupOf: Record<string, number>;
  /** Calls of the current group still without a result. */
  open: number;
  /** Where each started call's actor lives: `""` as a child of this machine, else in that shard. */
  hosts: Record<string, string>;
  /** Call actors that are children of this machine right now (at most `SHARD_SIZE`). */
  hosted: number;
  /** Shards still running, by id. */
  shards: string[];
  /** Shards spawned so far (their ids count up). */
  shardCount: number;
  /** Shards holding eager calls: they wait for the plan (`SEAL`); the last takes calls until full. */
  eagerShards: string[];
  eagerShardSize: number;
  /** Calls that arrived eagerly, before the plan, in order. */
  ready: PlannedCall[];
  /** Every call in `ready` is concurrency-safe (strategy `"auto"` starts calls eagerly only then). */
  readyAllSafe: boolean;
  results: Record<string, ToolResultMessage>;
}

export type ToolExecutionEvent =
  | { type: "CALL_READY"; call: PlannedCall }
  /** The message's calls; `abort`: the message failed or was aborted, so none may start. */
  | { type: "PLAN"; calls: PlannedCall[]; abort?: boolean }
  | { type: "STEERING_QUEUED" }
  | { type: "ABORT" }
  /** A call actor (output: its result) or a shard (output: its calls' results) finished. */
  | { type: `xstate.done.actor.${string}`; output: ToolCallOutput | ToolResultMessage[] };

/** Results of one finished group, in the order the model asked for them. */
export interface GroupDoneEvent {
  type: "GROUP_DONE";
  results: ToolResultMessage[];
}

const currentGroup = (context: ToolExecutionContext) => context.groups[context.groupIndex] ?? [];

/**
 * Runs the tool calls of one assistant message with a strategy (parallel, sequential, batched,
 * auto): one `toolCall` actor per call, id = the tool call id, stopped as soon as its result is
 * recorded. Each group but the last is reported as it completes (`GROUP_DONE`); the output is the
 * results nobody was told about yet (the last group's, or the skipped and aborted calls'). Up to `SHARD_SIZE` call actors are children of this machine; a bigger fan-out goes to
 * shards of `SHARD_SIZE` calls each (`tool-shard.machine.ts`), so its cost stays linear in the
 * number of calls. Between groups it checks whether the user queued a message and skips the rest
 * if so.
 */
export const toolExecutionMachine = setup({
  types: {
    input: {} as ToolExecutionInput,
    context: {} as ToolExecutionContext,
    events: {} as ToolExecutionEvent,
  },
  actors: { toolCall: toolCallMachine, toolShard: toolShardMachine },
  guards: {
    isPlanned: ({ context }) => context.planned,
    planAborts: ({ event }) => event.type === "PLAN" && event.abort === true,
    startsEagerly: ({ context }, call: PlannedCall) =>
      startsEagerly(context.strategy, context.ready.length, call, context.readyAllSafe),
    groupComplete: ({ context }) => context.open === 0,
    allGroupsDone: ({ context }) => context.groupIndex >= context.groups.length - 1,
    steeringQueued: ({ context }) => context.steeringQueued,
    noShardRunning: ({ context }) => context.shards.length === 0,
  },
  actions: {
    noteReady: enqueueActions(({ context, enqueue }, call: PlannedCall) => {
      context.ready.push(call);
      if (!call.concurrencySafe && context.readyAllSafe) enqueue.assign({ readyAllSafe: false });
    }),
    startCalls: enqueueActions(
      ({ context, enqueue }, { calls, eager }: { calls: PlannedCall[]; eager: boolean }) => {
        const placement = placeCalls(context, calls, eager);
        for (const call of placement.here) {
          context.hosts[call.id] = "";
          enqueue.spawnChild("toolCall", {
            id: call.id,
            input: { toolCallId: call.id, toolName: call.name, args: call.args },
          });
        }
        for (const { shard, call } of placement.joins) {
          context.hosts[call.id] = shard;
          enqueue.sendTo(shard, { type: "ADD", call });
        }
        for (const shard of placement.newShards) {
          for (const call of shard.calls) context.hosts[call.id] = shard.id;
          context.shards.push(shard.id);
          if (!shard.sealed) context.eagerShards.push(shard.id);
          enqueue.spawnChild("toolShard", {
            id: shard.id,
            input: { calls: shard.calls, sealed: shard.sealed },
          });
        }
        enqueue.assign({
          hosted: context.hosted + placement.here.length,
          shardCount: context.shardCount + placement.newShards.length,
          eagerShardSize: placement.eagerShardSize,
        });
      },
    ),
    stopCalls: enqueueActions(({ context, enqueue, self }, calls: PlannedCall[]) => {
      // Started calls that will not finish: each is stopped and answered as aborted where it runs.
      let hosted = context.hosted;
      for (const call of calls) {
        const host = context.hosts[call.id];
        if (host === undefined || context.results[call.id]) continue;
        if (host !== "") {
          enqueue.sendTo(host, { type: "DROP", toolCallId: call.id });
          continue;
        }
        enqueue(stopChild(call.id));
        context.results[call.id] = answerUnran(enqueue, call, abortedText(call.name), {
          started: true,
          timestamp: nowFor(self),
          ids: messageIdsFor(self),
        });
        hosted--;
      }
      enqueue.assign({ hosted });
    }),
    adoptPlan: enqueueActions(({ context, enqueue }, calls: PlannedCall[]) => {
      for (const shard of context.eagerShards) enqueue.sendTo(shard, { type: "SEAL" });
      enqueue.assign({ ...planOf(calls, context.strategy), eagerShards: [] });
    }),
    countOpenCalls: assign({
      open: ({ context }) => currentGroup(context).filter((id) => !context.results[id]).length,
    }),
    recordDone: enqueueActions(
      ({ context, enqueue, event }, output: ToolCallOutput | ToolResultMessage[]) => {
        const id = doneActorId(event);
        const fromShard = Array.isArray(output);
        let open = context.open;
        for (const message of fromShard ? output : [output.message]) {
          // The first answer stands (a call stopped by an abort may still have finished just before).
          if (context.results[message.toolCallId]) continue;
          context.results[message.toolCallId] = message;
          if (context.planned && context.groupOf[message.toolCallId] === context.groupIndex) open--;
        }
        enqueue.assign(
          fromShard
            ? { open, shards: context.shards.filter((s) => s !== id) }
            : { open, hosted: context.hosted - 1 },
        );
        enqueue(stopChild(id));
      },
    ),
    reportGroup: enqueueActions(({ context, enqueue }) => {
      const results = currentGroup(context).map((id) => context.results[id]!);
      enqueue.sendParent({ type: "GROUP_DONE", results } satisfies GroupDoneEvent);
      enqueue.assign({ reported: context.groupIndex + 1 });
    }),
    nextGroup: assign({ groupIndex: ({ context }) => context.groupIndex + 1 }),
    noteSteering: assign({ steeringQueued: true }),
    skipRemaining: enqueueActions(({ context, enqueue, self }) => {
      for (const call of context.calls) {
        if (context.results[call.id]) continue;
        context.results[call.id] = answerUnran(enqueue, call, SKIPPED_TEXT, {
          started: false,
          timestamp: nowFor(self),
          ids: messageIdsFor(self),
        });
      }
    }),
    abortShards: enqueueActions(({ context, enqueue }) => {
      // Each shard answers its open calls as aborted, then finishes with all its results.
      for (const shard of context.shards) enqueue.sendTo(shard, { type: "ABORT" });
    }),
    answerUnstarted: enqueueActions(({ context, enqueue, self }) => {
      // Calls that never started are answered as aborted (with their start and end events).
      for (const call of context.planned ? context.calls : context.ready) {
        if (context.results[call.id]) continue;
        context.results[call.id] = answerUnran(enqueue, call, abortedText(call.name), {
          started: false,
          timestamp: nowFor(self),
          ids: messageIdsFor(self),
        });
      }
    }),
  },
}).createMachine({
  id: "toolExecution",
  context: ({ input }) => ({
    strategy: input.strategy,
    steeringQueued: input.steeringQueued,
    ...(input.calls
      ? planOf(input.calls, input.strategy)
      : { planned: false, calls: [], groups: [], groupIndex: 0, groupOf: {} }),
    reported: 0,
    open: 0,
    hosts: {},
    hosted: 0,
    shards: [],
    shardCount: 0,
    eagerShards: [],
    eagerShardSize: 0,
    ready: [],
    readyAllSafe: true,
    results: {},
  }),
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
        // A failed or aborted message goes straight to aborting, so no call that had not started runs.
        PLAN: [
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
      always: { guard: "noShardRunning", target: "done", actions: "answerUnstarted" },
      on: {
        "xstate.done.actor.*": { actions: { type: "recordDone", params: ({ event }) => event.output } },
      },
    },
    done: { type: "final" },
  },
});

/** What the plan sets: the calls, their groups, and the group of each call. */
function planOf(calls: PlannedCall[], strategy: ToolExecutionStrategy) {
  const groups = groupCalls(calls, strategy);
  const groupOf: Record<string, number> = {};
  groups.forEach((group, index) => {
    for (const id of group) groupOf[id] = index;
  });
  return { planned: true, calls, groups, groupIndex: 0, groupOf };
}

/** Results of the calls not yet reported to the parent, in the order the model asked for them. */
function unreported(context: ToolExecutionContext): ToolResultMessage[] {
  const reported = new Set(context.groups.slice(0, context.reported).flat());
  const calls = context.planned ? context.calls : context.ready;
  return calls.filter((c) => !reported.has(c.id)).map((c) => context.results[c.id]!);
}

/** Calls of the current group that have no actor yet. */
function unstarted(context: ToolExecutionContext): PlannedCall[] {
  const group = new Set(currentGroup(context));
  return context.calls.filter((c) => group.has(c.id) && context.hosts[c.id] === undefined);
}

/** Calls that started eagerly but are not in the final plan. */
function notPlanned(ready: readonly PlannedCall[], plan: readonly PlannedCall[]): PlannedCall[] {
  const planned = new Set(plan.map((c) => c.id));
  return ready.filter((c) => !planned.has(c.id));
}

/** Calls whose actor is a child of this machine (shards answer for their own). */
function startedHere(context: ToolExecutionContext): PlannedCall[] {
  return (context.planned ? context.calls : context.ready).filter((c) => context.hosts[c.id] === "");
}
