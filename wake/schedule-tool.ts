import type { Tool } from "../core/tool.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import { defineTool } from "../tools/define-tool.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import {
  describeSchedule as describe,
  scheduleToolParameters as parameters,
  type ScheduleToolReach,
  scheduleToolReachOf,
  scheduleToolReaches,
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
  /**
   * Which of the agent's schedules the tool lists and cancels. `"own"` (the default): only those
   * the agent made through the tool; the app's (`scheduler.schedule`, `wakes.schedule`) are, to
   * the model, schedules that do not exist, so text the agent read cannot cancel the app's daily
   * report. `"all"`: the app's too (they read `(made by the app)`). Either way `maxSchedules`
   * counts only the agent's own.
   */
  manage?: ScheduleToolReach;
  /** The zone a cron without one is read in (the user's). Default UTC. */
  timeZone?: string;
  /** Most schedules the agent may have made at once. Default 20. */
  maxSchedules?: number;
  /** Default `schedule_wake`. */
  name?: string;
}

/**
 * Creations an agent's schedule tools have begun but the scheduler has not listed yet, per
 * scheduler and agent: two calls of one turn run together, and each must count the other's
 * before either is stored, or both pass the limit's last place.
 */
const pendingCreations = new WeakMap<Scheduler, Map<string, number>>();

/**
 * Takes one of `agentId`'s places under `max` at once (no await between the count and the
 * reservation), or throws the error the model reads. Returns the release, called once the
 * scheduler has the schedule (or refused it).
 *
 * @example
 * ```ts
 * const release = reserveScheduleSlot(scheduler, "ada", 20);
 * try { await scheduler.schedule(input); } finally { release(); }
 * ```
 */
export function reserveScheduleSlot(scheduler: Scheduler, agentId: string, max: number): () => void {
  let pending = pendingCreations.get(scheduler);
  if (!pending) pendingCreations.set(scheduler, (pending = new Map()));
  const made = scheduler.list(agentId).filter((schedule) => schedule.createdBy === "agent").length;
  const reserved = pending.get(agentId) ?? 0;
  if (made + reserved >= max) {
    throw new ScheduleError(
      `you have ${made + reserved} wake-ups scheduled, the most allowed: cancel one first`,
    );
  }
  pending.set(agentId, reserved + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (pending.get(agentId) ?? 1) - 1;
    if (left > 0) pending.set(agentId, left);
    else pending.delete(agentId);
  };
}

/**
 * A built-in tool an app may give its agent so that it schedules its own wake-ups ("remind me
 * tomorrow at 9"): create (once `at` a time or `in_minutes`, or repeating `every_minutes` or on a
 * `cron`), list and cancel — only those it made itself (unless `manage: "all"`), at most
 * `maxSchedules` at once. Tell the agent the
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
  const manage = scheduleToolReachOf(options.manage);
  /** The agent's schedules the tool reaches. */
  const reachable = (id: string) =>
    scheduler!.list(id).filter((schedule) => scheduleToolReaches(schedule, manage));
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
        const mine = reachable(agentId);
        return mine.length === 0 ? "No wake-ups scheduled." : mine.map(describe).join("\n");
      }
      if (args.action === "cancel") {
        const id = args.id ?? "";
        // One the tool does not reach answers as an unknown id: the model learns nothing of it.
        const mine = reachable(agentId).some((schedule) => schedule.id === id);
        if (!mine || !(await scheduler.cancel(id))) throw new ScheduleError(`no wake-up "${id}" of yours`);
        return `Cancelled ${id}.`;
      }
      if (!args.message?.trim()) throw new ScheduleError("create needs the message you will wake to");
      const when = scheduleWhenOf(args, options.timeZone, Date.now());
      // Reserved before the first await: a call of the same turn sees this one counted.
      const release = reserveScheduleSlot(scheduler, agentId, maxSchedules);
      try {
        const schedule = await scheduler.schedule({
          ...when,
          agentId,
          message: args.message,
          createdBy: "agent",
          // The runs it wakes link to this call.
          traceparent: toolCallTraceparent(ctx.actor),
        });
        return `Scheduled: ${describe(schedule)}`;
      } finally {
        release();
      }
    },
  });
  return markWakeTool(tool, {
    kind: "schedule",
    maxSchedules,
    manage,
    ...(options.timeZone !== undefined && { timeZone: options.timeZone }),
  });
}
