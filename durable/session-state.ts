import {
  type ObjectContext,
  type ObjectSharedContext,
  RestatePromise,
  TerminalError,
} from "@restatedev/restate-sdk";
import type { AgentMessage } from "../core/messages.js";
import { readRunEvents, type RunEventsRecord, slotEvents, type StoredEvent } from "./run-events.js";
import { foldSlots, readRunSlots, type RunSlot } from "./run-slots.js";
import type {
  LastRun,
  RecordedEvents,
  SessionStatus,
  SessionUpdates,
  TranscriptSlice,
} from "./session-types.js";

export type { LastRun, SessionStatus, SessionUpdates, TranscriptSlice } from "./session-types.js";

// The K/V state of one AgentSession (key = session id):
//   "run"        RunRecord        the active run, or the last one (state idle), written as a run
//                                 starts and as it ends (not per turn), with how the last finished
//                                 run ended (`last`; earlier versions kept it under "lastRun")
//   "approvals"  ApprovalBook     calls waiting for a decision, with the awakeable that takes it
//   "clientCalls" ApprovalBook    calls of client-run tools waiting for the client's result, likewise
//   "generation" number           bumped when a compaction rewrote earlier messages
//   "m/0"        AgentMessage[]   the transcript's snapshot: all of it as the last run ended
//   "s/<k>"      RunSlot          the run's k-th flush (durable/run-slots.ts): its turn, the count,
//                                 the messages and committed events since the flush before, one key
//                                 a wait, tagged with the run
// A turn writes one key before each wait: what a turn journals grows with what it added, not with
// the history, and readers fold the run's slots over its record. A run ends by writing the
// transcript as the snapshot (with its last slot, which says so): the next run reads one key,
// whatever the session's age, and writes its slots over the last run's from "s/0" on, without
// clearing them first (readers skip another run's slots); as it ends it clears those above its own.
//
// Earlier layouts are still read, and the next run's start moves them into the snapshot (one write,
// their keys cleared): before the slots (issue 44), a run wrote each turn's messages under
// "t/<j>" (where each starts: the record's `tail`), its events under "e/<seq>" and the run record
// at every turn; before that every batch stayed under "m/<first index>" (a record without `tail`,
// found by the state's keys). Format 1 stored one message per "m/<i>" (a bare AgentMessage, read as
// a batch of one) and the count under "count" (read when the run record has none). Runs before
// issue 44 kept where their events are in the run record (`events`), still read; the next run
// clears those batches, and the "e/<seq>" keys of runs that listed none.

/** The active run (`state: "running"`), or the last one. */
export interface RunRecord {
  state: "idle" | "running";
  /** The invocation id of the run's `prompt`. */
  runId: string;
  turn: number;
  startedAt: number;
  /**
   * Where the run's own messages start in the transcript (its message seq 0), and the transcript's
   * generation then: the seq of a message is its index minus `firstIndex` while the generation is
   * the same. Absent in records of earlier versions.
   */
  firstIndex?: number;
  generation?: number;
  /**
   * Messages in the stored transcript (those a reader takes; a batch written after the last count
   * is not read until the count includes it). Absent in records of format 1: the "count" key.
   */
  count?: number;
  /**
   * Where the transcript's batches after the snapshot ("m/0") start: batch j is under "t/<j>" and
   * the snapshot holds the messages before `tail[0]` (all of them when the tail is empty). Absent in
   * records of earlier versions (batches under "m/<first index>", found by the state's keys).
   */
  tail?: number[];
  /** How many "t/<j>" slots may hold something (current or stale): the next fold clears those above its own. */
  tailKeys?: number;
  /**
   * After a fold: where the folded batches start, which their slots still hold until the next run
   * writes (its first record drops this), so a follower reading the last run's messages reads those
   * rather than the whole snapshot.
   */
  folded?: number[];
  /**
   * The run's recorded events are the "e/<seq>" keys in state (durable/run-events.ts): set with the
   * run's first batch. Absent in records of earlier versions and of a run that has recorded none yet.
   */
  eventsInKeys?: true;
  /**
   * Where the run's recorded events are, as runs of earlier versions wrote it (with every batch);
   * read still, never written now. Absent in records of versions older still.
   */
  events?: RunEventsRecord;
  /**
   * The run keeps its progress (turn, count, messages, events) in its slots, "s/<k>"
   * (durable/run-slots.ts): readers fold them over this record, which is written as the run starts
   * and as it ends. Absent in records of earlier versions.
   */
  slotted?: true;
  /**
   * The snapshot ("m/0") held the first `base` messages when the record was written (all of them:
   * the run's slots hold what it adds). Absent in records of earlier versions (`tail`, or batches
   * under "m/<i>").
   */
  base?: number;
  /** The run records its events in its slots. */
  eventsInSlots?: true;
  /**
   * As the run ended: the transcript's generation (the "generation" key's, until a run compacts),
   * so the next run need not read it.
   */
  endGeneration?: number;
  /**
   * As the run ended: its last committed events (from its last wait on), written with the record
   * rather than in a slot of their own.
   */
  lastEvents?: { seq: number; events: StoredEvent[]; kept: number };
  /** As the run ended: how many slots it wrote (the next run clears those it does not write over). */
  slotCount?: number;
  /**
   * How the last finished run ended (this one, once it has). Records of earlier versions have none:
   * it was under "lastRun", which the next run moves here.
   */
  last?: LastRun;
}

/** A call waiting for approval (or, in "clientCalls", for a client's result). */
export interface PendingApprovalRecord {
  toolCallId: string;
  toolName: string;
  args: unknown;
  /** For a sub-agent's call: the ids of the calls from the run's agent down to it (`toolCallId` joined by "/"). */
  path?: string[];
  /** For a sub-agent's call: the sub-agent tools on its path, from the top (whose child tools hold its tool). */
  tools?: string[];
  /** The awakeable the run waits on (kept out of `status`: whoever holds it can decide). */
  awakeableId: string;
}

export type ApprovalBook = Record<string, PendingApprovalRecord>;

type AnyObjectContext = ObjectContext | ObjectSharedContext;

const messageKey = (index: number) => `m/${index}`;
const tailKey = (slot: number) => `t/${slot}`;

/** A 404 for a session that never ran. */
export function unknownSession(sessionId: string): TerminalError {
  return new TerminalError(`Unknown session "${sessionId}": no run was ever started for it`, {
    errorCode: 404,
  });
}

/** The run record, or a 404 for a session that never ran. */
export async function requireRun(ctx: AnyObjectContext): Promise<RunRecord> {
  const run = await ctx.get<RunRecord>("run");
  if (!run) throw unknownSession(ctx.key);
  return run;
}

/** The session's status as one object (404 for a session that never ran). */
export async function readStatus(ctx: AnyObjectContext): Promise<SessionStatus> {
  const run = await requireRun(ctx);
  return statusOf(ctx, run, await slotsOf(ctx, run));
}

/**
 * The slots of the record's run while it runs (its progress since the record was written); none
 * for a run that ended (its record says it all) or a record of an earlier version.
 */
function slotsOf(ctx: AnyObjectContext, run: RunRecord | null): Promise<RunSlot[]> {
  if (!run?.slotted || run.state !== "running") return Promise.resolve([]);
  return readRunSlots(ctx, run.runId);
}

async function statusOf(ctx: AnyObjectContext, run: RunRecord, slots: RunSlot[]): Promise<SessionStatus> {
  const last = slots.at(-1);
  const [count, generation, approvals, clientCalls, lastRun] = (await RestatePromise.all([
    last ? RestatePromise.resolve(last.count) : countOf(ctx, run),
    ctx.get<number>("generation") as RestatePromise<number | null>,
    ctx.get<ApprovalBook>("approvals") as RestatePromise<ApprovalBook | null>,
    ctx.get<ApprovalBook>("clientCalls") as RestatePromise<ApprovalBook | null>,
    run.slotted
      ? RestatePromise.resolve(run.last ?? null)
      : (ctx.get<LastRun>("lastRun") as RestatePromise<LastRun | null>),
  ])) as [number, number | null, ApprovalBook | null, ApprovalBook | null, LastRun | null];
  return {
    sessionId: ctx.key,
    state: run.state,
    runId: run.runId,
    turn: last ? last.turn : run.turn,
    messageCount: count,
    generation: generation ?? 0,
    pendingApprovals: publicEntries(approvals),
    pendingToolCalls: publicEntries(clientCalls),
    ...(lastRun && { lastRun }),
  };
}

/** A book's calls without their awakeable ids (capabilities: whoever holds one can decide). */
function publicEntries(book: ApprovalBook | null) {
  return Object.values(book ?? {}).map(({ toolCallId, toolName, args, path }) => ({
    toolCallId,
    toolName,
    args,
    ...(path && { path }),
  }));
}

/** A 410: what a follower asked to resume from is not kept; it resynchronises from the transcript. */
export function resynchronise(detail: string): TerminalError {
  return new TerminalError(`${detail}: resynchronise from the transcript, then follow from there`, {
    errorCode: 410,
  });
}

/**
 * The session's status and its messages from `from` on, or, with `runId` and `since`, the messages
 * of that run from its message `since` on (a 410 when that run is not the current or last one, or
 * a compaction rewrote the transcript since it started; a 400 for a seq the run has not reached).
 */
export async function readUpdates(
  ctx: AnyObjectContext,
  request: { from: number; runId?: string; since?: number; events?: { runId: string; since?: number } },
): Promise<SessionUpdates> {
  const run = await requireRun(ctx);
  // One read of the run's slots serves the status, the messages and the events.
  const slots = await slotsOf(ctx, run);
  const status = await statusOf(ctx, run, slots);
  const runStart =
    run.firstIndex !== undefined && run.generation === status.generation ? run.firstIndex : undefined;
  let from = request.from;
  if (request.runId !== undefined) {
    const since = request.since ?? 0;
    if (run.runId !== request.runId) {
      throw resynchronise(
        `Run "${request.runId}" is not the current or last run of session "${ctx.key}" (that is "${run.runId}")`,
      );
    }
    if (runStart === undefined) {
      throw resynchronise(
        `The messages of run "${request.runId}" from seq ${since} are no longer where they were ` +
          "(a compaction rewrote the transcript since the run started)",
      );
    }
    const stored = status.messageCount - runStart;
    if (since > stored) {
      throw new TerminalError(
        `Run "${request.runId}" has stored ${stored} messages so far (seq 0 to ${stored - 1}); seq ${since} is not reached yet`,
        { errorCode: 400 },
      );
    }
    from = runStart + since;
  }
  const slice = await readStored(ctx, from, { run, slots });
  let events: RecordedEvents | undefined;
  let eventsUnavailable: string | undefined;
  if (request.events) {
    try {
      events = await readEvents(ctx, run, request.events.runId, request.events.since ?? 0, slots);
    } catch (error) {
      if (!(error instanceof TerminalError) || error.code !== 410) throw error;
      eventsUnavailable = error.message;
    }
  }
  return {
    status,
    ...(runStart !== undefined && { runStart }),
    from: slice.from,
    messages: slice.messages,
    ...(events && { events }),
    ...(eventsUnavailable !== undefined && { eventsUnavailable }),
  };
}

/**
 * Run `runId`'s recorded events from `since` (410 when the run is not the current or last one,
 * recorded none, or dropped some of them past the bounds: resynchronise from the transcript).
 */
export async function readEvents(
  ctx: AnyObjectContext,
  run: RunRecord,
  runId: string,
  since: number,
  known?: RunSlot[],
): Promise<RecordedEvents> {
  if (run.runId !== runId) {
    throw resynchronise(
      `Run "${runId}" is not the current or last run of session "${ctx.key}" (that is "${run.runId}")`,
    );
  }
  const ended = run.state === "idle";
  if (run.eventsInSlots) {
    // A run that ended keeps its slots until the next run writes over them (its status reads none).
    const slots = known && !ended ? known : await readRunSlots(ctx, runId);
    const last = ended && run.lastEvents ? [run.lastEvents] : [];
    const events = slotEvents([...slots, ...last], runId, ended, since);
    if (!events) throw resynchronise(`The events of run "${runId}" from seq ${since} are no longer kept`);
    return events;
  }
  const recorded = run.events !== undefined || run.eventsInKeys === true;
  // A run that has not flushed its first events yet.
  if (!recorded && !ended) return { runId, events: [], next: 0, ended };
  const events = recorded ? await readRunEvents(ctx, runId, run.events, ended, since) : undefined;
  if (!events) {
    throw resynchronise(
      recorded
        ? `The events of run "${runId}" from seq ${since} are no longer kept`
        : `Run "${runId}" recorded no events (it ran on an earlier version)`,
    );
  }
  return events;
}

/**
 * The stored message count: the run record's, or the "count" key of format 1 (which wrote a run
 * record too: a session without one never ran, and has no messages to count).
 */
function countOf(ctx: AnyObjectContext, run: RunRecord | null): RestatePromise<number> {
  if (run === null) return RestatePromise.resolve(0);
  if (run.count !== undefined) return RestatePromise.resolve(run.count);
  return (ctx.get<number>("count") as RestatePromise<number | null>).map((count) => count ?? 0);
}

/** What one "m/<i>" key holds: a batch of messages from i on, or (format 1) one message. */
type StoredMessages = AgentMessage[] | AgentMessage;

const asBatch = (value: StoredMessages): AgentMessage[] => (Array.isArray(value) ? value : [value]);

/** The stored transcript from `from` on, and where its batches start (what a writer rewrites). */
export interface StoredTranscript extends TranscriptSlice {
  /** The first index of each batch read, ascending (format 1: every index). */
  starts: number[];
  /** The count came from format 1's "count" key. */
  legacyCount: boolean;
  /** The session's state keys, when the read listed them (`known.listKeys`, or batches to find). */
  keys?: string[];
  /** The run record's `tail` (the current layout), or absent (batches under "m/<i>", or nothing stored). */
  tail?: number[];
  /** The run record's `tailKeys`. */
  tailKeys: number;
  /** The snapshot ("m/0") holds the whole transcript and no key of an earlier layout is left. */
  whole: boolean;
}

/** Messages `from` … end of the stored transcript. */
export async function readTranscript(ctx: AnyObjectContext, from = 0): Promise<TranscriptSlice> {
  const { generation, count, from: start, messages } = await readStored(ctx, from);
  return { generation, count, from: start, messages };
}

/** The first index of every stored batch below `total` (the "m/<i>" keys), ascending. */
function batchStarts(keys: string[], total: number): number[] {
  const starts: number[] = [];
  for (const key of keys) {
    if (!key.startsWith("m/")) continue;
    const index = Number(key.slice(2));
    if (Number.isInteger(index) && index >= 0 && index < total) starts.push(index);
  }
  return starts.sort((a, b) => a - b);
}

/**
 * Messages `from` … end of the stored transcript, with their batches (`known.run`: the run record,
 * when the caller has read it already). The state's keys say where batches start, so a read costs
 * one journal entry per batch it needs, not one per message: the batch holding `from` and every
 * batch after it, read at once. `known.listKeys`: list the keys even when no batch is wanted (the
 * caller needs them too: one listing, one journal entry).
 */
export async function readStored(
  ctx: AnyObjectContext,
  from = 0,
  known?: { run: RunRecord | null; listKeys?: boolean; slots?: RunSlot[] },
): Promise<StoredTranscript> {
  // A caller that has read the run record passes it: a read is a journal entry of its own. So is
  // the generation's, which a session that never ran has not, and an ended run's record says.
  const said =
    known && (known.run === null ? 0 : known.run.state === "idle" ? known.run.endGeneration : undefined);
  const [run, generation] = (await RestatePromise.all([
    known
      ? RestatePromise.resolve(known.run)
      : (ctx.get<RunRecord>("run") as RestatePromise<RunRecord | null>),
    said !== undefined
      ? RestatePromise.resolve(said)
      : (ctx.get<number>("generation") as RestatePromise<number | null>),
  ])) as [RunRecord | null, number | null];
  if (run?.base !== undefined)
    return readSlotted(
      ctx,
      run,
      known?.slots ?? (await slotsOf(ctx, run)),
      generation ?? 0,
      from,
      known?.listKeys,
    );
  const total = await countOf(ctx, run);
  const start = Math.min(from, total);
  if (run?.tail) return readTail(ctx, run, run.tail, generation ?? 0, total, start, known?.listKeys);
  // A follower's poll that finds nothing new lists no keys.
  const keys = start < total || known?.listKeys ? await ctx.stateKeys() : undefined;
  const all = keys && start < total ? batchStarts(keys, total) : [];
  // The batch holding `start` is the last one that begins at or before it.
  let first = all.length;
  for (let i = all.length - 1; i >= 0; i--) {
    if (all[i]! <= start) {
      first = i;
      break;
    }
  }
  const wanted = first < all.length ? all.slice(first) : all.filter((index) => index > start);
  const values = (await RestatePromise.all(
    wanted.map(
      (index) => ctx.get<StoredMessages>(messageKey(index)) as RestatePromise<StoredMessages | null>,
    ),
  )) as (StoredMessages | null)[];
  const messages: AgentMessage[] = [];
  const starts: number[] = [];
  let index = start;
  wanted.forEach((batchStart, i) => {
    const value = values[i];
    if (value === null || value === undefined) return;
    const batch = asBatch(value);
    // Only the first batch may begin before `index` (it holds `start`).
    if ((i > 0 && batchStart < index) || batchStart + batch.length <= index) return;
    starts.push(batchStart);
    messages.push(...batch.slice(Math.max(index, batchStart) - batchStart, total - batchStart));
    index = batchStart + batch.length;
  });
  return {
    generation: generation ?? 0,
    count: total,
    from: start,
    messages,
    starts,
    legacyCount: run !== null && run.count === undefined,
    ...(keys && { keys }),
    tailKeys: 0,
    // A session that never ran has nothing stored to move.
    whole: run === null,
  };
}

/**
 * The transcript from `from` in the current layout: the snapshot ("m/0", read only when `from` is
 * inside it) and, while a run goes, what its slots added after it; no key listing but the slots'.
 */
async function readSlotted(
  ctx: AnyObjectContext,
  run: RunRecord,
  slots: RunSlot[],
  generation: number,
  from: number,
  listKeys: boolean | undefined,
): Promise<StoredTranscript> {
  const { base, after, count } = foldSlots(slots, { base: run.base!, count: run.count ?? run.base! });
  const start = Math.min(from, count);
  const keys = listKeys ? await ctx.stateKeys() : undefined;
  const snapshot =
    start < base ? ((await ctx.get<AgentMessage[]>(messageKey(0))) ?? []).slice(start, base) : [];
  return {
    generation,
    count,
    from: start,
    messages: [...snapshot, ...after.slice(Math.max(0, start - base))],
    starts: [],
    legacyCount: false,
    ...(keys && { keys }),
    tailKeys: 0,
    whole: run.state === "idle",
  };
}

/**
 * The transcript from `start` in the current layout: the snapshot ("m/0", when `start` is before the
 * tail) and the tail's batches that hold messages from `start` on, read at once; no key listing.
 */
async function readTail(
  ctx: AnyObjectContext,
  run: RunRecord,
  tail: number[],
  generation: number,
  total: number,
  start: number,
  listKeys: boolean | undefined,
): Promise<StoredTranscript> {
  // The snapshot holds what comes before the tail (a fold writes it before the record says so).
  // A follower reading from inside the last run's folded batches reads them, not the snapshot.
  const folded = run.folded;
  if (tail.length === 0 && folded?.length && start >= folded[0]!) tail = folded;
  const base = Math.min(tail[0] ?? total, total);
  const ends = tail.map((_, j) => Math.min(tail[j + 1] ?? total, total));
  const slots = tail.map((_, j) => j).filter((j) => tail[j]! < total && ends[j]! > start);
  const keys = listKeys ? await ctx.stateKeys() : undefined;
  const [snapshot, ...batches] = (await RestatePromise.all([
    start < base
      ? (ctx.get<AgentMessage[]>(messageKey(0)) as RestatePromise<AgentMessage[] | null>)
      : RestatePromise.resolve(null),
    ...slots.map((j) => ctx.get<AgentMessage[]>(tailKey(j)) as RestatePromise<AgentMessage[] | null>),
  ])) as [AgentMessage[] | null, ...(AgentMessage[] | null)[]];
  const messages = (snapshot ?? []).slice(start, base);
  slots.forEach((j, i) => {
    const from = tail[j]!;
    messages.push(...(batches[i] ?? []).slice(Math.max(start, from) - from, ends[j]! - from));
  });
  return {
    generation,
    count: total,
    from: start,
    messages,
    starts: [],
    legacyCount: false,
    ...(keys && { keys }),
    tail: [...(run.tail ?? [])],
    tailKeys: run.tailKeys ?? tail.length,
    whole: false,
  };
}

/**
 * Writes a run's transcript back to the session's state: {@link start} moves a session stored in an
 * earlier layout into the snapshot ("m/0", one write, its old keys cleared); then what a write added
 * since the last {@link take} goes into the run's next slot (durable/run-slots.ts) with the run's
 * other progress, one key a wait; messages already stored (the same objects) are not written again.
 * When a compaction replaced earlier messages, the snapshot is rewritten whole at the next take, and
 * `generation` goes up. {@link fold} ends a run: the snapshot takes the whole transcript at the next
 * take, so the next run reads one key.
 *
 * @example
 * ```ts
 * const writer = createTranscriptWriter(ctx, await readStored(ctx));
 * record.write({ ...writer.start() }); // as the run starts
 * writer.write(agent.messages); // at a turn's end
 * slots.write({ turn, count: writer.count, ...writer.take() }); // before the run waits
 * writer.fold(); // as the run ends, then one more take
 * ```
 */
export function createTranscriptWriter(ctx: ObjectContext, stored: StoredTranscript) {
  let written: readonly AgentMessage[] = stored.messages;
  // Messages the snapshot holds.
  let base = stored.count;
  // The snapshot is rewritten at the next take (a compaction, the run's end).
  let rebase = false;
  // A compaction's rewrite waits for the next take (the snapshot changes, not only grows).
  let rewritten = false;
  // What the next take puts in the run's slot: the messages added since the last one.
  let pending: { from: number; messages: AgentMessage[] } | undefined;
  let currentGeneration = stored.generation;
  const setSnapshot = () => {
    if (written.length) ctx.set(messageKey(0), written);
    else ctx.clear(messageKey(0));
    base = written.length;
    rebase = false;
    rewritten = false;
    pending = undefined;
  };
  return {
    /** Messages stored so far. */
    get count(): number {
      return written.length;
    },
    /**
     * A compaction rewrote earlier messages since the last take: the next take rewrites the
     * snapshot, which a slot must say before readers read it (it does not only grow).
     */
    get rewriting(): boolean {
      return rewritten;
    },
    /** The transcript's generation (up by one with each compaction that rewrote earlier messages). */
    get generation(): number {
      return currentGeneration;
    },
    /**
     * As the run starts: the transcript in the current layout (the snapshot holds it all), moved
     * there by one write when an earlier version stored it otherwise. What the run record says.
     */
    start(): Pick<RunRecord, "count" | "base"> {
      if (!stored.whole) {
        setSnapshot();
        for (const start of stored.starts) if (start > 0) ctx.clear(messageKey(start));
        if (stored.legacyCount) ctx.clear("count");
        for (let slot = 0; slot < stored.tailKeys; slot++) ctx.clear(tailKey(slot));
      }
      return { count: written.length, base };
    },
    /** Stores `messages` (the agent's current transcript) at the next take; whether anything changed. */
    write(messages: readonly AgentMessage[]): boolean {
      let same = 0;
      const limit = Math.min(written.length, messages.length);
      while (same < limit && written[same] === messages[same]) same++;
      if (same === written.length && same === messages.length) return false;
      if (same < written.length) {
        currentGeneration++;
        ctx.set("generation", currentGeneration);
        rebase = true;
        rewritten = true;
        pending = undefined;
      } else if (!rebase) {
        const from = pending?.from ?? written.length;
        pending = { from, messages: messages.slice(from) };
      }
      written = [...messages];
      return true;
    },
    /** What the run's next slot says of the transcript since the last take (the snapshot written first). */
    take(): Pick<RunSlot, "base" | "from" | "messages"> {
      if (rebase) {
        setSnapshot();
        return { base };
      }
      if (!pending) return {};
      const { from, messages } = pending;
      pending = undefined;
      return { from, messages };
    },
    /**
     * As the run ends: the next take writes the whole transcript as the snapshot (the batch still
     * waiting goes into it unwritten), so the next run reads one key. Whether it will.
     */
    fold(): boolean {
      if (written.length !== base) rebase = true;
      return rebase;
    },
  };
}

/**
 * The run record in state, written when something changed and the run is about to wait (before its
 * next step, and as it ends): a turn's start and its messages' count cost one write together.
 */
export function createRunRecorder(ctx: ObjectContext, run: RunRecord) {
  let current = run;
  let dirty = false;
  return {
    get record(): RunRecord {
      return current;
    },
    /** Changes the record; it is written at the next {@link flush}. */
    update(patch: Partial<RunRecord>): void {
      current = { ...current, ...patch };
      dirty = true;
    },
    /** Writes the record if it changed since the last write. */
    flush(): void {
      if (!dirty) return;
      dirty = false;
      ctx.set("run", current);
    },
    /** Writes the record now. */
    write(patch: Partial<RunRecord> = {}): void {
      current = { ...current, ...patch };
      dirty = false;
      ctx.set("run", current);
    },
  };
}

/**
 * The calls waiting for approval (state key "approvals"), or for a client's result ("clientCalls"),
 * kept in state so the shared handlers that decide them find them. `storedEmpty`: the key is known
 * to hold nothing as the run starts (the last run ended and cleared it), so a run that adds nothing
 * clears nothing: a clear is a journal entry, on every run's path.
 *
 * @example
 * ```ts
 * const approvals = createApprovalBook(ctx, "approvals", { storedEmpty: previous?.state === "idle" });
 * approvals.add({ toolCallId, toolName, args, awakeableId });
 * approvals.clear(); // as the run ends
 * ```
 */
export function createApprovalBook(
  ctx: ObjectContext,
  key: "approvals" | "clientCalls" = "approvals",
  { storedEmpty = false }: { storedEmpty?: boolean } = {},
) {
  let book: ApprovalBook = {};
  let written = false;
  return {
    add(record: PendingApprovalRecord): void {
      book = { ...book, [record.toolCallId]: record };
      written = true;
      ctx.set(key, book);
    },
    remove(toolCallId: string): void {
      if (!(toolCallId in book)) return;
      const { [toolCallId]: _removed, ...rest } = book;
      book = rest;
      ctx.set(key, book);
    },
    clear(): void {
      book = {};
      if (storedEmpty && !written) return;
      ctx.clear(key);
    },
  };
}
