import type { StoredWhen } from "./schedule-spec.js";

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
}

/**
 * Where schedules outlive the process. `load` is called once by `scheduler.start()`; `put` and
 * `delete` after each change, awaited before the change is reported done.
 *
 * @example
 * ```ts
 * const store = createMemoryScheduleStore(); // or createFileScheduleStore("schedules.json")
 * const scheduler = createScheduler({ agents, store });
 * ```
 */
export interface ScheduleStore {
  load(): Promise<ScheduleRecord[]> | ScheduleRecord[];
  put(record: ScheduleRecord): Promise<void> | void;
  delete(id: string): Promise<void> | void;
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
  readonly records: Map<string, ScheduleRecord>;
} {
  const records = new Map<string, ScheduleRecord>();
  return {
    records,
    load: () => [...records.values()].map((record) => structuredClone(record)),
    put: (record) => void records.set(record.id, structuredClone(record)),
    delete: (id) => void records.delete(id),
  };
}
