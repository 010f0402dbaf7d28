import type { Agent } from "../agent/agent.js";

export type { WakeMessage, WakeQueue } from "../rules/wake-message.js";
import { holdsMessage, type WakeMessage, wakeMessageOf } from "../rules/wake-message.js";
import { noteWakeCause } from "../telemetry/attach.js";
import { ROOT_CONTEXT, withContext } from "../telemetry/otel-global.js";

/** What {@link deliverWake} did: `duplicate` when a message with that id had already reached the agent. */
export type WakeDelivery = "delivered" | "duplicate";

/**
 * Hands `wake` to `agent` and makes it run: an idle (or hibernated) agent starts a run with the
 * message, whatever its queue; a running one takes it from the steering or follow-up queue (a
 * `prompt` wake then joins the follow-ups, so nothing is lost). A message whose id is already
 * in the transcript or a queue is not delivered again. A message the agent's input filters refuse
 * throws `Input rejected: <reason>`: nothing was queued and no run started. Run failures go to
 * `onRunError`; the run's own events report them too.
 *
 * @example
 * ```ts
 * deliverWake(agent, { id: "evt_42", text: "The build failed", source: "event", queue: "steer" });
 * ```
 */
export function deliverWake(
  agent: Agent,
  wake: WakeMessage,
  onRunError: (error: Error) => void = () => {},
): WakeDelivery {
  const delivery = wakeAgent(agent, wake, onRunError);
  if (typeof delivery === "string") return delivery;
  // Nothing was queued and no run started: the caller hears it (a durable session answers a 400).
  throw new Error(`Input rejected: ${delivery.refused}`);
}

/**
 * {@link deliverWake}, answering a refusal by the agent's input filters as `{ refused: reason }`.
 * The filters run inside the agent's `prompt` / `steer`, which tell of a refusal only by their
 * `input_rejected` event, published synchronously: it is watched for the length of the call.
 */
export function wakeAgent(
  agent: Agent,
  wake: WakeMessage,
  onRunError: (error: Error) => void = () => {},
): WakeDelivery | { refused: string } {
  if (hasMessage(agent, wake.id)) return "duplicate";
  let refused: string | undefined;
  const watch = agent.events$.subscribe((event) => {
    if (event.type === "input_rejected") refused ??= event.reason;
  });
  try {
    const delivery = handOver(agent, wake, onRunError);
    return refused === undefined ? delivery : { refused };
  } finally {
    watch.unsubscribe();
  }
}

function handOver(agent: Agent, wake: WakeMessage, onRunError: (error: Error) => void): WakeDelivery {
  const message = wakeMessageOf(wake, Date.now());
  if (wake.cause) noteWakeCause(agent, wake.id, { source: wake.source, ...wake.cause });
  const report = (error: unknown) => {
    try {
      onRunError(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // The app's handler threw, in a promise's catch: an unhandled rejection would end the process.
    }
  };
  // On an idle agent every queue means the same: a run that starts with the message (a queued
  // message and continue() would need a transcript to continue from).
  if (agent.state === "idle") {
    // A timer's callback runs in the context of whoever armed it (an app's request, days ago): a run
    // a schedule or a late result wakes is a trace of its own, linked to its cause. An event's run
    // stays below the span that delivers it, as any prompt does.
    if (wake.source === "event") agent.prompt(message).catch(report);
    else withContext(ROOT_CONTEXT, () => agent.prompt(message)).catch(report);
    return "delivered";
  }
  if (wake.queue === "steer") agent.steer(message);
  else agent.followUp(message);
  return "delivered";
}

/** Whether a message with this id is in the agent's transcript or queues, or a compaction summary replaced it. */
export function hasMessage(agent: Agent, id: string): boolean {
  return holdsMessage(agent, id);
}
