// The tools of a durable run that wake their own session (a tool that answers later, the agent's
// schedule tool), run the durable way: what such a call does to the session's `SessionWakes`
// object is decided inside the call's journaled step (its handle, its schedule's id and time) and
// carried in the step's recorded value, then sent to the object from the run, after the step. A
// replay reads the same value and finds the call sent already; a step cut off by a crash runs again
// and decides afresh, and what it decided first was never sent. So each call acts once. The same
// holds for the calls of a sub-agent's tools, at any depth: each agent of the run has its own.
import * as restate from "@restatedev/restate-sdk";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import type { Tool, ToolContext, ToolResult } from "../core/tool.js";
import { startedText } from "../rules/later-texts.js";
import { scheduleRecordOf } from "../rules/schedule-record.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import {
  describeSchedule,
  type ScheduleToolArgs,
  scheduleToolReaches,
  scheduleWhenOf,
} from "../rules/schedule-tool-logic.js";
import { type LaterToolSpec, type ScheduleToolSpec, wakeToolOf } from "../rules/wake-tools.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import { PATH_SEPARATOR } from "../agent/nested-calls.js";
import type { RestatePump } from "./restate-pump.js";
import type { DurableLaterHandle } from "./later-handlers.js";
import type { DurableSchedule, DurableScheduleInput } from "./session-wakes.js";

/** A later tool's timeout in a durable session when neither the tool nor anything else sets one. */
export const DEFAULT_LATER_TIMEOUT_MS = 3_600_000;

/** The key of a step's recorded value that carries what the call does to `SessionWakes`. */
const PLAN = "wakePlan";

/** What one call does to the session's `SessionWakes` object, decided in its step. */
type WakePlan =
  | { kind: "laterBegin"; record: DurableLaterHandle }
  | { kind: "schedule"; input: DurableScheduleInput }
  // `all` only for a tool with `manage: "all"`: a plan recorded without it reaches the agent's own.
  | { kind: "cancelSchedule"; id: string; all?: true }
  | { kind: "listSchedules"; all?: true };

/** Where an agent of the run is: the sub-agent calls leading to it (none for the run's own). */
export interface WakeScope {
  /** The ids of the calls on the way, outermost first. */
  calls: readonly string[];
  /** The names of their sub-agent tools, outermost first: where `SessionWakes` finds a handle's work. */
  tools: readonly string[];
}

/** The wake tools of one agent of a durable run (the run's own, or a sub-agent's). */
export interface RunWakeTools {
  /** The agent's tools, those that wake their session swapped for their durable form. */
  tools(tools: readonly Tool[]): Tool[];
  /**
   * One tool call: `step` journals `run` (the journal's `toolCall`); a wake tool's call then does
   * what its step decided.
   */
  toolCall(
    toolCallId: string,
    run: () => Promise<ToolResult>,
    step: (run: () => Promise<ToolResult>) => Promise<ToolResult>,
  ): Promise<ToolResult>;
}

/**
 * The wake tools of one agent of a durable run (`AgentSession.prompt`): tools made with
 * `defineLaterTool` or `createScheduleTool` keep their handles and schedules in the session's
 * `SessionWakes` object (`wakes`), whatever manager or scheduler they were given for use in
 * process. Make one per agent (its journal's `tools` and `toolCall`): a sub-agent's calls are
 * told apart from its parent's by their scope.
 *
 * @example
 * ```ts
 * const wakeTools = createRunWakeTools(ctx, pump, { wakes: "SessionWakes", scope: { calls: [], tools: [] } });
 * const journal = { ...restateJournal, tools: wakeTools.tools, toolCall: (id, run) => wakeTools.toolCall(id, run, (r) => restateJournal.toolCall(id, r)) };
 * ```
 */
export function createRunWakeTools(
  ctx: ObjectContext,
  pump: RestatePump,
  options: { wakes: string; scope: WakeScope },
): RunWakeTools {
  const sessionId = ctx.key;
  const { scope } = options;
  /** What each call's step decided, taken into its recorded value as the step ends. */
  const plans = new Map<string, WakePlan>();
  let swapped = false;
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
    const record: DurableLaterHandle = {
      kind: "laterResult",
      id: `later_${crypto.randomUUID()}`,
      agentId: sessionId,
      toolName: tool.name,
      // A sub-agent's call by its path, as its approvals are named.
      toolCallId: [...scope.calls, call.toolCallId].join(PATH_SEPARATOR),
      args,
      startedAt: now,
      ...(Number.isFinite(timeoutMs) && { deadline: now + timeoutMs }),
      phase: "running",
      ...(traceparent !== undefined && { traceparent }),
      ...(scope.tools.length > 0 && { via: [...scope.tools] }),
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

  /**
   * Decides a schedule tool's call. What depends on the session's schedules (the list, whether
   * an id is the agent's, the limit) is answered by `SessionWakes` after the step, one call at a
   * time in its exclusive handlers: two calls of one turn never pass the limit together.
   */
  function scheduleCall(spec: ScheduleToolSpec, args: ScheduleToolArgs, call: ToolContext): string {
    const all = spec.manage === "all" ? { all: true as const } : {};
    if (args.action === "list") {
      plans.set(call.toolCallId, { kind: "listSchedules", ...all });
      return "";
    }
    if (args.action === "cancel") {
      const id = args.id ?? "";
      plans.set(call.toolCallId, { kind: "cancelSchedule", id, ...all });
      return `Cancelled ${id}.`;
    }
    if (!args.message?.trim()) throw new ScheduleError("create needs the message you will wake to");
    const now = Date.now();
    const when = scheduleWhenOf(args, spec.timeZone, now);
    const id = `sch_${crypto.randomUUID()}`;
    const traceparent = toolCallTraceparent(call.actor);
    const record = scheduleRecordOf(
      { ...when, message: args.message, createdBy: "agent" },
      { agentId: sessionId, id, now },
    );
    // The first slot as computed here, so the one the model reads is the one that fires.
    const input: DurableScheduleInput = {
      ...("every" in record.when ? { every: record.when.every, startAt: record.when.startAt } : when),
      message: args.message,
      createdBy: "agent",
      id,
      maxMadeByAgent: spec.maxSchedules,
      ...(traceparent !== undefined && { traceparent }),
    };
    plans.set(call.toolCallId, { kind: "schedule", input });
    return `Scheduled: ${describeSchedule(record)}`;
  }

  function tools(given: readonly Tool[]): Tool[] {
    return given.map((tool): Tool => {
      const spec = wakeToolOf(tool);
      if (!spec) return tool;
      swapped = true;
      return {
        ...tool,
        execute: (args: unknown, call: ToolContext) =>
          spec.kind === "later"
            ? beginLater(tool, spec, args, call)
            : scheduleCall(spec, args as ScheduleToolArgs, call),
      };
    });
  }

  const errorResult = (text: string): ToolResult => ({ content: [{ type: "text", text }], isError: true });

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
      } else if (plan.kind === "listSchedules") {
        const mine = (await call<DurableSchedule[]>("list", null)).filter((schedule) =>
          scheduleToolReaches(schedule, plan.all ? "all" : "own"),
        );
        const text = mine.length === 0 ? "No wake-ups scheduled." : mine.map(describeSchedule).join("\n");
        return { ...result, content: [{ type: "text", text }] };
      } else if (
        // Checked in the object's handler: one the tool does not reach answers as an unknown id.
        !(await call<boolean>("cancel", { id: plan.id, ...(!plan.all && { createdBy: "agent" }) }))
      ) {
        return errorResult(`no wake-up "${plan.id}" of yours`);
      }
      return result;
    } catch (error) {
      if (!(error instanceof TerminalError)) throw error;
      return errorResult(error.message);
    }
  }

  return {
    tools,
    async toolCall(toolCallId, run, step) {
      // An agent without wake tools journals its calls as they are.
      if (!swapped) return step(run);
      const recorded = (await step(async () => {
        const result = await run();
        const plan = plans.get(toolCallId);
        plans.delete(toolCallId);
        return plan ? { ...result, [PLAN]: plan } : result;
      })) as ToolResult & { [PLAN]?: WakePlan };
      const { [PLAN]: plan, ...result } = recorded;
      return plan ? carryOut(plan, result) : result;
    },
  };
}
