// What a plan is for our agent: the list of steps the model keeps with the `update_plan` tool, each
// call the whole list with every step's status. Over ACP each call is a `plan` session update (the
// editor shows the plan and replaces it at each call), not a tool call.
import type { PlanEntry } from "@agentclientprotocol/sdk";
import { z } from "zod";
import { defineTool, type Tool } from "../tools/define-tool.js";

/**
 * The name of the plan tool, by which its calls are told apart from other tools'.
 *
 * @example
 * ```ts
 * if (event.type === "tool_execution_start" && event.toolName === PLAN_TOOL_NAME) showPlan(event.args);
 * ```
 */
export const PLAN_TOOL_NAME = "update_plan";

const entry = z.object({
  content: z.string().min(1).describe("What the step does, in a few words"),
  status: z.enum(["pending", "in_progress", "completed"]).describe("Where the step stands"),
  priority: z
    .enum(["high", "medium", "low"])
    .optional()
    .describe("How much the step matters (default medium)"),
});

const parameters = z.object({
  entries: z.array(entry).min(1).describe("Every step of the plan, in order, each with its current status"),
});

/**
 * The `update_plan` tool: the model writes down the steps of a larger task and, as it works, sends
 * the whole list again with each step's status. It changes nothing outside the conversation (read
 * only: never asked for approval). Served over ACP, each call is shown as the session's plan.
 *
 * @example
 * ```ts
 * const agent = createAgent({ provider, tools: [...codingTools({ cwd }), createPlanTool()] });
 * ```
 */
export function createPlanTool(): Tool<z.output<typeof parameters>> {
  return defineTool({
    name: PLAN_TOOL_NAME,
    description: [
      "Keeps the plan of a task with several steps: send every step, in order, with its status",
      "(pending, in_progress, completed). Call it when you start such a task and again whenever a step",
      "starts or ends; keep one step in progress at a time. Skip it for a task of one or two steps.",
    ].join(" "),
    parameters,
    readOnly: true,
    execute: ({ entries }) => {
      const done = entries.filter((e) => e.status === "completed").length;
      const current = entries.find((e) => e.status === "in_progress");
      return `Plan updated: ${done} of ${entries.length} steps completed${current ? `; in progress: ${current.content}` : ""}.`;
    },
  });
}

/**
 * The ACP plan entries of an `update_plan` call's arguments (priority `medium` where the model gave
 * none); `undefined` when the arguments are not a plan (the call fails, and no plan is shown).
 *
 * @example
 * ```ts
 * acpPlanEntries({ entries: [{ content: "write tests", status: "pending" }] });
 * // [{ content: "write tests", status: "pending", priority: "medium" }]
 * ```
 */
export function acpPlanEntries(args: unknown): PlanEntry[] | undefined {
  const parsed = parameters.safeParse(args);
  if (!parsed.success) return undefined;
  return parsed.data.entries.map((e) => ({
    content: e.content,
    status: e.status,
    priority: e.priority ?? "medium",
  }));
}
