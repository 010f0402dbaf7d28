import type { Tool } from "../core/tool.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import { defineTool } from "../tools/define-tool.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import {
  describeSchedule as describe,
  scheduleToolParameters as parameters,
  scheduleWhenOf,
} from "../rules/schedule-tool-logic.js";
import { markWakeTool } from "../rules/wake-tools.js";
import type { Scheduler } from "./scheduler.js";

/** Options of {@link createScheduleTool}. */
export interface ScheduleToolOptions {
  /**
   * The process's scheduler. Leave it and `agentId` out for a tool only a durable session runs
   * (the session's schedules are kept in Restate, in its `SessionWakes` object).
   */
  scheduler?: Scheduler;
  /** The agent the tool belongs to: it schedules, lists and cancels only this agent's wake-ups. Given with `scheduler`. */
  agentId?: string;
  /** The zone a cron without one is read in (the user's). Default UTC. */
  timeZone?: string;
  /** Most schedules the agent may have made at once. Default 20. */
  maxSchedules?: number;
  /** Default `schedule_wake`. */
  name?: string;
}

/**
 * A built-in tool an app may give its agent so that it schedules its own wake-ups ("remind me
 * tomorrow at 9"): create (once `at` a time or `in_minutes`, or repeating `every_minutes` or on a
 * `cron`), list and cancel — only its own, at most `maxSchedules` at once. Tell the agent the
 * current time and the user's zone in its system prompt; a bad time is an error result it reads.
 * In a durable session (`createAgentServices`), the tool schedules through the session's own
 * `SessionWakes` object, whatever `scheduler` says (docs/wake.md).
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
export function createScheduleTool(options: ScheduleToolOptions = {}): Tool {
  const { scheduler, agentId } = options;
  const maxSchedules = options.maxSchedules ?? 20;
  if ((scheduler === undefined) !== (agentId === undefined)) {
    throw new TypeError(
      "createScheduleTool: give both scheduler and agentId (in process), or neither (a durable session's tool)",
    );
  }
  const tool = defineTool({
    name: options.name ?? "schedule_wake",
    description:
      "Schedules a time for you to wake up and be told a message (a reminder, a check to do later), " +
      "lists your scheduled wake-ups, or cancels one.",
    parameters: parameters(),
    async execute(args, ctx) {
      if (!scheduler || agentId === undefined) {
        throw new ScheduleError(
          "this schedule tool works only in a durable session, or with a scheduler (createScheduleTool's scheduler and agentId)",
        );
      }
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
        ...scheduleWhenOf(args, options.timeZone, Date.now()),
        agentId,
        message: args.message,
        createdBy: "agent",
        // The runs it wakes link to this call.
        traceparent: toolCallTraceparent(ctx.actor),
      });
      return `Scheduled: ${describe(schedule)}`;
    },
  });
  return markWakeTool(tool, {
    kind: "schedule",
    maxSchedules,
    ...(options.timeZone !== undefined && { timeZone: options.timeZone }),
  });
}
