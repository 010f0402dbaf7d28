import { Cron } from "croner";

/**
 * When a schedule fires: once `at` a time, `every` so many milliseconds (the first slot one
 * interval after it was made, or at `startAt`), or on a `cron` pattern read in `timeZone` (an IANA
 * name; UTC when absent).
 *
 * @example
 * ```ts
 * const when: ScheduleWhen = { cron: "0 9 * * 1-5", timeZone: "Europe/Paris" }; // weekdays at 9, Paris time
 * ```
 */
export type ScheduleWhen =
  | { at: number | string | Date }
  | { every: number; startAt?: number | string | Date }
  | { cron: string; timeZone?: string };

/** A schedule's `when` as the store keeps it: times as epoch milliseconds, JSON-safe. */
export type StoredWhen =
  { at: number } | { every: number; startAt: number } | { cron: string; timeZone?: string };

/** Thrown for a schedule that cannot be made (a cron that never fires, a time in the past, ...). */
export class ScheduleError extends Error {
  override name = "ScheduleError";
}

/** The shortest interval `every` takes: a shorter one is a busy loop, not a schedule. */
export const MIN_EVERY_MS = 1_000;

/**
 * Checks `when` and returns its stored form, with its first slot after `now`; throws a
 * {@link ScheduleError} that says what is wrong.
 *
 * @example
 * ```ts
 * const { stored, first } = checkWhen({ every: 60_000 }, Date.now()); // first: a minute from now
 * ```
 */
export function checkWhen(when: ScheduleWhen, now: number): { stored: StoredWhen; first: number } {
  const kinds = (["at", "every", "cron"] as const).filter((key) => key in (when ?? {}));
  if (kinds.length !== 1) {
    throw new ScheduleError(
      `a schedule needs exactly one of at, every or cron (got ${kinds.join(", ") || "none"})`,
    );
  }
  let stored: StoredWhen;
  if ("at" in when) {
    const at = timeOf(when.at, "at");
    if (at < now) throw new ScheduleError(`at ${new Date(at).toISOString()} is in the past`);
    stored = { at };
  } else if ("every" in when) {
    if (!Number.isFinite(when.every) || when.every < MIN_EVERY_MS) {
      throw new ScheduleError(`every must be a number of milliseconds, at least ${MIN_EVERY_MS}`);
    }
    const startAt = when.startAt === undefined ? now + when.every : timeOf(when.startAt, "startAt");
    stored = { every: when.every, startAt };
  } else {
    // croner reads a zone that is not text (a number from JSON) as something else, and "" as UTC.
    if (when.timeZone !== undefined && (typeof when.timeZone !== "string" || when.timeZone.trim() === "")) {
      throw new ScheduleError(
        `timeZone must be an IANA zone name such as "Europe/Paris" (or left out for UTC), got ${JSON.stringify(when.timeZone)}`,
      );
    }
    cronOf(when.cron, when.timeZone); // throws for a bad pattern or zone
    stored = when.timeZone === undefined ? { cron: when.cron } : { cron: when.cron, timeZone: when.timeZone };
  }
  const first = firstSlot(stored, now);
  if (first === undefined) throw new ScheduleError(`cron "${(stored as { cron: string }).cron}" never fires`);
  return { stored, first };
}

/**
 * The first slot of `when` at or after `from` (for `at`: the time itself, whatever `from` is),
 * or `undefined` when there is none (a cron on the 30th of February).
 *
 * @example
 * ```ts
 * slotAtOrAfter({ every: 1000, startAt: 0 }, 2500); // 3000
 * ```
 */
export function slotAtOrAfter(when: StoredWhen, from: number): number | undefined {
  if ("at" in when) return when.at;
  if ("every" in when) {
    if (from <= when.startAt) return when.startAt;
    return when.startAt + Math.ceil((from - when.startAt) / when.every) * when.every;
  }
  // croner's nextRun is strictly after its argument.
  const next = cronOf(when.cron, when.timeZone).nextRun(new Date(from - 1));
  return next ? next.getTime() : undefined;
}

/**
 * The slot after `slot` (`undefined` for `at`, which has one).
 *
 * @example
 * ```ts
 * slotAfter({ every: 1000, startAt: 0 }, 3000); // 4000
 * ```
 */
export function slotAfter(when: StoredWhen, slot: number): number | undefined {
  if ("at" in when) return undefined;
  return slotAtOrAfter(when, slot + 1);
}

function firstSlot(when: StoredWhen, now: number): number | undefined {
  return "cron" in when ? slotAtOrAfter(when, now + 1) : slotAtOrAfter(when, now);
}

function cronOf(pattern: string, timeZone: string | undefined): Cron {
  if (typeof pattern !== "string") throw new ScheduleError('cron must be a string such as "0 9 * * *"');
  try {
    const cron = new Cron(pattern, { timezone: timeZone, paused: true });
    // A bad zone only shows when a date is converted.
    cron.nextRun();
    return cron;
  } catch (error) {
    throw new ScheduleError(
      `cron "${pattern}"${timeZone ? ` in ${timeZone}` : ""}: ${(error as Error).message}`,
    );
  }
}

function timeOf(value: number | string | Date, name: string): number {
  const time =
    value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : value;
  if (typeof time !== "number" || !Number.isFinite(time)) {
    throw new ScheduleError(
      `${name} must be a time (a Date, epoch milliseconds or an ISO string), got ${String(value)}`,
    );
  }
  return time;
}
