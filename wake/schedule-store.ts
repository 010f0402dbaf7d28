import type { LaterResultRecord } from "../rules/later-record.js";
import type { ScheduleRecord } from "../rules/schedule-record.js";

export type { MissedRunPolicy, ScheduleRecord, WakeAs } from "../rules/schedule-record.js";

/**
 * What a {@link ScheduleStore} keeps: schedules, and the pending handles of tools that answer later
 * (`kind: "laterResult"`), so one store brings both back after a restart.
 *
 * @example
 * ```ts
 * const store: ScheduleStore = { load: () => db.all(), put: (record: WakeRecord) => db.upsert(record.id, record), delete: (id) => db.remove(id) };
 * ```
 */
export type WakeRecord = ScheduleRecord | LaterResultRecord;

/**
 * Where schedules (and the handles of tools that answer later) outlive the process. `load` is
 * called by `scheduler.start()` and `laterResults.start()` (each takes its own kind of record);
 * `put` and `delete` after each change, awaited before the change is reported done. Ids are unique
 * across both kinds (handles start with `later_`, which a schedule's id may not).
 *
 * @example
 * ```ts
 * const store = createMemoryScheduleStore(); // or createFileScheduleStore("schedules.json")
 * const scheduler = createScheduler({ agents, store });
 * ```
 */
export interface ScheduleStore {
  load(): Promise<WakeRecord[]> | WakeRecord[];
  put(record: WakeRecord): Promise<void> | void;
  delete(id: string): Promise<void> | void;
}

/**
 * Whether a stored record is a schedule (not a late result's handle).
 *
 * @example
 * ```ts
 * const schedules = (await store.load()).filter(isScheduleRecord);
 * ```
 */
export function isScheduleRecord(record: WakeRecord): record is ScheduleRecord {
  return (record as { kind?: unknown }).kind !== "laterResult";
}

/**
 * A store in memory: schedules live as long as the store object (share one between a scheduler
 * and its replacement to see a restart in tests).
 *
 * @example
 * ```ts
 * const store = createMemoryScheduleStore();
 * ```
 */
export function createMemoryScheduleStore(): ScheduleStore & {
  readonly records: Map<string, WakeRecord>;
} {
  const records = new Map<string, WakeRecord>();
  return {
    records,
    load: () => [...records.values()].map((record) => structuredClone(record)),
    put: (record) => void records.set(record.id, structuredClone(record)),
    delete: (id) => void records.delete(id),
  };
}
