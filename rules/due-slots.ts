import { Cron } from "croner";
import type { ScheduleRecord } from "./schedule-record.js";
import { slotAfter } from "./schedule-spec.js";

/** What one firing of a schedule does: the slots it runs, those its missed-run policy skips, and its next slot. */
export interface DueSlots {
  fire: number[];
  skipped: { count: number; last?: number };
  nextAt?: number;
}

/** Slots a cron looks at when it was down a long time: beyond these, older slots count as skipped. */
const MAX_CRON_SCAN = 100_000;

/**
 * The slots of `record` due at `now` and what its missed-run policy makes of them. A slot later
 * than `missedAfterMs` is missed; the latest due slot on time always runs (`skip` skips only
 * missed ones), `once` runs the latest slot for all of them, `each` runs up to `maxMissedRuns` of
 * the latest ones in order.
 *
 * @example
 * ```ts
 * const record = { when: { every: 1000, startAt: 0 }, nextAt: 0, missed: "once" } as ScheduleRecord;
 * dueSlots(record, 5_000, { missedAfterMs: 60_000, maxMissedRuns: 100 });
 * // { fire: [5000], skipped: { count: 5, last: 4000 }, nextAt: 6000 }
 * ```
 */
export function dueSlots(
  record: ScheduleRecord,
  now: number,
  limits: { missedAfterMs: number; maxMissedRuns: number },
): DueSlots {
  const first = record.nextAt;
  if (first === undefined || first > now) return { fire: [], skipped: { count: 0 }, nextAt: first };
  const keep = record.missed === "each" ? Math.max(1, limits.maxMissedRuns) : 1;
  const { latest, count } = latestSlots(record, first, now, keep);
  const newest = latest.at(-1)!;
  const onTime = now - newest <= limits.missedAfterMs;
  let fire: number[];
  if (record.missed === "each") fire = latest;
  else if (record.missed === "once" || onTime) fire = [newest];
  else fire = [];
  const skippedCount = count - fire.length;
  const lastSkipped =
    skippedCount === 0 ? undefined : fire.length === 0 ? newest : precedingSlot(latest, fire, record, first);
  return {
    fire,
    skipped: { count: skippedCount, last: lastSkipped },
    nextAt: slotAfter(record.when, newest),
  };
}

/** The `keep` latest slots from `first` to `now`, oldest first, and how many there are in all. */
function latestSlots(record: ScheduleRecord, first: number, now: number, keep: number) {
  const when = record.when;
  if ("at" in when) return { latest: [first], count: 1 };
  if ("every" in when) {
    const count = Math.floor((now - first) / when.every) + 1;
    const newest = first + (count - 1) * when.every;
    const n = Math.min(keep, count);
    return { latest: Array.from({ length: n }, (_, i) => newest - (n - 1 - i) * when.every), count };
  }
  const cron = new Cron(when.cron, { timezone: when.timeZone, paused: true });
  const latest: number[] = [first];
  let count = 1;
  for (let slot = first; count < MAX_CRON_SCAN; count++) {
    const next = cron.nextRun(new Date(slot))?.getTime();
    if (next === undefined || next > now) break;
    slot = next;
    latest.push(slot);
    if (latest.length > keep) latest.shift();
  }
  return { latest, count };
}

/** The newest slot not fired: the one before the fired ones (known only when it was kept). */
function precedingSlot(latest: number[], fire: number[], record: ScheduleRecord, first: number): number {
  const index = latest.indexOf(fire[0]!) - 1;
  if (index >= 0) return latest[index]!;
  if ("every" in record.when) return fire[0]! - record.when.every;
  return first;
}
