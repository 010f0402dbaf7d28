import type { Agent } from "../agent/agent.js";
import { type WakeDelivery, deliverWake } from "./deliver-wake.js";
import { dueSlots } from "../rules/due-slots.js";
import { slotMessageId } from "../rules/wake-message.js";
import { ScheduleError, slotAfter, slotAtOrAfter } from "../rules/schedule-spec.js";
import { type NewSchedule, scheduleRecordOf } from "../rules/schedule-record.js";
import {
  type MissedRunPolicy,
  type ScheduleRecord,
  type ScheduleStore,
  createMemoryScheduleStore,
  isScheduleRecord,
} from "./schedule-store.js";
import { createSlotQueue } from "./slot-queue.js";
import { activeTraceparent } from "../telemetry/wake-cause.js";

/** Finds an agent by id: a `Map<string, Agent>` is one; so is a function of a store that makes agents on demand. */
export interface AgentDirectory {
  get(agentId: string): Agent | undefined | Promise<Agent | undefined>;
}

/** A schedule as `scheduler.list()` shows it. */
export type Schedule = Readonly<ScheduleRecord>;

/** What `scheduler.schedule()` takes: when, the agent, and the message it wakes to. */
export type ScheduleInput = NewSchedule & {
  agentId: string;
  /**
   * The span that made the schedule (W3C `traceparent`): every run a slot wakes links to it.
   * Default: the span active when `schedule` is called.
   */
  traceparent?: string;
};

/** One slot the scheduler handled: delivered, a duplicate of one the agent already had, or skipped by the missed-run policy. */
export interface WakeReport {
  schedule: Schedule;
  /** The slot (for `skipped`: the latest of them). */
  slot: number;
  delivery: WakeDelivery | "skipped";
  /** For `skipped`: how many slots the missed-run policy did not run. */
  count?: number;
}

/** Options of {@link createScheduler}. */
export interface SchedulerOptions {
  /** Where the scheduler finds the agent a slot wakes. */
  agents: AgentDirectory;
  /** Where schedules outlive the process. Default: in memory. */
  store?: ScheduleStore;
  /** Default missed-run policy. Default `once`. */
  missed?: MissedRunPolicy;
  /** A slot fired later than this after its time counts as missed (the process was down). Default 60 000 ms. */
  missedAfterMs?: number;
  /** Most slots one schedule runs at once under the `each` policy (the latest ones). Default 100. */
  maxMissedRuns?: number;
  /** Delivery failures: an agent the directory no longer knows (its schedule is cancelled), a run that could not start. */
  onError?: (error: Error, schedule: Schedule) => void;
  /** Every slot handled, after the store recorded it. */
  onWake?: (report: WakeReport) => void;
}

/**
 * The one scheduler of a process: every schedule of every agent, with a single timer for the
 * earliest slot. A hibernated agent holds no timer; the scheduler wakes it through `agents`.
 */
export interface Scheduler {
  /**
   * Loads the store, runs missed slots by their policy, and arms the timer. Call once, before
   * `schedule`; again after `stop()` to arm the timer again (slots that passed meanwhile follow
   * their missed-run policy).
   */
  start(): Promise<void>;
  /** Makes a schedule; throws {@link ScheduleError} for a cron that never fires, a time in the past, an unknown agent. */
  schedule(input: ScheduleInput): Promise<Schedule>;
  /** Every schedule, or one agent's. */
  list(agentId?: string): Schedule[];
  /** The next time `agentId` wakes by schedule, if any (ms since the epoch). */
  nextWake(agentId: string): number | undefined;
  /** Stops a schedule firing until `resume`; slots that pass meanwhile are not run. */
  pause(id: string): Promise<Schedule>;
  /** Fires again from the next slot (an `at` already past fires under its missed-run policy). */
  resume(id: string): Promise<Schedule>;
  /** Removes a schedule; `false` when there was none with that id. */
  cancel(id: string): Promise<boolean>;
  /** Clears the timer (schedules stay in the store, and in this scheduler, for the next `start`). */
  stop(): void;
}

/** Node's timers take at most 2^31 − 1 ms; a later slot is reached in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Creates the process's scheduler. Its timer is unref'd: it never keeps a process alive on its
 * own. Slots move on in the store only after their message reached the agent, and each slot's
 * message has an id of its own, so a slot re-run after a crash is a no-op for an agent that had it.
 *
 * @example
 * ```ts
 * const agents = new Map([["ada", createAgent({ provider, hibernate: "whenIdle" })]]);
 * const scheduler = createScheduler({ agents, store: createFileScheduleStore("schedules.json") });
 * await scheduler.start();
 * await scheduler.schedule({ agentId: "ada", cron: "0 9 * * 1-5", timeZone: "Europe/Paris", message: "Morning report" });
 * ```
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  checkSchedulerOptions(options);
  const store = options.store ?? createMemoryScheduleStore();
  const missedAfterMs = options.missedAfterMs ?? 60_000;
  const maxMissedRuns = options.maxMissedRuns ?? 100;
  const records = new Map<string, ScheduleRecord>();
  const queue = createSlotQueue();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timerAt: number | undefined;
  let started = false;
  let stopped = false;
  let firing = false;
  /** The store's first load (shared by concurrent `start` calls). */
  let loading: Promise<void> | undefined;
  /** Ids of schedules being stored: a second `schedule` with one is refused, as for a stored one. */
  const creating = new Set<string>();

  /**
   * Tells the app's `onError`. A callback that throws is not the scheduler's end: it runs on a
   * timer, where a throw would be an unhandled rejection, and the slots after it must still fire.
   */
  const reportError = (error: unknown, record: ScheduleRecord) => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)), record);
    } catch {
      // The app's own error handler failed: nothing is left to tell.
    }
  };
  const isLive = (entry: { at: number; id: string }) => {
    const record = records.get(entry.id);
    return record !== undefined && !record.paused && record.nextAt === entry.at;
  };
  const nextLive = () => {
    while (queue.size > 0 && !isLive(queue.peek()!)) queue.pop();
    return queue.peek();
  };
  const enqueue = (record: ScheduleRecord) => {
    if (record.nextAt !== undefined && !record.paused) queue.push({ at: record.nextAt, id: record.id });
  };

  function arm(): void {
    if (stopped || !started || firing) return;
    const next = nextLive();
    if (next?.at === timerAt && timer !== undefined) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = timerAt = undefined;
    if (!next) return;
    timerAt = next.at;
    timer = setTimeout(
      () => {
        timer = timerAt = undefined;
        void fireDue();
      },
      Math.min(Math.max(0, next.at - Date.now()), MAX_TIMER_MS),
    );
    timer.unref?.();
  }

  async function fireDue(): Promise<void> {
    if (firing || stopped) return;
    firing = true;
    try {
      for (let next = nextLive(); next && next.at <= Date.now(); next = nextLive()) {
        queue.pop();
        const record = records.get(next.id)!;
        try {
          await fireRecord(record);
        } catch (error) {
          // The store refused the slot's write: the slot stays due in the store and runs again at
          // the next start (a no-op for an agent that had it); here it waits for the next slot.
          reportError(error, record);
          // The slot ran: its next slot is the one after the slots it stood for (a missed-run
          // policy's), not the one after its first, which would run and fail once per missed slot.
          const moved = record.nextAt !== undefined && record.nextAt > next.at;
          let following: number | undefined;
          try {
            following = moved ? record.nextAt : slotAfter(record.when, next.at);
          } catch (unreadable) {
            reportError(unreadable, record); // a record edited by hand into nonsense: it waits for the next start
          }
          if (records.get(record.id) === record && following !== undefined) {
            record.nextAt = following;
            enqueue(record);
          }
        }
      }
    } finally {
      firing = false;
      arm();
    }
  }

  async function fireRecord(record: ScheduleRecord): Promise<void> {
    const now = Date.now();
    const { fire, skipped, nextAt } = dueSlots(record, now, { missedAfterMs, maxMissedRuns });
    let agent: Agent | undefined;
    try {
      agent = await options.agents.get(record.agentId);
    } catch (error) {
      agent = undefined;
      reportError(error, record);
    }
    if (!agent) {
      records.delete(record.id);
      await store.delete(record.id);
      reportError(
        new ScheduleError(`schedule "${record.id}": no agent "${record.agentId}"; the schedule is cancelled`),
        record,
      );
      return;
    }
    const reports: WakeReport[] =
      skipped.count > 0
        ? [{ schedule: record, slot: skipped.last!, delivery: "skipped", count: skipped.count }]
        : [];
    for (const slot of fire) {
      let delivery: WakeDelivery;
      try {
        delivery = deliverWake(
          agent,
          {
            id: slotMessageId(record.id, slot),
            text: record.message,
            source: "schedule",
            queue: record.as,
            cause: { id: record.id, traceparent: record.traceparent },
          },
          (error) => reportError(error, record),
        );
      } catch (error) {
        // A stopped agent, or its input filters, refuse: the slot counts as run (it is not retried
        // for ever), and the error goes to the scheduler's onError.
        reportError(error, record);
        delivery = "delivered";
      }
      reports.push({ schedule: record, slot, delivery });
    }
    if (records.get(record.id) !== record) return; // cancelled meanwhile
    record.runs += fire.length;
    if (nextAt === undefined) {
      records.delete(record.id);
      await store.delete(record.id);
    } else {
      record.nextAt = nextAt;
      await store.put(record);
      enqueue(record);
    }
    for (const report of reports) {
      try {
        options.onWake?.({ ...report, schedule: { ...record } });
      } catch (error) {
        reportError(error, record);
      }
    }
  }

  const found = (id: string) => {
    const record = records.get(id);
    if (!record) throw new ScheduleError(`no schedule "${id}"`);
    return record;
  };

  return {
    async start() {
      if (started && !stopped) return;
      // After stop(): the schedules are held here, up to date; only the timer was cleared.
      stopped = false;
      loading ??= (async () => {
        for (const record of await store.load()) {
          if (!isScheduleRecord(record)) continue; // a late result's handle: createLaterResults' own
          records.set(record.id, record);
          enqueue(record);
        }
      })();
      try {
        await loading;
      } catch (error) {
        loading = undefined; // a store that failed to load: the next start tries again
        throw error;
      }
      started = true;
      await fireDue();
    },

    async schedule(input) {
      if (!started) throw new ScheduleError("call scheduler.start() before scheduling");
      const id = input?.id ?? `sch_${crypto.randomUUID()}`;
      if (records.has(id) || creating.has(id)) throw new ScheduleError(`a schedule "${id}" exists already`);
      const record = scheduleRecordOf(input, {
        agentId: input?.agentId,
        id,
        now: Date.now(),
        missed: options.missed,
      });
      // Taken before the first await: two calls with one id make one schedule, not two in turn.
      creating.add(id);
      try {
        if (!(await options.agents.get(input.agentId)))
          throw new ScheduleError(`no agent "${input.agentId}"`);
        const traceparent = input.traceparent ?? activeTraceparent();
        if (traceparent !== undefined) record.traceparent = traceparent;
        await store.put(record);
      } finally {
        creating.delete(id);
      }
      records.set(id, record);
      enqueue(record);
      arm();
      return { ...record };
    },

    list(agentId) {
      const all = [...records.values()];
      return (agentId === undefined ? all : all.filter((record) => record.agentId === agentId)).map(
        (record) => ({
          ...record,
        }),
      );
    },

    nextWake(agentId) {
      let next: number | undefined;
      for (const record of records.values()) {
        if (record.agentId !== agentId || record.paused || record.nextAt === undefined) continue;
        if (next === undefined || record.nextAt < next) next = record.nextAt;
      }
      return next;
    },

    async pause(id) {
      const record = found(id);
      record.paused = true;
      await store.put(record);
      arm();
      return { ...record };
    },

    async resume(id) {
      const record = found(id);
      if (!record.paused) return { ...record };
      record.paused = false;
      if (!("at" in record.when)) record.nextAt = slotAtOrAfter(record.when, Date.now());
      await store.put(record);
      enqueue(record);
      if (record.nextAt !== undefined && record.nextAt <= Date.now()) void fireDue();
      else arm();
      return { ...record };
    },

    async cancel(id) {
      if (!records.delete(id)) return false;
      await store.delete(id);
      arm();
      return true;
    },

    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = timerAt = undefined;
    },
  };
}

/**
 * Refuses options that would make a scheduler that silently never fires (a negative
 * `missedAfterMs` counts every slot as missed) or fails at its first slot (no `agents`).
 *
 * @example
 * ```ts
 * checkSchedulerOptions({ agents, missedAfterMs: -1 }); // TypeError: missedAfterMs must be 0 or more …
 * ```
 */
export function checkSchedulerOptions(options: SchedulerOptions): void {
  if (typeof options?.agents?.get !== "function") {
    throw new TypeError(
      "createScheduler needs agents: a directory with get(agentId), e.g. a Map of your agents",
    );
  }
  const store = options.store as Partial<ScheduleStore> | undefined;
  if (
    store !== undefined &&
    (typeof store?.load !== "function" ||
      typeof store.put !== "function" ||
      typeof store.delete !== "function")
  ) {
    throw new TypeError(
      "store must have load(), put(record) and delete(id), e.g. createFileScheduleStore(path)",
    );
  }
  if (options.missed !== undefined && !["once", "skip", "each"].includes(options.missed)) {
    throw new TypeError(`missed must be "once", "skip" or "each", got ${JSON.stringify(options.missed)}`);
  }
  if (options.missedAfterMs !== undefined && !(options.missedAfterMs >= 0)) {
    throw new TypeError(`missedAfterMs must be 0 or more milliseconds, got ${String(options.missedAfterMs)}`);
  }
  if (
    options.maxMissedRuns !== undefined &&
    !(Number.isInteger(options.maxMissedRuns) && options.maxMissedRuns >= 1)
  ) {
    throw new TypeError(
      `maxMissedRuns must be a whole number of at least 1 (the skip policy runs none), got ${String(options.maxMissedRuns)}`,
    );
  }
}
