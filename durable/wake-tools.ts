// The tools of a durable run that wake their own session (a tool that answers later, the agent's
// schedule tool), run the durable way: what such a call does to the session's `SessionWakes`
// object is decided inside the call's journaled step (its handle, its schedule's id and time) and
// carried in the step's recorded value, then sent to the object from the run, after the step. A
// replay reads the same value and finds the call sent already; a step cut off by a crash runs again
// and decides afresh, and what it decided first was never sent. So each call acts once.
import * as restate from "@restatedev/restate-sdk";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import type { AgentMessage } from "../core/messages.js";
import type { Tool, ToolContext, ToolResult } from "../core/tool.js";
import type { LaterResultRecord } from "../rules/later-record.js";
import { startedText } from "../rules/later-texts.js";
import { type NewSchedule, scheduleRecordOf } from "../rules/schedule-record.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import { describeSchedule, type ScheduleToolArgs, scheduleWhenOf } from "../rules/schedule-tool-logic.js";
import { type LaterToolSpec, type ScheduleToolSpec, wakeToolOf } from "../rules/wake-tools.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import type { RestatePump } from "./restate-pump.js";
import type { DurableSchedule } from "./session-wakes.js";

/** A later tool's timeout in a durable session when neither the tool nor anything else sets one. */
export const DEFAULT_LATER_TIMEOUT_MS = 3_600_000;

/** The key of a step's recorded value that carries what the call does to `SessionWakes`. */
const PLAN = "wakePlan";

/** What one call does to the session's `SessionWakes` object, decided in its step. */
type WakePlan =
  | { kind: "laterBegin"; record: LaterResultRecord }
  | { kind: "schedule"; input: NewSchedule & { traceparent?: string } }
  | { kind: "cancelSchedule"; id: string };

/** The wake tools of one durable run. */
export interface RunWakeTools {
  /** The agent's tools, those that wake their session swapped for their durable form. */
  readonly tools: Tool[] | undefined;
  /**
   * One tool call: `step` journals `run` (the run's `toolCall`); a wake tool's call then does what
   * its step decided.
   */
  toolCall(
    toolCallId: string,
    run: () => Promise<ToolResult>,
    step: (run: () => Promise<ToolResult>) => Promise<ToolResult>,
  ): Promise<ToolResult>;
}

/**
 * The wake tools of one durable run (`AgentSession.prompt`): tools made with `defineLaterTool` or
 * `createScheduleTool` keep their handles and schedules in the session's `SessionWakes` object
 * (`wakes`), whatever manager or scheduler they were given for use in process.
 *
 * @example
 * ```ts
 * const wakeTools = createRunWakeTools(ctx, pump, { wakes: "SessionWakes", tools: base.tools, messages: () => agent.messages });
 * const agent = createJournaledAgent({ ...base, tools: wakeTools.tools }, { ...journal, toolCall: (id, run) => wakeTools.toolCall(id, run, (r) => journal.toolCall(id, r)) });
 * ```
 */
export function createRunWakeTools(
  ctx: ObjectContext,
  pump: RestatePump,
  options: { wakes: string; tools: Tool[] | undefined; messages: () => readonly AgentMessage[] },
): RunWakeTools {
  const specs = new Map<string, LaterToolSpec | ScheduleToolSpec>();
  for (const tool of options.tools ?? []) {
    const spec = wakeToolOf(tool);
    if (spec) specs.set(tool.name, spec);
  }
  if (specs.size === 0) return { tools: options.tools, toolCall: (_id, run, step) => step(run) };

  const sessionId = ctx.key;
  /** What each call's step decided, taken into its recorded value as the step ends. */
  const plans = new Map<string, WakePlan>();
  /** The session's schedules as read before a schedule tool's step. */
  const read = new Map<string, DurableSchedule[]>();
  const call = <O>(method: string, parameter: unknown) =>
    pump.track(
      ctx.genericCall<unknown, O>({
        service: options.wakes,
        method,
        key: sessionId,
        parameter,
        inputSerde: restate.serde.json,
        outputSerde: restate.serde.json,
      }),
    );

  function beginLater(tool: Tool, spec: LaterToolSpec, args: unknown, call: ToolContext) {
    const timeoutMs = spec.timeoutMs ?? DEFAULT_LATER_TIMEOUT_MS;
    if (!(timeoutMs > 0)) throw new Error(`timeoutMs must be a positive number, got ${timeoutMs}`);
    const now = Date.now();
    const traceparent = toolCallTraceparent(call.actor);
    const record: LaterResultRecord = {
      kind: "laterResult",
      id: `later_${crypto.randomUUID()}`,
      agentId: sessionId,
      toolName: tool.name,
      toolCallId: call.toolCallId,
      args,
      startedAt: now,
      ...(Number.isFinite(timeoutMs) && { deadline: now + timeoutMs }),
      phase: "running",
      ...(traceparent !== undefined && { traceparent }),
    };
    plans.set(call.toolCallId, { kind: "laterBegin", record });
    return {
      content: [{ type: "text" as const, text: startedText(record) }],
      details: {
        status: "started" as const,
        handle: record.id,
        ...(record.deadline !== undefined && { deadline: record.deadline }),
      },
    };
  }

  function scheduleCall(spec: ScheduleToolSpec, args: ScheduleToolArgs, call: ToolContext): string {
    const mine = read.get(call.toolCallId) ?? [];
    if (args.action === "list") {
      return mine.length === 0 ? "No wake-ups scheduled." : mine.map(describeSchedule).join("\n");
    }
    if (args.action === "cancel") {
      const id = args.id ?? "";
      if (!mine.some((schedule) => schedule.id === id))
        throw new ScheduleError(`no wake-up "${id}" of yours`);
      plans.set(call.toolCallId, { kind: "cancelSchedule", id });
      return `Cancelled ${id}.`;
    }
    if (!args.message?.trim()) throw new ScheduleError("create needs the message you will wake to");
    const made = mine.filter((schedule) => schedule.createdBy === "agent").length;
    if (made >= spec.maxSchedules) {
      throw new ScheduleError(`you have ${made} wake-ups scheduled, the most allowed: cancel one first`);
    }
    const now = Date.now();
    const when = scheduleWhenOf(args, spec.timeZone, now);
    const id = `sch_${crypto.randomUUID()}`;
    const traceparent = toolCallTraceparent(call.actor);
    const record = scheduleRecordOf(
      { ...when, message: args.message, createdBy: "agent" },
      { agentId: sessionId, id, now },
    );
    // The first slot as computed here, so the one the model reads is the one that fires.
    const input: NewSchedule & { traceparent?: string } = {
      ...("every" in record.when ? { every: record.when.every, startAt: record.when.startAt } : when),
      message: args.message,
      createdBy: "agent",
      id,
      ...(traceparent !== undefined && { traceparent }),
    };
    plans.set(call.toolCallId, { kind: "schedule", input });
    return `Scheduled: ${describeSchedule(record)}`;
  }

  const tools = options.tools!.map((tool): Tool => {
    const spec = specs.get(tool.name);
    if (!spec) return tool;
    return {
      ...tool,
      execute: (args: unknown, call: ToolContext) =>
        spec.kind === "later"
          ? beginLater(tool, spec, args, call)
          : scheduleCall(spec, args as ScheduleToolArgs, call),
    };
  });

  /** Sends the object what the call's step decided; a refusal is the call's error result. */
  async function carryOut(plan: WakePlan, result: ToolResult): Promise<ToolResult> {
    try {
      if (plan.kind === "laterBegin") {
        // One way: the object keeps the handle, arms its timeout and starts its work.
        ctx.genericSend({
          service: options.wakes,
          method: "laterBegin",
          key: sessionId,
          parameter: plan.record,
          inputSerde: restate.serde.json,
        });
      } else if (plan.kind === "schedule") {
        await call<DurableSchedule>("schedule", plan.input);
      } else if (!(await call<boolean>("cancel", { id: plan.id }))) {
        return { content: [{ type: "text", text: `no wake-up "${plan.id}" of yours` }], isError: true };
      }
      return result;
    } catch (error) {
      if (!(error instanceof TerminalError)) throw error;
      return { content: [{ type: "text", text: error.message }], isError: true };
    }
  }

  /** The name of the tool a call of this run's latest assistant messages calls. */
  const toolNameOf = (toolCallId: string): string | undefined => {
    const messages = options.messages();
    for (let i = messages.length - 1; i >= 0; i--) {
      const message = messages[i]!;
      if (message.role !== "assistant") continue;
      const found = message.content.find((part) => part.type === "toolCall" && part.id === toolCallId);
      if (found?.type === "toolCall") return found.name;
    }
    return undefined;
  };

  return {
    tools,
    async toolCall(toolCallId, run, step) {
      const name = toolNameOf(toolCallId);
      const spec = name === undefined ? undefined : specs.get(name);
      if (!spec) return step(run);
      // The schedule tool reads the session's schedules first (journaled: a replay reads the same).
      if (spec.kind === "schedule") read.set(toolCallId, await call<DurableSchedule[]>("list", null));
      const recorded = (await step(async () => {
        const result = await run();
        const plan = plans.get(toolCallId);
        plans.delete(toolCallId);
        return plan ? { ...result, [PLAN]: plan } : result;
      })) as ToolResult & { [PLAN]?: WakePlan };
      read.delete(toolCallId);
      const { [PLAN]: plan, ...result } = recorded;
      return plan ? carryOut(plan, result) : result;
    },
  };
}
