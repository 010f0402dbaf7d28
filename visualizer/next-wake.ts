import type { Schedule } from "../wake/scheduler.js";
import { sanitize } from "./sanitize.js";
import type { NextWake } from "./wire.js";

/** What the visualizer needs of a scheduler: the schedules of one agent. */
export interface WakeSource {
  list(agentId: string): readonly Schedule[];
}

/** Longest wake-up text shown: the header says what the agent will wake to, not the whole of it. */
const MESSAGE_CHARS = 200;

/** A schedule's timing in words. */
function whenText(when: Schedule["when"]): string {
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
  let next: Schedule | undefined;
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

/**
 * Sends `{ kind: "wake" }` whenever `agentId`'s next wake-up changes: checked every `everyMs` (the
 * scheduler has no change feed an app may not already use) and when `check` is called (the server
 * calls it after each run). The first check sends at once. Returns `check` and `stop`.
 *
 * @example
 * ```ts
 * const wakes = followWakes(scheduler, agent.id, broadcast);
 * agent.events$.subscribe((e) => e.type === "agent_end" && wakes.check());
 * ```
 */
export function followWakes(
  source: WakeSource,
  agentId: string,
  send: (message: { kind: "wake"; t: number; next: NextWake | null }) => void,
  everyMs = 1_000,
): { check(): void; stop(): void } {
  let last: string | undefined;
  const check = () => {
    let next: NextWake | null;
    try {
      next = nextWakeOf(source, agentId);
    } catch {
      return; // a scheduler that failed to answer: the page keeps what it showed
    }
    const key = JSON.stringify(next);
    if (key === last) return;
    last = key;
    send({ kind: "wake", t: Date.now(), next });
  };
  check();
  const timer = setInterval(check, everyMs);
  timer.unref?.();
  return { check, stop: () => clearInterval(timer) };
}
