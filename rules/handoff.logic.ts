// Which of a turn's tool results hands the conversation to another agent: read by the agent
// machine's guard and action (machines/) and by the transfer tools' loop guard (agent/handoff.ts).
import type { HandoffRecord } from "../core/handoff.js";
import type { ToolResultMessage } from "../core/messages.js";

/**
 * The first successful transfer among a turn's tool results, if any.
 *
 * @example
 * ```ts
 * const record = handoffIn(context.run.turnResults)?.handoff;
 * ```
 */
export function handoffIn(
  results: readonly ToolResultMessage[],
): { toolCallId: string; handoff: HandoffRecord } | undefined {
  for (const result of results) {
    const handoff = (result.details as { handoff?: HandoffRecord } | undefined)?.handoff;
    if (!result.isError && handoff && typeof handoff.to === "string")
      return { toolCallId: result.toolCallId, handoff };
  }
  return undefined;
}
