import * as z from "zod";
import type { Tool } from "../core/tool.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import { defineTool } from "../tools/define-tool.js";
import { ScheduleError, type ScheduleWhen } from "../rules/schedule-spec.js";
import type { Schedule, Scheduler } from "./scheduler.js";

/** Options of {@link createScheduleTool}. */
export interface ScheduleToolOptions {
  scheduler: Scheduler;
  /** The agent the tool belongs to: it schedules, lists and cancels only this agent's wake-ups. */
  agentId: string;
  /** The zone a cron without one is read in (the user's). Default UTC. */
  timeZone?: string;
  /** Most schedules the agent may have made at once. Default 20. */
  maxSchedules?: number;
  /** Default `schedule_wake`. */
  name?: string;
}

const parameters = z.object({
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
});

/**
 * A built-in tool an app may give its agent so that it schedules its own wake-ups ("remind me
 * tomorrow at 9"): create (once `at` a time or `in_minutes`, or repeating `every_minutes` or on a
 * `cron`), list and cancel — only its own, at most `maxSchedules` at once. Tell the agent the
 * current time and the user's zone in its system prompt; a bad time is an error result it reads.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider,
 *   id: "ada",
 *   systemPrompt: `Now: ${new Date().toISOString()}. The user is in Europe/Paris.`,
 *   tools: [createScheduleTool({ scheduler, agentId: "ada", timeZone: "Europe/Paris" })],
 * });
 * ```
 */
export function createScheduleTool(options: ScheduleToolOptions): Tool {
  const { scheduler, agentId } = options;
  const maxSchedules = options.maxSchedules ?? 20;
  return defineTool({
    name: options.name ?? "schedule_wake",
    description:
      "Schedules a time for you to wake up and be told a message (a reminder, a check to do later), " +
      "lists your scheduled wake-ups, or cancels one.",
    parameters,
    async execute(args, ctx) {
      if (args.action === "list") {
        const mine = scheduler.list(agentId);
        return mine.length === 0 ? "No wake-ups scheduled." : mine.map(describe).join("\n");
      }
      if (args.action === "cancel") {
        const id = args.id ?? "";
        const mine = scheduler.list(agentId).some((schedule) => schedule.id === id);
        if (!mine || !(await scheduler.cancel(id))) throw new ScheduleError(`no wake-up "${id}" of yours`);
        return `Cancelled ${id}.`;
      }
      if (!args.message?.trim()) throw new ScheduleError("create needs the message you will wake to");
      const made = scheduler.list(agentId).filter((schedule) => schedule.createdBy === "agent").length;
      if (made >= maxSchedules) {
        throw new ScheduleError(`you have ${made} wake-ups scheduled, the most allowed: cancel one first`);
      }
      const schedule = await scheduler.schedule({
        ...whenOf(args, options.timeZone),
        agentId,
        message: args.message,
        createdBy: "agent",
        // The runs it wakes link to this call.
        traceparent: toolCallTraceparent(ctx.actor),
      });
      return `Scheduled: ${describe(schedule)}`;
    },
  });
}

function whenOf(args: z.output<typeof parameters>, timeZone: string | undefined): ScheduleWhen {
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
  if (args.in_minutes !== undefined) return { at: Date.now() + args.in_minutes * 60_000 };
  if (args.every_minutes !== undefined) {
    if (!(args.every_minutes >= 1)) throw new ScheduleError("every_minutes must be at least 1");
    return { every: args.every_minutes * 60_000 };
  }
  return { cron: args.cron!, timeZone: args.time_zone ?? timeZone };
}

function describe(schedule: Schedule): string {
  const when = schedule.when;
  const how =
    "at" in when
      ? "once"
      : "every" in when
        ? `every ${when.every / 60_000} min`
        : `cron "${when.cron}"${when.timeZone ? ` in ${when.timeZone}` : ""}`;
  const next = schedule.nextAt === undefined ? "" : `, next ${new Date(schedule.nextAt).toISOString()}`;
  return `${schedule.id}: ${how}${next}${schedule.paused ? " (paused)" : ""}: "${schedule.message}"`;
}
