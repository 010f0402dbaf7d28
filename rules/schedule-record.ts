// A schedule as plain data, and the one check every scheduler makes of a new one (in process in
// wake/, on Restate in durable/).
import { ScheduleError, type ScheduleWhen, type StoredWhen, checkWhen } from "./schedule-spec.js";

/**
 * What to do with slots that passed while nothing could fire them (the process was down, or the
 * event loop was blocked past them): `once` runs one now for all of them, `skip` runs none and
 * waits for the next slot, `each` runs every missed slot in order (at most `maxMissedRuns`).
 */
export type MissedRunPolicy = "once" | "skip" | "each";

/** How the woken agent takes a schedule's message: as a new run's prompt, or as a follow-up. */
export type WakeAs = "prompt" | "followUp";

/**
 * One schedule as the store keeps it (JSON-safe). `nextAt` is the next slot to fire: the
 * scheduler moves it on only after the slot's message reached the agent.
 */
export interface ScheduleRecord {
  id: string;
  agentId: string;
  when: StoredWhen;
  /** The text the agent wakes to. */
  message: string;
  as: WakeAs;
  missed: MissedRunPolicy;
  /** Who made it: the app, or the agent through its schedule tool. */
  createdBy: "app" | "agent";
  paused: boolean;
  /** The next slot (epoch ms); absent once a one-off schedule has fired. */
  nextAt?: number;
  /** Slots fired so far. */
  runs: number;
  /** The span that made the schedule (W3C `traceparent`): each run it wakes links to it. */
  traceparent?: string;
}

/** The fields of a new schedule both schedulers take (in process and on Restate). */
export type NewSchedule = ScheduleWhen & {
  /** The text the agent wakes to. */
  message: string;
  /** As a new run's prompt (default), or as a follow-up. */
  as?: WakeAs;
  /** For slots missed while nothing could fire them (default: the scheduler's, else `once`). */
  missed?: MissedRunPolicy;
  /** Your own id (unique); default a random one. */
  id?: string;
  createdBy?: "app" | "agent";
};

/**
 * Checks a new schedule and returns its record, first slot set, or throws a {@link ScheduleError}
 * that says what is wrong: the one rule the in-process scheduler and the durable one share.
 *
 * @example
 * ```ts
 * const record = scheduleRecordOf({ every: 60_000, message: "Any news?" }, { agentId: "ada", id: "sch_1", now: Date.now() });
 * record.nextAt; // a minute from now
 * ```
 */
export function scheduleRecordOf(
  input: NewSchedule,
  context: { agentId: string; id: string; now: number; missed?: MissedRunPolicy },
): ScheduleRecord {
  if (input === null || typeof input !== "object") throw new ScheduleError("a schedule must be an object");
  if (typeof input.message !== "string" || input.message.trim() === "") {
    throw new ScheduleError("a schedule needs the message the agent wakes to");
  }
  if (input.as !== undefined && input.as !== "prompt" && input.as !== "followUp") {
    throw new ScheduleError(`as must be "prompt" or "followUp", got ${String(input.as)}`);
  }
  const missed = input.missed ?? context.missed ?? "once";
  if (!["once", "skip", "each"].includes(missed)) {
    throw new ScheduleError(`missed must be "once", "skip" or "each", got ${String(missed)}`);
  }
  const id = context.id;
  if (typeof id !== "string" || id.trim() === "" || id.length > 120) {
    throw new ScheduleError("a schedule's id must be text of 1 to 120 characters");
  }
  if (id.startsWith("later_")) {
    throw new ScheduleError(`a schedule's id may not start with "later_" (the store's late results use it)`);
  }
  if (input.createdBy !== undefined && input.createdBy !== "app" && input.createdBy !== "agent") {
    throw new ScheduleError(`createdBy must be "app" or "agent", got ${String(input.createdBy)}`);
  }
  const { stored, first } = checkWhen(input, context.now);
  return {
    id,
    agentId: context.agentId,
    when: stored,
    message: input.message,
    as: input.as ?? "prompt",
    missed,
    createdBy: input.createdBy ?? "app",
    paused: false,
    nextAt: first,
    runs: 0,
  };
}
