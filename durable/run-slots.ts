// Where a durable run keeps its progress while it runs: one state key per flush (before each wait),
// "s/<k>" for the run's k-th flush, holding everything that flush has to say — the run's turn, the
// transcript's count, the messages added since the last flush, the committed events recorded since
// then — so a turn costs one state write a wait, not one per kind of thing it changed. The run
// record ("run") is written as the run starts and as it ends, not per turn: readers fold the run's
// slots over it. Each slot names its run: the next run writes over the slots from "s/0" on without
// clearing them first, readers skip a slot of another run, and a run that ends clears the slots above
// its own that the run before it wrote.
import { type ObjectContext, type ObjectSharedContext, RestatePromise } from "@restatedev/restate-sdk";
import type { AgentMessage } from "../core/messages.js";
import type { StoredEvent } from "./run-events.js";

/** What one flush of a run wrote: state key "s/<k>". */
export interface RunSlot {
  /** The invocation id of the run that wrote it (a slot of another run is stale). */
  run: string;
  /** The run's turn as it flushed. */
  turn: number;
  /** Messages in the stored transcript after this flush. */
  count: number;
  /**
   * The snapshot ("m/0") was rewritten with this flush and holds the first `base` messages (a
   * compaction, the session's first flush in this layout, or the run's end): the messages of the
   * run's earlier slots are in it.
   */
  base?: number;
  /** Where `messages` start in the transcript. */
  from?: number;
  /** The messages added since the last flush. */
  messages?: AgentMessage[];
  /** The seq of the first of `events`. */
  seq?: number;
  /** The committed events recorded since the last flush (durable/run-events.ts). */
  events?: StoredEvent[];
  /** The oldest seq the run's recorded events still serve (older ones went past the bounds). */
  kept?: number;
}

const slotKey = (k: number) => `s/${k}`;

/**
 * The indexes of every slot among a session's state keys ("s/<k>"), ascending.
 *
 * @example
 * ```ts
 * slotIndexes(["run", "m/0", "s/1", "s/0"]); // [0, 1]
 * ```
 */
export function slotIndexes(keys: readonly string[]): number[] {
  const indexes: number[] = [];
  for (const key of keys) {
    if (!key.startsWith("s/")) continue;
    const k = Number(key.slice(2));
    if (Number.isInteger(k) && k >= 0) indexes.push(k);
  }
  return indexes.sort((a, b) => a - b);
}

/**
 * The slots run `runId` wrote, in the order it wrote them (slots of other runs are skipped).
 *
 * @example
 * ```ts
 * const slots = await readRunSlots(ctx, run.runId);
 * const turn = slots.at(-1)?.turn ?? run.turn;
 * ```
 */
export async function readRunSlots(
  ctx: ObjectContext | ObjectSharedContext,
  runId: string,
): Promise<RunSlot[]> {
  const indexes = slotIndexes(await ctx.stateKeys());
  const values = (await RestatePromise.all(
    indexes.map((k) => ctx.get<RunSlot>(slotKey(k)) as RestatePromise<RunSlot | null>),
  )) as (RunSlot | null)[];
  // A run writes its slots from 0 without gaps: past the first slot of another run, none is its own.
  const slots: RunSlot[] = [];
  for (let i = 0; i < indexes.length; i++) {
    const slot = values[i];
    if (indexes[i] !== i || !slot || slot.run !== runId) break;
    slots.push(slot);
  }
  return slots;
}

/**
 * Writes one run's slots, from "s/0" on. `stale`: how many slots the run before it wrote (or may
 * have): {@link RunSlotWriter.clearStale} clears those this run did not write over.
 *
 * @example
 * ```ts
 * const slots = createRunSlotWriter(ctx, runId, previous?.slotCount ?? 0);
 * slots.write({ turn: 1, count: 3, seq: 0, events: [...] }); // before the run waits
 * slots.clearStale(); // as the run ends
 * ```
 */
export function createRunSlotWriter(ctx: ObjectContext, runId: string, stale: number) {
  let next = 0;
  return {
    /** Slots written so far. */
    get count(): number {
      return next;
    },
    /** Writes the next slot. */
    write(slot: Omit<RunSlot, "run">): void {
      ctx.set(slotKey(next), { run: runId, ...slot } satisfies RunSlot);
      next++;
    },
    /** Clears the slots of the run before that this run did not write over. */
    clearStale(): void {
      for (let k = next; k < stale; k++) ctx.clear(slotKey(k));
      stale = next;
    },
  };
}

export type RunSlotWriter = ReturnType<typeof createRunSlotWriter>;

/** What a run's slots say of the transcript: the snapshot's part, what follows it, the count. */
export interface SlottedTranscript {
  /** Messages the snapshot ("m/0") holds. */
  base: number;
  /** The messages after the snapshot, from index `base`. */
  after: AgentMessage[];
  count: number;
  turn: number | undefined;
}

/**
 * Folds a run's slots over what its record said as it started (`base`: the snapshot's messages,
 * `count`): a slot that rewrote the snapshot drops the messages of the slots before it.
 *
 * @example
 * ```ts
 * foldSlots(slots, { base: run.base!, count: run.count! }).count;
 * ```
 */
export function foldSlots(
  slots: readonly RunSlot[],
  start: { base: number; count: number },
): SlottedTranscript {
  let base = start.base;
  let after: AgentMessage[] = [];
  let count = start.count;
  let turn: number | undefined;
  for (const slot of slots) {
    if (slot.base !== undefined) {
      base = slot.base;
      after = [];
    }
    if (slot.messages && slot.from !== undefined) {
      after = [...after.slice(0, Math.max(0, slot.from - base)), ...slot.messages];
    }
    count = slot.count;
    turn = slot.turn;
  }
  return { base, after: after.slice(0, Math.max(0, count - base)), count, turn };
}
