// The session's side of a wake: a message that arrives while no run is active (a schedule's slot,
// an event) waits in the session's inbox, and the session's exclusive `wake` handler turns what
// waits there into a run. Exclusive, it runs only once an active run has ended: a run that took the
// message meanwhile (at a steering or follow-up check) leaves nothing, and the wake is a no-op.
import * as restate from "@restatedev/restate-sdk";
import type { ObjectContext } from "@restatedev/restate-sdk";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentMessage } from "../core/messages.js";
import type { AgentOptions, QueueMode } from "../core/options.js";
import type { DrainAnswer } from "./inbox-bell.js";

/**
 * The messages a woken session starts its run with, taken from its inbox: the steering messages its mode takes,
 * else the follow-ups its mode takes (one, by default; the run takes the rest when it would stop).
 * Empty when a run took them first.
 *
 * @example
 * ```ts
 * const input = await takeWakeInput(ctx, "SessionInbox", agentOptions);
 * if (input.length > 0) return runPrompt(ctx, input);
 * ```
 */
export async function takeWakeInput(
  ctx: ObjectContext,
  inbox: string,
  options: Pick<AgentOptions, "steeringMode" | "followUpMode">,
): Promise<AgentMessage[]> {
  const drain = async (kind: InboxKind, mode: QueueMode) =>
    (
      await ctx.genericCall<{ kind: InboxKind; mode: QueueMode }, DrainAnswer>({
        service: inbox,
        method: "drain",
        key: ctx.key,
        parameter: { kind, mode },
        inputSerde: restate.serde.json,
        outputSerde: restate.serde.json,
      })
    ).messages;
  const steering = await drain("steering", options.steeringMode ?? "one-at-a-time");
  if (steering.length > 0) return steering;
  return drain("followUp", options.followUpMode ?? "one-at-a-time");
}
