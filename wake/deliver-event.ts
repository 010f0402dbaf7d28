import type { WakeDelivery } from "./deliver-wake.js";
import { eventMessageId, type WakeQueue } from "../rules/wake-message.js";
import { wakeAgent } from "./deliver-wake.js";
import { activeTraceparent } from "../telemetry/wake-cause.js";
import { ScheduleError } from "../rules/schedule-spec.js";
import type { AgentDirectory } from "./scheduler.js";

/** An event from outside for one agent (a webhook, a message from another system). */
export interface AgentEventInput {
  agentId: string;
  /** The sender's id for this event: delivering the same id again is a no-op (`"duplicate"`). */
  id: string;
  /** What the agent reads. */
  text: string;
  /** `steer` (the default: taken after the current turn) or `followUp` (taken when the run would stop). */
  queue?: Exclude<WakeQueue, "prompt">;
  /**
   * The sender's W3C `traceparent` (e.g. the webhook request's header): the woken run's span links
   * to it. Default: the span active when `deliverEvent` is called. Text that is not one is ignored.
   */
  traceparent?: string;
}

/**
 * Thrown for an event that cannot be delivered: an unknown agent, no id, no text, or text the
 * agent's input filters refuse (`Input rejected: <reason>`). Nothing was queued.
 */
export class WakeEventError extends ScheduleError {
  override name = "WakeEventError";
}

/**
 * Delivers an event to the agent `agents` knows by `event.agentId`, as a user message with
 * `source: "event"` and the id `event_<id>`: an idle or hibernated agent wakes and runs with it;
 * a running one takes it from its steering (or follow-up) queue. The same id again, while that
 * message is in the agent's transcript or queues (or a compaction summary that replaced it), is a
 * no-op that resolves `"duplicate"`.
 *
 * @example
 * ```ts
 * const agents = new Map([["ada", agent]]);
 * await deliverEvent(agents, { agentId: "ada", id: "gh_delivery_81", text: "CI failed on main" }); // "delivered"
 * await deliverEvent(agents, { agentId: "ada", id: "gh_delivery_81", text: "CI failed on main" }); // "duplicate"
 * ```
 */
export async function deliverEvent(
  agents: AgentDirectory,
  event: AgentEventInput,
  onRunError?: (error: Error) => void,
): Promise<WakeDelivery> {
  if (typeof event?.id !== "string" || event.id.trim() === "") {
    throw new WakeEventError("an event needs the sender's id (it makes a second delivery a no-op)");
  }
  if (typeof event.text !== "string" || event.text.trim() === "")
    throw new WakeEventError("an event needs its text");
  const queue = event.queue ?? "steer";
  if (queue !== "steer" && queue !== "followUp") {
    throw new WakeEventError(`queue must be "steer" or "followUp", got ${String(queue)}`);
  }
  const agent = await agents.get(event.agentId);
  if (!agent) throw new WakeEventError(`no agent "${event.agentId}"; the event was not delivered`);
  const delivery = wakeAgent(
    agent,
    {
      id: eventMessageId(event.id),
      text: event.text,
      source: "event",
      queue,
      cause: { id: event.id, traceparent: event.traceparent ?? activeTraceparent() },
    },
    onRunError,
  );
  if (typeof delivery === "string") return delivery;
  // As a durable session answers (400): the caller learns the event was not taken.
  throw new WakeEventError(`Input rejected: ${delivery.refused}`);
}
