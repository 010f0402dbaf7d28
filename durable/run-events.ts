// The events a durable run records in its session's state, where they happen: numbered per run,
// bounded per run as an agent in process bounds them (`eventReplay`), and written in the slot the
// run writes before it waits anyway (durable/run-slots.ts: recording costs no state write of its
// own, and the run record is not written for it).
// Only committed events are recorded: those the run publishes the same way when Restate replays it.
// What a step publishes while it runs (a model's deltas, a tool's updates) is live only: a replay
// does not run the step again, so recording it would break the journal's order.
import { type ObjectContext, type ObjectSharedContext, RestatePromise } from "@restatedev/restate-sdk";
import { approxEventBytes, DEFAULT_EVENT_REPLAY } from "../agent/event-log.js";
import type { AgentEvent } from "../core/events.js";
import type { AssistantMessage } from "../core/messages.js";
import type { EventReplayOptions } from "../core/options.js";
import type { RecordedEvents } from "./session-types.js";

/**
 * Where a run's recorded events were in state, as the run record of earlier versions kept it (its
 * `events`): batches under `e/<first seq>`, the oldest first. Still read, so a session whose last
 * run wrote it serves that run's events and clears them with the next run. Runs now keep the list
 * out of the record (it grew with every wait, and each wait wrote it): the record says
 * `eventsInKeys`, and the batches are the "e/<seq>" keys in state ({@link eventBatchStarts}).
 */
export interface RunEventsRecord {
  /** The seq the next recorded event gets (= events recorded so far). */
  next: number;
  /** The batches kept: `[first seq, events, approximate bytes]`, ascending. */
  batches: [number, number, number][];
}

const eventsKey = (seq: number) => `e/${seq}`;

/**
 * The first seq of every event batch among a session's state keys ("e/<seq>"), ascending.
 *
 * @example
 * ```ts
 * eventBatchStarts(["run", "m/0", "e/9", "e/0"]); // [0, 9]
 * ```
 */
export function eventBatchStarts(keys: readonly string[]): number[] {
  const starts: number[] = [];
  for (const key of keys) {
    if (!key.startsWith("e/")) continue;
    const seq = Number(key.slice(2));
    if (Number.isInteger(seq) && seq >= 0) starts.push(seq);
  }
  return starts.sort((a, b) => a - b);
}

/**
 * Whether `event` is committed: published the same way live and on replay. Deltas, tool updates,
 * progress notes, retries and a failed attempt's discarded message are published inside a
 * journaled step; so is the `message_start` of a model's answer (on replay the run publishes its
 * own just before the message ends, which is the one recorded, see {@link createRunEventRecorder}).
 *
 * @example
 * ```ts
 * isCommitted({ type: "turn_start", turn: 1 }); // true
 * ```
 */
export function isCommitted(event: AgentEvent): boolean {
  switch (event.type) {
    case "message_update":
    case "tool_execution_update":
    case "tool_progress":
    case "output_delta":
    case "retry":
      return false;
    case "message_start":
      return event.message.role !== "assistant";
    case "message_end":
      return event.discarded !== true;
    default:
      return true;
  }
}

/**
 * A model's answer as its committed events before its `message_end`: its `message_start` (no
 * content yet), then each block whole as one update (a text or thinking block's text as one delta,
 * a tool call's start and end). What a follower without the live deltas shows, and what one that
 * had some of them completes its message from.
 *
 * @example
 * ```ts
 * committedStream(answer).map((e) => e.type); // ["message_start", "message_update", ...]
 * ```
 */
export function committedStream(message: AssistantMessage): AgentEvent[] {
  const events: AgentEvent[] = [{ type: "message_start", message: { ...message, content: [] } }];
  message.content.forEach((block, i) => {
    const partial = { ...message, content: message.content.slice(0, i + 1) };
    if (block.type === "text") {
      events.push({ type: "message_update", message: partial, kind: "text_delta", delta: block.text });
    } else if (block.type === "thinking") {
      events.push({
        type: "message_update",
        message: partial,
        kind: "thinking_delta",
        delta: block.thinking,
      });
    } else if (block.type === "toolCall") {
      for (const kind of ["toolcall_start", "toolcall_end"] as const) {
        events.push({ type: "message_update", message: partial, kind, delta: "", toolCallId: block.id });
      }
    }
  });
  return events;
}

/**
 * One entry of a stored batch: an event, or a model's answer as its `message_end` alone, which
 * stands for {@link committedStream} of its message followed by itself (what a reader gets back).
 * A model's answer is most of what a turn records, and its committed stream repeats the message
 * once per block: stored whole, it would be written three times or more.
 */
export type StoredEvent = AgentEvent | { answer: AgentEvent & { type: "message_end" } };

/**
 * The events a stored batch stands for: each model's answer expanded to its committed stream and
 * its `message_end`, every other event as it is (a batch of earlier versions holds only those).
 *
 * @example
 * ```ts
 * expandBatch([{ type: "turn_start", turn: 1 }, { answer: messageEnd }]).length; // 1 + committedStream(...).length + 1
 * ```
 */
export function expandBatch(batch: readonly StoredEvent[]): AgentEvent[] {
  const events: AgentEvent[] = [];
  for (const entry of batch) {
    if ("type" in entry) events.push(entry);
    else if (entry.answer.message.role === "assistant")
      events.push(...committedStream(entry.answer.message), entry.answer);
  }
  return events;
}

/**
 * The committed events one run records: `record` numbers them (0 = `agent_start`), `take` hands
 * what was recorded since the last take as one batch (for the run's slot, durable/run-slots.ts) and
 * drops the oldest batches beyond the bounds. A model's answer is recorded as {@link committedStream} just before its `message_end`
 * (the same live and on replay: its streamed events are live only). `previous`: the first seqs of
 * the last run's batches, which go now (a session serves its current or last run's events).
 *
 * @example
 * ```ts
 * const recorder = createRunEventRecorder(ctx, [], agentOptions.eventReplay);
 * agent.events$.subscribe((event) => recorder.record(event));
 * const batch = recorder.take(); // before the run waits: into its slot
 * ```
 */
export function createRunEventRecorder(
  ctx: ObjectContext,
  previous: readonly number[],
  limits: EventReplayOptions | false | undefined,
) {
  const maxEvents = (limits && limits.maxEvents) || DEFAULT_EVENT_REPLAY.maxEvents;
  const maxBytes = (limits && limits.maxBytes) || DEFAULT_EVENT_REPLAY.maxBytes;
  for (const start of previous) ctx.clear(eventsKey(start));
  const state: RunEventsRecord = { next: 0, batches: [] };
  /** Events and approximate bytes of the batches kept. */
  let keptEvents = 0;
  let keptBytes = 0;
  /** What the next take hands over, and how many events and approximate bytes it stands for. */
  let pending: StoredEvent[] = [];
  let pendingEvents = 0;
  let pendingBytes = 0;
  const keep = (event: AgentEvent) => {
    pendingEvents++;
    pendingBytes += approxEventBytes(event);
    state.next++;
  };
  return {
    /** Whether events wait for the next take. */
    get dirty(): boolean {
      return pendingEvents > 0;
    },
    /** The seq the next recorded event gets. */
    get next(): number {
      return state.next;
    },
    /**
     * Records `event` if it is committed: the events recorded for it with their seqs (a model's
     * answer brings its committed stream), none for a live-only event.
     */
    record(event: AgentEvent): readonly { seq: number; event: AgentEvent }[] {
      if (!isCommitted(event)) return NONE;
      if (event.type !== "message_end" || event.message.role !== "assistant") {
        pending.push(event);
        keep(event);
        return [{ seq: state.next - 1, event }];
      }
      pending.push({ answer: event });
      return [...committedStream(event.message), event].map((committed) => {
        keep(committed);
        return { seq: state.next - 1, event: committed };
      });
    },
    /**
     * The events recorded since the last take as one batch, for the run's next slot
     * (durable/run-slots.ts), with the oldest seq still served: past the bounds the oldest batches
     * go, whole, the newest always stays (their slots keep them, unread, until a run writes over
     * them). `undefined` when nothing was recorded since.
     */
    take(): { seq: number; events: StoredEvent[]; kept: number } | undefined {
      if (pendingEvents === 0) return undefined;
      const seq = state.next - pendingEvents;
      const events = pending;
      state.batches.push([seq, pendingEvents, pendingBytes]);
      keptEvents += pendingEvents;
      keptBytes += pendingBytes;
      pending = [];
      pendingEvents = 0;
      pendingBytes = 0;
      while (state.batches.length > 1 && (keptEvents > maxEvents || keptBytes > maxBytes)) {
        const [, count, size] = state.batches.shift()!;
        keptEvents -= count;
        keptBytes -= size;
      }
      return { seq, events, kept: state.batches[0]![0] };
    },
  };
}

/** What {@link createRunEventRecorder}'s `record` answers for a live-only event (shared: never changed). */
const NONE: readonly { seq: number; event: AgentEvent }[] = [];

export type RunEventRecorder = ReturnType<typeof createRunEventRecorder>;

/**
 * The recorded events of a run from `since`, or `undefined` when some of them were dropped (the
 * bounds) or the run recorded none (a run of an earlier version). `record`: where the run record of
 * an earlier version said they are; `undefined` for a run that keeps them only under the "e/<seq>"
 * keys (the state's keys say where its batches start).
 */
export async function readRunEvents(
  ctx: ObjectContext | ObjectSharedContext,
  runId: string,
  record: RunEventsRecord | undefined,
  ended: boolean,
  since: number,
): Promise<RecordedEvents | undefined> {
  const starts = record ? record.batches.map(([start]) => start) : eventBatchStarts(await ctx.stateKeys());
  const oldest = starts[0] ?? record?.next ?? 0;
  if (since < oldest) return undefined;
  // The batch holding `since` is the last one that starts at or before it; the rest follow it.
  let first = 0;
  for (let i = starts.length - 1; i >= 0; i--) {
    if (starts[i]! <= since) {
      first = i;
      break;
    }
  }
  const wanted = record
    ? record.batches.filter(([start, count]) => start + count > since).map(([start]) => start)
    : starts.slice(first);
  const batches = (await RestatePromise.all(
    wanted.map((start) => ctx.get<StoredEvent[]>(eventsKey(start)) as RestatePromise<StoredEvent[] | null>),
  )) as (StoredEvent[] | null)[];
  const events: { seq: number; event: AgentEvent }[] = [];
  let next = record?.next ?? 0;
  wanted.forEach((start, i) => {
    const batch = expandBatch(batches[i] ?? []);
    batch.forEach((event, offset) => {
      if (start + offset >= since) events.push({ seq: start + offset, event });
    });
    if (!record) next = Math.max(next, start + batch.length);
  });
  return { runId, events, next, ended };
}

/**
 * The recorded events of a run that keeps them in its slots (durable/run-slots.ts), from `since`,
 * or `undefined` when some of them went past the bounds.
 *
 * @example
 * ```ts
 * const recorded = slotEvents(await readRunSlots(ctx, runId), runId, ended, 0);
 * ```
 */
export function slotEvents(
  slots: readonly { seq?: number; events?: StoredEvent[]; kept?: number }[],
  runId: string,
  ended: boolean,
  since: number,
): RecordedEvents | undefined {
  let kept = 0;
  const batches: { seq: number; events: StoredEvent[] }[] = [];
  for (const slot of slots) {
    if (slot.seq === undefined || !slot.events) continue;
    batches.push({ seq: slot.seq, events: slot.events });
    kept = slot.kept ?? kept;
  }
  if (since < kept) return undefined;
  const events: { seq: number; event: AgentEvent }[] = [];
  let next = 0;
  for (const batch of batches) {
    const expanded = expandBatch(batch.events);
    next = batch.seq + expanded.length;
    if (next <= since || batch.seq + expanded.length <= kept) continue;
    expanded.forEach((event, offset) => {
      const seq = batch.seq + offset;
      if (seq >= since && seq >= kept) events.push({ seq, event });
    });
  }
  return { runId, events, next, ended };
}
