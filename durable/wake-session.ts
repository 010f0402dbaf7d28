// How a wake reaches a durable session (a schedule's slot, an event from outside). The inbox queues
// it as it queues a steer (ringing the doorbell of a run that listens, which takes it at its next
// check) and asks the session to wake: the session's exclusive `wake` runs once no run is active
// and starts a run with what is still waiting. A run that took the message first leaves nothing,
// and the wake is a no-op.
import * as restate from "@restatedev/restate-sdk";
import { type ObjectContext, TerminalError } from "@restatedev/restate-sdk";
import type { InboxKind } from "../core/effect-journal.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { AgentOptions, QueueMode } from "../core/options.js";
import { takeFromQueue } from "../rules/agent.logic.js";
import { eventMessageId, wakeMessageOf } from "../rules/wake-message.js";
import type { WakeCause } from "../telemetry/wake-cause.js";
import { untilSlot } from "./slot-lead.js";

/** An event from outside for a durable session, as `SessionInbox.event` takes it. */
export interface DurableEventInput {
  /** The sender's id: the same id again is a no-op answered `"duplicate"`. */
  id: string;
  text: string;
  /** `steer` (default: taken after the active run's current turn) or `followUp`. */
  queue?: "steer" | "followUp";
  /**
   * The sender's W3C `traceparent` (e.g. the webhook request's header): the woken run's span links
   * to it. `createWakeClient` sends the span active when it is called by default.
   */
  traceparent?: string;
}

/** The result of work a durable session's tool started, as `SessionInbox.laterResult` takes it. */
export interface DurableLaterResultInput {
  /** The handle the tool answered with: the message's id (the same handle again is a no-op). */
  handle: string;
  /** What the agent reads. */
  text: string;
}

/** The ids of the last this many events and late results a session took are remembered (a retry is a no-op). */
export const EVENT_IDS_KEPT = 1_000;

/** What `SessionInbox.deliver` takes: a wake's message and the queue it joins while a run is active. */
export interface WakeDeliveryInput {
  kind: InboxKind;
  message: UserMessage;
  /** What woke the session (the run that takes the message links to it). */
  cause?: WakeCause;
  /**
   * A slot's time: the message is queued no earlier (its call comes up to `SLOT_LEAD_MS` early,
   * durable/slot-lead.ts), while the session's run starts.
   */
  notBefore?: number;
}

/** What the inbox's wake handlers need of the services that register them. */
export interface WakeInboxDeps {
  /** The session object's name (its `wake` and `status` handlers). */
  session: string;
  /** Queues a message and rings an active run's doorbell (the inbox's own `steer` / `followUp`). */
  enqueue(
    ctx: ObjectContext,
    kind: InboxKind,
    message: UserMessage,
    cause?: WakeCause,
    stamped?: number,
  ): Promise<unknown>;
}

/**
 * The inbox's two wake handlers: `deliver` (a schedule's slot; private) and `event` (an event
 * from outside, deduplicated by the sender's id).
 *
 * @example
 * ```ts
 * const inbox = restate.object({ name: "SessionInbox", handlers: { ...wakeInboxHandlers(deps), steer, followUp } });
 * ```
 */
export function wakeInboxHandlers(deps: WakeInboxDeps) {
  const wake = (ctx: ObjectContext) =>
    ctx.genericSend({
      service: deps.session,
      method: "wake",
      key: ctx.key,
      parameter: null,
      inputSerde: restate.serde.json,
    });

  /**
   * Queues a wake's message. Always through the queue, never straight to a run of its own: a run
   * that has not handed its doorbell over yet (or is being retried) takes what waits in order, and
   * so does the next. The caller has asked the session to wake already: the woken run's start
   * overlaps this handler's work, and its opening drain, an exclusive call on this inbox, waits for
   * this handler to end (the message is queued by then, or refused: the wake is then a no-op).
   */
  async function queue(ctx: ObjectContext, input: WakeDeliveryInput): Promise<void> {
    const stamped = typeof input?.message?.timestamp === "number" ? input.message.timestamp : undefined;
    const kind = input?.kind === "steering" ? "steering" : "followUp";
    await deps.enqueue(ctx, kind, input?.message, input?.cause, stamped);
  }

  async function deliver(ctx: ObjectContext, input: WakeDeliveryInput): Promise<void> {
    wake(ctx);
    if (typeof input?.notBefore === "number") {
      // A slot that came early: the wake goes out now (awaiting a state read sends what the
      // handler wrote so far) and the session's run starts meanwhile; the message is queued at the
      // slot, and that run's opening drain, an exclusive call here, takes it then. The wait is out
      // of the journal (a replay, after the slot, does not wait); the read is made either way.
      await ctx.get("followUp");
      await untilSlot(input.notBefore);
    }
    await queue(ctx, input);
  }

  /** Delivers a message whose id the session may have taken already (the last {@link EVENT_IDS_KEPT}). */
  async function deliverOnce(
    ctx: ObjectContext,
    id: string,
    text: string,
    source: "event" | "laterResult",
    kind: InboxKind,
    cause?: WakeCause,
  ): Promise<"delivered" | "duplicate"> {
    const seen = (await ctx.get<string[]>("delivered")) ?? [];
    if (seen.includes(id)) return "duplicate";
    await requireSession(ctx, deps.session);
    // Before the clock's journaled step: the session starts its run meanwhile.
    wake(ctx);
    const message = wakeMessageOf({ id, text, source }, await ctx.date.now());
    await queue(ctx, { kind, message, ...(cause && { cause }) });
    ctx.set("delivered", [...seen, id].slice(-EVENT_IDS_KEPT));
    return "delivered";
  }

  return {
    deliver: restate.handlers.object.exclusive({ ingressPrivate: true }, deliver),
    /** What a woken session's run starts with (its `wake` handler's one call). */
    wakeTake: restate.handlers.object.exclusive({ ingressPrivate: true }, wakeTake),
    /**
     * Delivers an event: `"duplicate"` for a sender id the session took already (the last
     * {@link EVENT_IDS_KEPT}), 404 for a session that never ran, 400 for a malformed event.
     */
    event: restate.handlers.object.exclusive(
      async (ctx: ObjectContext, input: DurableEventInput): Promise<"delivered" | "duplicate"> => {
        const event = parseEvent(input);
        const kind = event.queue === "steer" ? "steering" : "followUp";
        const cause: WakeCause = { source: "event", id: event.id, traceparent: event.traceparent };
        return deliverOnce(ctx, eventMessageId(event.id), event.text, "event", kind, cause);
      },
    ),
    /**
     * Delivers the result of work a tool started and answered at once with a handle (a durable
     * session's tool that answers later): a follow-up with `source: "laterResult"` and the handle
     * as its id; `"duplicate"` for a handle the session took already.
     */
    laterResult: restate.handlers.object.exclusive(
      async (ctx: ObjectContext, input: DurableLaterResultInput): Promise<"delivered" | "duplicate"> => {
        const result = parseLaterResult(input);
        return deliverOnce(ctx, result.handle, result.text, "laterResult", "followUp");
      },
    ),
  };
}

/**
 * The messages a woken session starts its run with, taken from its inbox: the steering messages
 * its mode takes, else the follow-ups (one, by default: the run takes the rest when it would
 * stop). Empty when a run took them first: the wake is then a no-op.
 *
 * @example
 * ```ts
 * const input = await wakeInput(ctx, "SessionInbox", agentOptions);
 * if (input.length > 0) return runPrompt(ctx, input);
 * ```
 */
export async function wakeInput(
  ctx: ObjectContext,
  inbox: string,
  options: Pick<AgentOptions, "steeringMode" | "followUpMode">,
): Promise<AgentMessage[]> {
  // One round trip for both queues (a slot or a late result is a follow-up: two checks cost two).
  return ctx.genericCall<WakeTakeRequest, AgentMessage[]>({
    service: inbox,
    method: "wakeTake",
    key: ctx.key,
    parameter: {
      steeringMode: options.steeringMode ?? "one-at-a-time",
      followUpMode: options.followUpMode ?? "one-at-a-time",
    },
    inputSerde: restate.serde.json,
    outputSerde: restate.serde.json,
  });
}

/** What `SessionInbox.wakeTake` takes: the session's queue modes. */
export interface WakeTakeRequest {
  steeringMode: QueueMode;
  followUpMode: QueueMode;
}

/**
 * The messages a woken session's run starts with, taken from the inbox's queues: the steering its
 * mode takes, else the follow-ups its mode takes. `queues` is left holding the rest; the kind taken
 * from is named so the caller writes it back.
 *
 * @example
 * ```ts
 * const queues = { steering: [], followUp: [slotMessage] };
 * takeWakeInput(queues, { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" });
 * // { taken: [slotMessage], from: "followUp" }, and queues.followUp is []
 * ```
 */
export function takeWakeInput(
  queues: Record<InboxKind, AgentMessage[]>,
  request: WakeTakeRequest,
): { taken: AgentMessage[]; from?: InboxKind } {
  const modes: [InboxKind, QueueMode][] = [
    ["steering", request?.steeringMode === "all" ? "all" : "one-at-a-time"],
    ["followUp", request?.followUpMode === "all" ? "all" : "one-at-a-time"],
  ];
  for (const [kind, mode] of modes) {
    if (queues[kind].length === 0) continue;
    const { taken, rest } = takeFromQueue(queues[kind], mode);
    queues[kind] = rest;
    return { taken, from: kind };
  }
  return { taken: [] };
}

/**
 * `SessionInbox.wakeTake`: what the `wake` of earlier versions asked for in a call of its own (a
 * woken run now takes it with its opening drain, `DrainRequest.wake`).
 */
async function wakeTake(ctx: ObjectContext, input: WakeTakeRequest): Promise<AgentMessage[]> {
  const queues = {
    steering: (await ctx.get<AgentMessage[]>("steering")) ?? [],
    followUp: (await ctx.get<AgentMessage[]>("followUp")) ?? [],
  };
  const { taken, from } = takeWakeInput(queues, input);
  if (from && queues[from].length) ctx.set(from, queues[from]);
  else if (from) ctx.clear(from);
  return taken;
}

/** A 404 for a session that never ran: an event creates no session. Asked once per session. */
async function requireSession(ctx: ObjectContext, session: string): Promise<void> {
  if (await ctx.get<boolean>("sessionKnown")) return;
  try {
    await ctx.genericCall<null, unknown>({
      service: session,
      method: "status",
      key: ctx.key,
      parameter: null,
      inputSerde: restate.serde.json,
      outputSerde: restate.serde.json,
    });
  } catch (error) {
    if (error instanceof TerminalError && error.code === 404) {
      throw new TerminalError(`No session "${ctx.key}": the event was not delivered`, { errorCode: 404 });
    }
    throw error;
  }
  ctx.set("sessionKnown", true);
}

/**
 * Checks an event as `deliverEvent` does in process; a 400 says what is wrong.
 *
 * @example
 * ```ts
 * parseEvent({ id: "gh_81", text: "CI failed" }); // { id: "gh_81", text: "CI failed", queue: "steer" }
 * ```
 */
export function parseEvent(input: unknown): Required<Omit<DurableEventInput, "traceparent">> & {
  traceparent?: string;
} {
  const event = (input ?? {}) as Partial<DurableEventInput>;
  const bad = (message: string) => new TerminalError(`Invalid event: ${message}`, { errorCode: 400 });
  if (typeof event.id !== "string" || event.id.trim() === "" || event.id.length > 180) {
    throw bad("an event needs the sender's id, 1 to 180 characters (it makes a second delivery a no-op)");
  }
  if (typeof event.text !== "string" || event.text.trim() === "") throw bad("an event needs its text");
  const queue = event.queue ?? "steer";
  if (queue !== "steer" && queue !== "followUp") {
    throw bad(`queue must be "steer" or "followUp", got ${String(queue)}`);
  }
  const traceparent = typeof event.traceparent === "string" ? event.traceparent : undefined;
  return { id: event.id, text: event.text, queue, ...(traceparent !== undefined && { traceparent }) };
}

/**
 * Checks a late result; a 400 says what is wrong.
 *
 * @example
 * ```ts
 * parseLaterResult({ handle: "later_render_42", text: "intro.mp4, 12 s" });
 * ```
 */
export function parseLaterResult(input: unknown): DurableLaterResultInput {
  const result = (input ?? {}) as Partial<DurableLaterResultInput>;
  const bad = (message: string) => new TerminalError(`Invalid late result: ${message}`, { errorCode: 400 });
  if (typeof result.handle !== "string" || result.handle.trim() === "" || result.handle.length > 200) {
    throw bad("it needs the tool's handle, 1 to 200 characters (it makes a second delivery a no-op)");
  }
  if (typeof result.text !== "string" || result.text.trim() === "") throw bad("it needs its text");
  return { handle: result.handle, text: result.text };
}
