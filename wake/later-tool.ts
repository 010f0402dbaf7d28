import type * as z from "zod";
import type { Tool } from "../core/tool.js";
import { toolCallTraceparent } from "../telemetry/attach.js";
import { defineTool } from "../tools/define-tool.js";
import { checkLaterTimeout, LaterResultError, type LaterResults } from "./later-results.js";
import { startedText } from "../rules/later-texts.js";
import { type LaterWork, markWakeTool } from "../rules/wake-tools.js";

/** Options of {@link defineLaterTool}. */
export interface LaterToolDefinition<TSchema extends z.ZodType> {
  name: string;
  description: string;
  parameters: TSchema;
  /**
   * The process's manager ({@link createLaterResults}), started or to be started. Leave it and
   * `agentId` out for a tool only a durable session runs (its session keeps the handles in Restate).
   */
  later?: LaterResults;
  /** The agent the tool belongs to: the result wakes this agent. Given with `later`. */
  agentId?: string;
  /**
   * The work. Resolve with the result (text or a `ToolResult`), throw for a failure the model
   * reads, or resolve with nothing when the result comes from outside (`later.complete(handle, …)`).
   * Stop when `ctx.signal` fires (cancelled, timed out).
   */
  run: LaterWork<z.output<TSchema>>;
  /** How long the result may take before the model is told it timed out. Default: the manager's (one hour; a durable session's: one hour). `Infinity`: never. */
  timeoutMs?: number;
  /**
   * Work that was running when the process stopped runs again (same handle, same
   * `idempotencyKey`) when the tool is made in the new process. Default true: tools run at least
   * once. `false`: the handle waits for `later.complete` or its timeout.
   */
  rerunAfterRestart?: boolean;
  readOnly?: boolean;
  /** Calls wait for `agent.approve` before the work starts (as `defineTool`'s). */
  needsApproval?: boolean;
}

/** What the call's own result carries for the app (`details`). */
export interface LaterStarted {
  status: "started";
  handle: string;
  /** When the model is told it timed out (epoch ms), if ever. */
  deadline?: number;
}

/**
 * Defines a tool that answers later: a call starts the work and is answered at once with a handle
 * ("started in the background, the result will come in a message of its own"), so the model's
 * call is answered exactly once and the run goes on or ends. The result comes later as a follow-up
 * message (`source: "laterResult"`) that wakes the agent, hibernated or not, and after a restart.
 * In a durable session (`createAgentServices`) the handle, its timeout and its work are kept in
 * Restate instead of `later` (docs/wake.md).
 *
 * @example
 * ```ts
 * const render = defineLaterTool({
 *   later,
 *   agentId: "ada",
 *   name: "render_video",
 *   description: "Renders a scene to video (takes minutes; the result comes later)",
 *   parameters: z.object({ scene: z.string() }),
 *   timeoutMs: 30 * 60_000,
 *   run: async ({ scene }, { signal, idempotencyKey }) => renderFarm.render(scene, { signal, idempotencyKey }),
 * });
 * ```
 */
export function defineLaterTool<TSchema extends z.ZodType>(
  definition: LaterToolDefinition<TSchema>,
): Tool<z.output<TSchema>, LaterStarted> {
  const { later, agentId, name } = definition;
  if (typeof definition.run !== "function") {
    throw new TypeError(`defineLaterTool "${name}": run must be a function, got ${typeof definition.run}`);
  }
  checkLaterTimeout(definition.timeoutMs, `defineLaterTool "${name}"`);
  if ((later === undefined) !== (agentId === undefined)) {
    throw new TypeError(
      `defineLaterTool "${name}": give both later and agentId (in process), or neither (a durable session's tool)`,
    );
  }
  const tool = defineTool<TSchema, LaterStarted>({
    name,
    description: definition.description,
    parameters: definition.parameters,
    readOnly: definition.readOnly,
    ...(definition.needsApproval !== undefined && { needsApproval: definition.needsApproval }),
    async execute(args, ctx) {
      if (!later || agentId === undefined) {
        // A thrown error is the result the model reads.
        throw new LaterResultError(
          `${name} answers later only in a durable session, or with a late results manager ` +
            "(defineLaterTool's later and agentId): it was not started",
        );
      }
      const handle = await later.begin({
        agentId,
        toolName: name,
        toolCallId: ctx.toolCallId,
        args,
        timeoutMs: definition.timeoutMs,
        traceparent: toolCallTraceparent(ctx.actor),
      });
      return {
        content: [{ type: "text", text: startedText(handle) }],
        details: {
          status: "started",
          handle: handle.id,
          ...(handle.deadline !== undefined && { deadline: handle.deadline }),
        },
      };
    },
  });
  later?.register(agentId!, name, definition.run as LaterWork, { rerun: definition.rerunAfterRestart });
  return markWakeTool(tool, {
    kind: "later",
    work: definition.run as LaterWork,
    ...(definition.timeoutMs !== undefined && { timeoutMs: definition.timeoutMs }),
  });
}
