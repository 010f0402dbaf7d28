// The agent's own schedule tool as plain rules: its parameters, how its arguments become a
// schedule's time, and how a schedule reads to the model. One place for the tool in process
// (wake/schedule-tool.ts) and in a durable session (durable/wake-tools.ts).
import * as z from "zod";
import { lazy } from "../core/lazy.js";
import type { ScheduleRecord } from "./schedule-record.js";
import { ScheduleError, type ScheduleWhen } from "./schedule-spec.js";

/** The schedule tool's parameters. */
export const scheduleToolParameters = /* @__PURE__ */ lazy(() =>
  z.object({
    action: z.enum(["create", "list", "cancel"]),
    message: z
      .string()
      .optional()
      .describe("create: what you will be told when you wake (write it to your future self)"),
    at: z
      .string()
      .optional()
      .describe("create, once: an ISO 8601 time with its offset, e.g. 2026-01-06T09:00:00+01:00"),
    in_minutes: z.number().optional().describe("create, once: minutes from now"),
    every_minutes: z.number().optional().describe("create, repeating: the interval in minutes (at least 1)"),
    cron: z.string().optional().describe('create, repeating: a cron pattern, e.g. "0 9 * * 1-5"'),
    time_zone: z.string().optional().describe("create with cron: an IANA zone such as Europe/Paris"),
    id: z.string().optional().describe("cancel: the schedule's id (from create or list)"),
  }),
);

/**
 * Which of its agent's schedules the schedule tool lists and cancels: `"own"` (the default) only
 * those the agent made through the tool, so an agent that read an injected instruction cannot
 * cancel the app's daily report; `"all"` the app's too, when the app means the agent to manage them.
 */
export type ScheduleToolReach = "own" | "all";

/**
 * Whether the schedule tool of reach `reach` may see and cancel `schedule`. A schedule outside
 * it is, to the model, a schedule that does not exist (the same answer as an unknown id).
 *
 * @example
 * ```ts
 * scheduleToolReaches({ createdBy: "app" }, "own"); // false
 * scheduleToolReaches({ createdBy: "app" }, "all"); // true
 * ```
 */
export function scheduleToolReaches(
  schedule: Pick<ScheduleRecord, "createdBy">,
  reach: ScheduleToolReach,
): boolean {
  return reach === "all" || schedule.createdBy === "agent";
}

/**
 * The `manage` option of the schedule tool, checked: `"own"` when absent, a `TypeError` for
 * anything but `"own"` or `"all"` (a typo must not widen nor silently narrow what the agent reaches).
 *
 * @example
 * ```ts
 * scheduleToolReachOf(undefined); // "own"
 * ```
 */
export function scheduleToolReachOf(manage: unknown): ScheduleToolReach {
  if (manage === undefined) return "own";
  if (manage === "own" || manage === "all") return manage;
  throw new TypeError(`createScheduleTool: manage must be "own" or "all", got ${JSON.stringify(manage)}`);
}

/** The schedule tool's arguments, validated. */
export type ScheduleToolArgs = z.output<ReturnType<typeof scheduleToolParameters>>;

/**
 * The time of a schedule the agent asks for: exactly one of `at` (with its offset), `in_minutes`,
 * `every_minutes` (at least 1) or `cron`; a {@link ScheduleError} the model reads otherwise.
 *
 * @example
 * ```ts
 * scheduleWhenOf({ action: "create", in_minutes: 5 }, "Europe/Paris", Date.now()); // { at: now + 300_000 }
 * ```
 */
export function scheduleWhenOf(
  args: ScheduleToolArgs,
  timeZone: string | undefined,
  now: number,
): ScheduleWhen {
  const given = (["at", "in_minutes", "every_minutes", "cron"] as const).filter(
    (key) => args[key] !== undefined,
  );
  if (given.length !== 1) {
    throw new ScheduleError(
      `create needs exactly one of at, in_minutes, every_minutes or cron (got ${given.join(", ") || "none"})`,
    );
  }
  if (args.at !== undefined) {
    // A time without an offset would be read in the server's zone: the model must say which.
    if (!/(?:Z|[+-]\d\d:?\d\d)$/i.test(args.at))
      throw new ScheduleError("at needs its offset, e.g. 2026-01-06T09:00:00+01:00");
    return { at: args.at };
  }
  if (args.in_minutes !== undefined) return { at: now + args.in_minutes * 60_000 };
  if (args.every_minutes !== undefined) {
    if (!(args.every_minutes >= 1)) throw new ScheduleError("every_minutes must be at least 1");
    return { every: args.every_minutes * 60_000 };
  }
  return { cron: args.cron!, timeZone: args.time_zone ?? timeZone };
}

/**
 * One schedule as the model reads it: `sch_1: every 60 min, next 2026-…: "Check the build"`. A
 * schedule the app made says so (`(made by the app)`); only a tool with `manage: "all"` lists one.
 *
 * @example
 * ```ts
 * describeSchedule(record); // 'sch_1: once, next 2026-01-06T08:00:00.000Z: "Call Ada"'
 * ```
 */
export function describeSchedule(
  schedule: Pick<ScheduleRecord, "id" | "when" | "nextAt" | "paused" | "message"> &
    Partial<Pick<ScheduleRecord, "createdBy">>,
): string {
  const when = schedule.when;
  const how =
    "at" in when
      ? "once"
      : "every" in when
        ? `every ${when.every / 60_000} min`
        : `cron "${when.cron}"${when.timeZone ? ` in ${when.timeZone}` : ""}`;
  const next = schedule.nextAt === undefined ? "" : `, next ${new Date(schedule.nextAt).toISOString()}`;
  const maker = schedule.createdBy === "app" ? " (made by the app)" : "";
  return `${schedule.id}: ${how}${next}${schedule.paused ? " (paused)" : ""}${maker}: "${schedule.message}"`;
}
