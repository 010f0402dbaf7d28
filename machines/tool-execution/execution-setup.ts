import { type AnyActorRef, assign, enqueueActions, setup, stopChild } from "xstate";
import { type ToolCallOutput, toolCallMachine } from "../../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../../core/messages.js";
import { messageIdsFor, nowFor } from "../../core/runtime.js";
import {
  abortedText,
  doneActorId,
  type PlannedCall,
  placeCalls,
  SKIPPED_TEXT,
  startsEagerly,
  truncatedCallText,
} from "../../rules/tool-execution.logic.js";
import { answerUnran } from "../unran-calls.js";
import { toolShardLogic } from "../tool-shard.js";
import {
  currentGroup,
  type GroupDoneEvent,
  planOf,
  type ToolExecutionContext,
  type ToolExecutionEvent,
  type ToolExecutionInput,
} from "./context.js";

/**
 * The tool execution machine's `setup()`: its types, the actors it spawns (a `toolCall` per call,
 * a `toolShard` per `SHARD_SIZE` calls beyond the first `HOSTED_CALLS`), and every guard and action its
 * statechart names. The statechart itself is `toolExecutionMachine` in tool-execution.machine.ts.
 *
 * @example
 * ```ts
 * const machine = toolExecutionSetup.createMachine({ id: "toolExecution", initial: "done", states: { done: {} } });
 * ```
 */
export const toolExecutionSetup = setup({
  types: {
    input: {} as ToolExecutionInput,
    context: {} as ToolExecutionContext,
    events: {} as ToolExecutionEvent,
  },
  actors: { toolCall: toolCallMachine, toolShard: toolShardLogic },
  guards: {
    isPlanned: ({ context }) => context.planned,
    planAborts: ({ event }) => event.type === "PLAN" && event.abort === true,
    planTruncated: ({ event }) => event.type === "PLAN" && event.truncated === true,
    startsEagerly: ({ context }, call: PlannedCall) =>
      startsEagerly(context.strategy, context.ready.length, call, context.readyAllSafe),
    groupComplete: ({ context }) => context.open === 0,
    allGroupsDone: ({ context }) => context.groupIndex >= context.groups.length - 1,
    steeringQueued: ({ context }) => context.steeringQueued,
    nothingRunning: ({ context }) => context.shards.length === 0 && context.hosted === 0,
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
        // A call that finished in this very step (its end published, its output on its way here)
        // keeps its result: `recordDone` takes it, and the abort waits for it (`nothingRunning`).
        if (host === "" && hasFinished(self, call.id)) continue;
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
    answerCutOff: enqueueActions(({ context, enqueue, self }, calls: PlannedCall[]) => {
      // A truncated answer's calls that never started are answered as cut off (with their start
      // and end events); aborting then stops those that had started.
      for (const call of calls) {
        if (context.results[call.id] || context.hosts[call.id] !== undefined) continue;
        context.results[call.id] = answerUnran(enqueue, call, truncatedCallText(call.name), {
          started: false,
          timestamp: nowFor(self),
          ids: messageIdsFor(self),
        });
      }
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
});

/**
 * The call's actor (a child of this machine) has reached its final state: its output reaches this
 * machine right after the step it is in, as `xstate.done.actor.<id>`. An abort made from a
 * subscriber of that call's `tool_execution_end` comes in between.
 */
function hasFinished(self: AnyActorRef, toolCallId: string): boolean {
  const child = (self.getSnapshot() as { children: Record<string, AnyActorRef | undefined> }).children[
    toolCallId
  ];
  return child?.getSnapshot().status === "done";
}
