import type { ToolCall } from "../core/messages.js";
import type { ToolExecutionStrategy } from "../core/options.js";

/** A call as the execution machine plans it. */
export interface PlannedCall {
  id: string;
  name: string;
  args: unknown;
  /** The tool exists and is concurrency-safe (strategy `"auto"`). */
  concurrencySafe: boolean;
}

/**
 * The most tool-call actors one shard holds (`tool-shard.ts`). A shard keeps its calls in a record
 * it changes in place, so a bigger shard costs nothing per call; 50 rather than 16 leaves the
 * execution machine fewer shards as children, whose every stop XState pays with a copy of them
 * (3,000 calls: 7 % less CPU than shards of 16).
 */
export const SHARD_SIZE = 50;

/**
 * The most tool-call actors the execution machine holds itself, before calls go to shards. XState
 * copies a machine's `children` on every spawn and stop, and with call ids as keys every copy
 * builds new hidden classes: 16 keeps those copies short (a turn of a few calls needs no shard).
 */
export const HOSTED_CALLS = 16;

/** The text of a call skipped because the user queued a message. */
export const SKIPPED_TEXT = "Skipped due to queued user message.";

/** The text of a call ended by an abort. */
export function abortedText(toolName: string): string {
  return `Tool ${toolName} aborted`;
}

/**
 * The text of a call of an answer cut off at the output limit (`stopReason: "length"`): not run,
 * since its arguments may be the model's unfinished ones (a call cut before its first argument
 * parses as `{}`); the model is told why and how to ask again.
 *
 * @example
 * ```ts
 * truncatedCallText("write_file"); // "Not run: your answer was cut off at the output token limit, …"
 * ```
 */
export function truncatedCallText(toolName: string): string {
  return (
    `Not run: your answer was cut off at the output token limit, so this ${toolName} call may be ` +
    "incomplete. Issue it again if you still need it; if its arguments are long, make them smaller " +
    "(for example, split a large file over several calls)."
  );
}

/**
 * Splits calls into the groups a strategy runs one after another. Steering is checked between
 * groups; the first group always runs.
 *
 * @example
 * ```ts
 * groupCalls(calls, { batched: 2 }); // [[c1, c2], [c3, c4]]
 * groupCalls(calls, "auto");        // runs of concurrency-safe calls together, others alone
 * ```
 */
export function groupCalls(calls: readonly PlannedCall[], strategy: ToolExecutionStrategy): string[][] {
  if (calls.length === 0) return [];
  const ids = calls.map((c) => c.id);
  if (strategy === "parallel") return [ids];
  if (strategy === "sequential") return ids.map((id) => [id]);
  if (typeof strategy === "object") return chunk(ids, Math.max(1, Math.floor(strategy.batched)));
  const groups: string[][] = [];
  let run: string[] = [];
  for (const call of calls) {
    if (call.concurrencySafe) {
      run.push(call.id);
      continue;
    }
    if (run.length) groups.push(run);
    run = [];
    groups.push([call.id]);
  }
  if (run.length) groups.push(run);
  return groups;
}

/**
 * Whether a call whose arguments just completed in the stream (it is call number `index`, 0-based;
 * `earlierAllSafe`: every call completed before it is concurrency-safe) belongs to the first group,
 * and so may start eagerly.
 *
 * @example
 * ```ts
 * startsEagerly("sequential", 1, call, true); // false: only the first call of a sequential run
 * ```
 */
export function startsEagerly(
  strategy: ToolExecutionStrategy,
  index: number,
  call: PlannedCall,
  earlierAllSafe: boolean,
): boolean {
  if (strategy === "parallel") return true;
  if (strategy === "sequential") return index === 0;
  if (typeof strategy === "object") return index < Math.max(1, Math.floor(strategy.batched));
  return call.concurrencySafe && earlierAllSafe;
}

/**
 * Splits items into chunks of at most `size`.
 *
 * @example
 * ```ts
 * chunk([1, 2, 3], 2); // [[1, 2], [3]]
 * ```
 */
export function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

/** The id of the child actor a `xstate.done.actor.<id>` event comes from. */
export function doneActorId(event: { type: string }): string {
  return event.type.slice("xstate.done.actor.".length);
}

/** Planned calls from an assistant message's tool calls. */
export function planCalls(
  toolCalls: readonly ToolCall[],
  isConcurrencySafe: (toolName: string) => boolean,
): PlannedCall[] {
  return toolCalls.map((c) => ({
    id: c.id,
    name: c.name,
    args: c.arguments,
    concurrencySafe: isConcurrencySafe(c.name),
  }));
}

/** Where new call actors go: see {@link placeCalls}. */
export interface Placement {
  /** Calls that become children of the execution machine. */
  here: PlannedCall[];
  /** Eager calls that join a shard still open for them. */
  joins: { shard: string; call: PlannedCall }[];
  /** New shards: sealed ones hold planned calls, open ones eager calls (more may join until the plan). */
  newShards: { id: string; calls: PlannedCall[]; sealed: boolean }[];
  /** Calls in the last open shard afterwards. */
  eagerShardSize: number;
}

/**
 * Places calls that start now: as children of the execution machine while it holds fewer than
 * `HOSTED_CALLS`, the rest in shards of `SHARD_SIZE`. Eager calls fill the last open shard first.
 *
 * @example
 * ```ts
 * placeCalls({ hosted: 15, shardCount: 0, eagerShards: [], eagerShardSize: 0 }, [a, b], false);
 * // { here: [a], joins: [], newShards: [{ id: "shard:1", calls: [b], sealed: true }], eagerShardSize: 0 }
 * ```
 */
export function placeCalls(
  state: { hosted: number; shardCount: number; eagerShards: readonly string[]; eagerShardSize: number },
  calls: readonly PlannedCall[],
  eager: boolean,
): Placement {
  const room = Math.max(0, HOSTED_CALLS - state.hosted);
  const here = calls.slice(0, room);
  const rest = calls.slice(room);
  const newShards: Placement["newShards"] = [];
  const nextId = () => `shard:${state.shardCount + newShards.length + 1}`;
  if (!eager) {
    for (const part of chunk(rest, SHARD_SIZE)) newShards.push({ id: nextId(), calls: part, sealed: true });
    return { here, joins: [], newShards, eagerShardSize: state.eagerShardSize };
  }
  const joins: Placement["joins"] = [];
  let open = state.eagerShards.at(-1);
  let size = state.eagerShardSize;
  for (const call of rest) {
    const fresh = newShards.at(-1);
    if (open !== undefined && size < SHARD_SIZE && fresh?.id === open) fresh.calls.push(call);
    else if (open !== undefined && size < SHARD_SIZE) joins.push({ shard: open, call });
    else {
      open = nextId();
      newShards.push({ id: open, calls: [call], sealed: false });
      size = 0;
    }
    size++;
  }
  return { here, joins, newShards, eagerShardSize: size };
}
