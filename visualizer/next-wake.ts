import { sanitize } from "./sanitize.js";
import type { NextWake, PendingLater } from "./wire.js";

// The shapes are written out here, not imported: visualizer/ and wake/ stand side by side
// (docs/architecture.md), and a scheduler's `Schedule` and a later result's handle fit them.

/** The part of a schedule the page shows (a `Schedule` from `createScheduler()` fits it). */
export interface ScheduleView {
  readonly id: string;
  readonly when: { at: number } | { every: number } | { cron: string; timeZone?: string };
  readonly message: string;
  readonly createdBy: "app" | "agent";
  readonly paused: boolean;
  readonly nextAt?: number;
}

/** The part of a pending late result the page shows (a handle from `createLaterResults()` fits it). */
export interface LaterView {
  readonly id: string;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly startedAt: number;
  readonly deadline?: number;
}

/** What the visualizer needs of a scheduler: the schedules of one agent. */
export interface WakeSource {
  list(agentId: string): readonly ScheduleView[];
}

/** What the visualizer needs of `createLaterResults()`: the pending handles of one agent. */
export interface LaterSource {
  list(agentId: string): readonly LaterView[];
}

/** Pending late results a page lists (the oldest first); more are counted, not listed. */
const MAX_LATER_SHOWN = 20;

/**
 * The results `agentId` waits for from tools that answer later, as the page shows them (the
 * arguments left out: they can be large and hold anything), oldest first, at most 20.
 *
 * @example
 * ```ts
 * pendingLaterOf(laterResults, "ada"); // [{ handle: "later_x", toolName: "build", toolCallId: "c1", startedAt, deadline }]
 * ```
 */
export function pendingLaterOf(source: LaterSource, agentId: string): PendingLater[] {
  return [...source.list(agentId)]
    .sort((a, b) => a.startedAt - b.startedAt)
    .slice(0, MAX_LATER_SHOWN)
    .map((handle) => ({
      handle: handle.id,
      toolName: handle.toolName,
      toolCallId: handle.toolCallId,
      startedAt: handle.startedAt,
      ...(handle.deadline !== undefined && { deadline: handle.deadline }),
    }));
}

/** Longest wake-up text shown: the header says what the agent will wake to, not the whole of it. */
const MESSAGE_CHARS = 200;

/** A schedule's timing in words. */
function whenText(when: ScheduleView["when"]): string {
  if ("cron" in when) return `cron ${when.cron}${when.timeZone ? ` (${when.timeZone})` : ""}`;
  if ("every" in when) return `every ${when.every} ms`;
  return "once";
}

/**
 * The next time one of `agentId`'s schedules wakes it (paused ones do not), as the page shows it,
 * its message redacted and cut; `null` when none will.
 *
 * @example
 * ```ts
 * nextWakeOf(scheduler, "ada"); // { at: 1767254400000, scheduleId: "daily", when: "cron 0 9 * * * (Europe/Paris)", message: "Morning report", createdBy: "app" }
 * ```
 */
export function nextWakeOf(source: WakeSource, agentId: string): NextWake | null {
  let next: ScheduleView | undefined;
  for (const schedule of source.list(agentId)) {
    if (schedule.paused || schedule.nextAt === undefined) continue;
    if (!next || schedule.nextAt < next.nextAt!) next = schedule;
  }
  if (!next) return null;
  return {
    at: next.nextAt!,
    scheduleId: next.id,
    when: whenText(next.when),
    message: sanitize(next.message, { maxStringLength: MESSAGE_CHARS }) as string,
    createdBy: next.createdBy,
  };
}

/** Where the page learns what will wake an agent: schedules, and tools that answer later. */
export interface WakeSources {
  scheduler?: WakeSource;
  laterResults?: LaterSource;
}

/**
 * Sends `{ kind: "wake" }` whenever what will wake `agentId` changes (its next slot by schedule, the
 * late results it waits for): checked every `everyMs` (neither source has a change feed an app may
 * not already use) and when `check` is called (the server calls it after each run). The first check
 * sends at once. Returns `check` and `stop`.
 *
 * @example
 * ```ts
 * const wakes = followWakes({ scheduler, laterResults }, agent.id, broadcast);
 * agent.events$.subscribe((e) => e.type === "agent_end" && wakes.check());
 * ```
 */
export function followWakes(
  sources: WakeSources,
  agentId: string,
  send: (message: { kind: "wake"; t: number; next: NextWake | null; later?: PendingLater[] }) => void,
  everyMs = 1_000,
): { check(): void; stop(): void } {
  let last: string | undefined;
  const check = () => {
    let next: NextWake | null;
    let later: PendingLater[] | undefined;
    try {
      next = sources.scheduler ? nextWakeOf(sources.scheduler, agentId) : null;
      later = sources.laterResults && pendingLaterOf(sources.laterResults, agentId);
    } catch {
      return; // a source that failed to answer: the page keeps what it showed
    }
    const key = JSON.stringify([next, later]);
    if (key === last) return;
    last = key;
    send({ kind: "wake", t: Date.now(), next, ...(later && { later }) });
  };
  check();
  const timer = setInterval(check, everyMs);
  timer.unref?.();
  return { check, stop: () => clearInterval(timer) };
}
