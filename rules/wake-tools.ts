// The tools that wake their own agent (a tool that answers later, the agent's schedule tool) say
// what they are here, beside the tool object: in process they run on the process's manager or
// scheduler, and a durable session (durable/) swaps their execution for one kept in Restate. A
// WeakMap rather than a field on the tool: the `Tool` contract stays as it is.
import { unstorableReason } from "../core/storable.js";
import type { Tool, ToolResult } from "../core/tool.js";
import type { ScheduleToolReach } from "./schedule-tool-logic.js";

/** What the work of a tool that answers later receives. */
export interface LaterWorkContext {
  /** The handle the call was answered with. */
  handle: string;
  /** Fires when the handle is cancelled, times out, is answered from outside, or the manager stops. */
  signal: AbortSignal;
  /**
   * The same for every run of this work (the handle): pass it to the services the work changes, so
   * work run again after a restart does not act twice.
   */
  idempotencyKey: string;
}

/**
 * The work a tool that answers later starts: resolve with the result (text or a `ToolResult`),
 * throw for a failure the model reads, or resolve with nothing when the result will come from
 * outside (`laterResults.complete(handle, result)`, or `wakes.deliverLaterResult` on Restate).
 */
export type LaterWork<TArgs = unknown> = (
  args: TArgs,
  ctx: LaterWorkContext,
) => Promise<string | ToolResult | void> | string | ToolResult | void;

/** A tool that answers later (`defineLaterTool`): its work and how long the result may take. */
export interface LaterToolSpec {
  kind: "later";
  work: LaterWork;
  /** Ms before the model is told the work timed out; absent: the manager's default; `Infinity`: never. */
  timeoutMs?: number;
}

/** The agent's own schedule tool (`createScheduleTool`). */
export interface ScheduleToolSpec {
  kind: "schedule";
  /** The zone a cron without one is read in. */
  timeZone?: string;
  /** Most schedules the agent may have made at once. */
  maxSchedules: number;
  /** Which of the session's schedules it lists and cancels: the agent's own, or the app's too. */
  manage: ScheduleToolReach;
}

/** What a tool that wakes its own agent is. */
export type WakeToolSpec = LaterToolSpec | ScheduleToolSpec;

const specs = new WeakMap<Tool, WakeToolSpec>();

/**
 * Says what `tool` is, for a runtime that runs it its own way (a durable session).
 *
 * @example
 * ```ts
 * markWakeTool(tool, { kind: "later", work: definition.run, timeoutMs: 60_000 });
 * ```
 */
export function markWakeTool<T extends Tool>(tool: T, spec: WakeToolSpec): T {
  specs.set(tool, spec);
  return tool;
}

/**
 * What `tool` is, when it wakes its own agent (`undefined` for any other tool).
 *
 * @example
 * ```ts
 * if (wakeToolOf(tool)?.kind === "later") ...
 * ```
 */
export function wakeToolOf(tool: Tool): WakeToolSpec | undefined {
  return specs.get(tool);
}

/**
 * A late result as its work or a caller gave it, checked: text, or a `ToolResult` with its
 * content list that JSON can hold. Throws a `TypeError` saying what a result is.
 *
 * @example
 * ```ts
 * laterToolResult("intro.mp4"); // { content: [{ type: "text", text: "intro.mp4" }] }
 * ```
 */
export function laterToolResult(value: unknown): ToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  const result = value as ToolResult | null;
  if (
    result === null ||
    typeof result !== "object" ||
    !Array.isArray(result.content) ||
    !result.content.every((part) => part?.type === "text" || part?.type === "image")
  ) {
    throw new TypeError('a late result is text or a ToolResult ({ content: [{ type: "text", text }] })');
  }
  // It is stored (a durable session journals it; a process keeps it with its handle) as JSON.
  const problem = unstorableReason(result);
  if (problem !== undefined) throw new TypeError(`a late result must be JSON: ${problem}`);
  return result;
}
