// Schedules of durable sessions: a Restate virtual object keyed by the session id, beside the
// session and its inbox. A schedule is a record in this object's state and
// one delayed call to its own `fire` handler per slot, so it lives in Restate (it survives the
// loss of every service process) and each slot's delivery is journaled (a service killed as it
// fires replays the delivery, it does not repeat it). The slot math is wake/'s (one place).
import * as restate from "@restatedev/restate-sdk";
import { type ObjectContext, type ObjectSharedContext, TerminalError } from "@restatedev/restate-sdk";
import type { UserMessage } from "../core/messages.js";
import { dueSlots } from "../rules/due-slots.js";
import {
  type MissedRunPolicy,
  type NewSchedule,
  type ScheduleRecord,
  scheduleRecordOf,
} from "../rules/schedule-record.js";
import { ScheduleError, slotAtOrAfter } from "../rules/schedule-spec.js";
import { slotMessageId, wakeMessageOf } from "../rules/wake-message.js";
import { spanContextOf, type WakeCause } from "../telemetry/wake-cause.js";
import { laterHandlers } from "./later-handlers.js";
import type { SessionOptions } from "./session-options.js";
import { slotCallDelay } from "./slot-lead.js";
import type { WakeDeliveryInput } from "./wake-session.js";

/** A durable session's schedule, as `list` answers it (`agentId` is the session id). */
export interface DurableSchedule extends ScheduleRecord {
  /** Slots the missed-run policy did not run, in all. */
  skipped: number;
}

/** How a durable session's slots are judged missed (as `createScheduler`'s options). */
export interface DurableScheduleLimits {
  /** A slot fired later than this after its time counts as missed (Restate was down). Default 60 000 ms. */
  missedAfterMs?: number;
  /** Most slots one schedule runs at once under the `each` policy. Default 100. */
  maxMissedRuns?: number;
  /** Default missed-run policy. Default `once`. */
  missed?: MissedRunPolicy;
}

type Schedules = Record<string, DurableSchedule>;

/**
 * What `SessionWakes.schedule` takes: a new schedule, the span that made it, and for the agent's
 * own schedule tool the most schedules the agent may have made (refused with 409 at the limit).
 */
export type DurableScheduleInput = NewSchedule & { traceparent?: string; maxMadeByAgent?: number };

/**
 * The `SessionWakes` virtual object (key = session id): `schedule`, `list`, `pause`, `resume`,
 * `cancel`, and the private `fire` its delayed calls reach. A slot's message goes to the session's
 * inbox, which wakes the session (durable/wake-session.ts).
 *
 * @example
 * ```ts
 * const wakes = createSessionWakes({ name: "SessionWakes", session: "AgentSession", inbox: "SessionInbox" });
 * ```
 */
export function createSessionWakes(options: {
  name: string;
  session: string;
  inbox: string;
  limits?: DurableScheduleLimits;
  serviceOptions?: restate.ObjectOptions;
  /** The sessions' agent options: a handle's work is the session's tool's. */
  options: SessionOptions;
}) {
  const limits = {
    missedAfterMs: options.limits?.missedAfterMs ?? 60_000,
    maxMissedRuns: options.limits?.maxMissedRuns ?? 100,
  };

  /** Hands a slot's message to the session's inbox, which wakes the session (durable/wake-session.ts). */
  const deliver = (ctx: ObjectContext, message: UserMessage, cause: WakeCause, slot: number) =>
    ctx.genericCall<WakeDeliveryInput, unknown>({
      service: options.inbox,
      method: "deliver",
      key: ctx.key,
      parameter: { kind: "followUp", message, cause, notBefore: slot },
      inputSerde: restate.serde.json,
      outputSerde: restate.serde.json,
    });
  /** The delayed call that fires `record`'s slot `slot`. */
  const arm = (ctx: ObjectContext, record: DurableSchedule, now: number) => {
    if (record.nextAt === undefined || record.paused) return;
    ctx.genericSend({
      service: options.name,
      method: "fire",
      key: ctx.key,
      parameter: { id: record.id, slot: record.nextAt },
      inputSerde: restate.serde.json,
      delay: slotCallDelay(record.nextAt, now),
    });
  };
  const read = async (ctx: ObjectContext | ObjectSharedContext) =>
    (await ctx.get<Schedules>("schedules")) ?? {};
  const found = async (ctx: ObjectContext, input: unknown) => {
    const id = idOf(input);
    const schedules = await read(ctx);
    const record = schedules[id];
    if (!record) throw new TerminalError(`No schedule "${id}" in session "${ctx.key}"`, { errorCode: 404 });
    return { schedules, record };
  };

  /** Fires the due slots of a schedule: journaled, so a replay after a crash delivers nothing twice. */
  async function fire(ctx: ObjectContext, input: { id: string; slot: number }): Promise<void> {
    const schedules = await read(ctx);
    const record = schedules[input?.id];
    // A call armed before a pause, a resume or a cancel: the schedule has moved on.
    if (!record || record.paused || record.nextAt !== input.slot) return;
    // The call comes up to SLOT_LEAD_MS early (slot-lead.ts): an early call is on time, the
    // slot's own; the inbox queues the message at the slot.
    const now = Math.max(await ctx.date.now(), input.slot);
    const due = dueSlots(record, now, limits);
    for (const slot of due.fire) {
      try {
        const id = slotMessageId(record.id, slot);
        await deliver(
          ctx,
          wakeMessageOf({ id, text: record.message, source: "schedule" }, slot),
          {
            source: "schedule",
            id: record.id,
            traceparent: record.traceparent,
          },
          slot,
        );
      } catch (error) {
        // The session refused the message (an input filter): the slot counts as run, the schedule goes on.
        if (!(error instanceof TerminalError)) throw error;
        ctx.console.warn(`schedule ${record.id} of session ${ctx.key}: slot refused: ${error.message}`);
      }
    }
    record.runs += due.fire.length;
    record.skipped += due.skipped.count;
    if (due.nextAt === undefined) {
      delete schedules[record.id];
    } else {
      record.nextAt = due.nextAt;
      arm(ctx, record, now);
    }
    ctx.set("schedules", schedules);
  }

  return restate.object({
    name: options.name,
    ...(options.serviceOptions && { options: options.serviceOptions }),
    handlers: {
      /** Makes a schedule (400 for one that cannot be made: a cron that never fires, a time past). */
      schedule: async (ctx: ObjectContext, given: DurableScheduleInput): Promise<DurableSchedule> => {
        const now = await ctx.date.now();
        const schedules = await read(ctx);
        const { maxMadeByAgent, ...input } = given ?? ({} as DurableScheduleInput);
        const id = input.id ?? `sch_${ctx.rand.uuidv4()}`;
        if (schedules[id]) throw badSchedule(`a schedule "${id}" exists already`, 409);
        // The schedule tool's limit is checked here, in the object's exclusive handler: two calls
        // of one turn (or of two runs) are counted one after the other, never both against the
        // same count.
        if (input.createdBy === "agent" && typeof maxMadeByAgent === "number") {
          const made = Object.values(schedules).filter((record) => record.createdBy === "agent").length;
          if (made >= maxMadeByAgent) {
            throw new TerminalError(
              `you have ${made} wake-ups scheduled, the most allowed: cancel one first`,
              { errorCode: 409 },
            );
          }
        }
        let record: DurableSchedule;
        try {
          record = {
            ...scheduleRecordOf(input, { agentId: ctx.key, id, now, missed: options.limits?.missed }),
            skipped: 0,
          };
          // The span that made it: each run it wakes links to it (one that is not a traceparent is dropped).
          if (spanContextOf(input.traceparent)) record.traceparent = input.traceparent;
        } catch (error) {
          if (error instanceof ScheduleError) throw badSchedule(error.message);
          throw error;
        }
        schedules[id] = record;
        ctx.set("schedules", schedules);
        arm(ctx, record, now);
        return record;
      },
      /** The session's schedules. */
      list: restate.handlers.object.shared(async (ctx: ObjectSharedContext): Promise<DurableSchedule[]> =>
        Object.values(await read(ctx)),
      ),
      /** Stops a schedule firing until `resume`; slots that pass meanwhile are not run. */
      pause: async (ctx: ObjectContext, input: unknown): Promise<DurableSchedule> => {
        const { schedules, record } = await found(ctx, input);
        record.paused = true;
        ctx.set("schedules", schedules);
        return record;
      },
      /** Fires again from the next slot (an `at` already past fires under its missed-run policy). */
      resume: async (ctx: ObjectContext, input: unknown): Promise<DurableSchedule> => {
        const { schedules, record } = await found(ctx, input);
        if (!record.paused) return record;
        const now = await ctx.date.now();
        record.paused = false;
        if (!("at" in record.when)) record.nextAt = slotAtOrAfter(record.when, now);
        ctx.set("schedules", schedules);
        arm(ctx, record, now);
        return record;
      },
      /**
       * Removes a schedule; `false` when there was none with that id. With `createdBy` (the
       * agent's schedule tool sends `"agent"`), only one made that way: another is left as it is
       * and answered `false`, as an unknown id.
       */
      cancel: async (ctx: ObjectContext, input: unknown): Promise<boolean> => {
        const id = idOf(input);
        const schedules = await read(ctx);
        const record = schedules[id];
        if (!record || !madeBy(record, input)) return false;
        delete schedules[id];
        ctx.set("schedules", schedules);
        return true;
      },
      fire: restate.handlers.object.exclusive({ ingressPrivate: true }, fire),
      // The handles of the sessions' tools that answer later: durable/later-handlers.ts.
      ...laterHandlers({ name: options.name, inbox: options.inbox, options: options.options }),
    },
  });
}

function badSchedule(message: string, errorCode = 400): TerminalError {
  return new TerminalError(`Invalid schedule: ${message}`, { errorCode });
}

/** Whether `record` was made by the maker `input` names in its `createdBy` (any, when it names none). */
function madeBy(record: DurableSchedule, input: unknown): boolean {
  const createdBy =
    typeof input === "object" && input !== null ? (input as { createdBy?: unknown }).createdBy : undefined;
  return createdBy === undefined || record.createdBy === createdBy;
}

function idOf(input: unknown): string {
  const id = typeof input === "string" ? input : (input as { id?: unknown } | null)?.id;
  if (typeof id !== "string" || id === "") {
    throw new TerminalError('Invalid request: expected the schedule\'s id ({ id: "sch_…" })', {
      errorCode: 400,
    });
  }
  return id;
}
