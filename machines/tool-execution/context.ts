import type { ToolCallOutput } from "../../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../../core/messages.js";
import type { ToolExecutionStrategy } from "../../core/options.js";
import { groupCalls, type PlannedCall } from "../../rules/tool-execution.logic.js";

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
  /** Call actors that are children of this machine right now (at most `HOSTED_CALLS`). */
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
  /**
   * The message's calls; `abort`: the message failed or was aborted, so none may start;
   * `truncated`: the answer was cut off at the output limit, so none may start either, and those
   * that did not are answered as cut off.
   */
  | { type: "PLAN"; calls: PlannedCall[]; abort?: boolean; truncated?: boolean }
  | { type: "STEERING_QUEUED" }
  | { type: "ABORT" }
  /** A call actor (output: its result) or a shard (output: its calls' results) finished. */
  | { type: `xstate.done.actor.${string}`; output: ToolCallOutput | ToolResultMessage[] };

/** Results of one finished group, in the order the model asked for them. */
export interface GroupDoneEvent {
  type: "GROUP_DONE";
  results: ToolResultMessage[];
}

/** The calls of the group running now (ids), in the order the model asked for them. */
export const currentGroup = (context: ToolExecutionContext) => context.groups[context.groupIndex] ?? [];

/**
 * The context the execution starts with: planned at once when its input has the calls, else
 * collecting the calls that arrive one by one before the plan.
 *
 * @example
 * ```ts
 * initialExecutionContext({ strategy: "parallel", steeringQueued: false }).planned; // false
 * ```
 */
export function initialExecutionContext(input: ToolExecutionInput): ToolExecutionContext {
  return {
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
  };
}

/** What the plan sets: the calls, their groups, and the group of each call. */
export function planOf(calls: PlannedCall[], strategy: ToolExecutionStrategy) {
  const groups = groupCalls(calls, strategy);
  const groupOf: Record<string, number> = {};
  groups.forEach((group, index) => {
    for (const id of group) groupOf[id] = index;
  });
  return { planned: true, calls, groups, groupIndex: 0, groupOf };
}

/** Results of the calls not yet reported to the parent, in the order the model asked for them. */
export function unreported(context: ToolExecutionContext): ToolResultMessage[] {
  const reported = new Set(context.groups.slice(0, context.reported).flat());
  const calls = context.planned ? context.calls : context.ready;
  return calls.filter((c) => !reported.has(c.id)).map((c) => context.results[c.id]!);
}

/** Calls of the current group that have no actor yet. */
export function unstarted(context: ToolExecutionContext): PlannedCall[] {
  const group = new Set(currentGroup(context));
  return context.calls.filter((c) => group.has(c.id) && context.hosts[c.id] === undefined);
}

/** Calls that started eagerly but are not in the final plan. */
export function notPlanned(ready: readonly PlannedCall[], plan: readonly PlannedCall[]): PlannedCall[] {
  const planned = new Set(plan.map((c) => c.id));
  return ready.filter((c) => !planned.has(c.id));
}

/** Calls whose actor is a child of this machine (shards answer for their own). */
export function startedHere(context: ToolExecutionContext): PlannedCall[] {
  return (context.planned ? context.calls : context.ready).filter((c) => context.hosts[c.id] === "");
}
