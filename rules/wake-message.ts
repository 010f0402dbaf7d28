// What a wake hands an agent, as plain data: the message a schedule's slot, an event from outside
// or a late result becomes, its id (the id is what makes a second delivery a no-op), and whether
// an agent holds it already. One rule for the in-process wakes (wake/), the session host's event
// route (http/) and durable sessions (durable/).
import type { AgentMessage, MessageSource, UserMessage } from "../core/messages.js";

/** Which queue a wake message joins: a new run's prompt, the follow-up queue, or the steering queue. */
export type WakeQueue = "prompt" | "followUp" | "steer";

/** A message that wakes an agent: its id makes delivering it twice a no-op. */
export interface WakeMessage {
  /** Unique per wake (a schedule's slot, a sender's event id, a late result's handle): the message's id in the transcript. */
  id: string;
  /** What the agent reads: text, or text and images (a late result's). */
  text: UserMessage["content"];
  source: Extract<MessageSource, "schedule" | "event" | "laterResult">;
  queue: WakeQueue;
  /**
   * What woke the agent, for its traces: the schedule's id, the sender's event id or the handle,
   * and the causing span (`traceparent`). The run that takes the message links to it.
   */
  cause?: { id: string; traceparent?: string };
}

/**
 * The user message a wake becomes, stamped `now`.
 *
 * @example
 * ```ts
 * wakeMessageOf({ id: eventMessageId("gh_81"), text: "CI failed", source: "event", queue: "steer" }, Date.now());
 * // { role: "user", content: "CI failed", id: "event_gh_81", source: "event", timestamp: … }
 * ```
 */
export function wakeMessageOf(wake: Pick<WakeMessage, "id" | "text" | "source">, now: number): UserMessage {
  return { role: "user", content: wake.text, id: wake.id, source: wake.source, timestamp: now };
}

/**
 * The message id of an event the sender calls `senderId`.
 *
 * @example
 * ```ts
 * eventMessageId("gh_81"); // "event_gh_81"
 * ```
 */
export function eventMessageId(senderId: string): string {
  return `event_${senderId}`;
}

/**
 * The message id of schedule `scheduleId`'s slot `slot` (epoch ms).
 *
 * @example
 * ```ts
 * slotMessageId("sch_1", 1_700_000_000_000); // "wake_sch_1_1700000000000"
 * ```
 */
export function slotMessageId(scheduleId: string, slot: number): string {
  return `wake_${scheduleId}_${slot}`;
}

/**
 * Whether a message with this id is in the transcript or the queues, or a compaction summary
 * replaced it: a wake with that id was delivered already.
 *
 * @example
 * ```ts
 * if (holdsMessage(agent, "event_gh_81")) return "duplicate";
 * ```
 */
export function holdsMessage(
  agent: {
    readonly messages: readonly AgentMessage[];
    readonly queued: {
      readonly steering: readonly AgentMessage[];
      readonly followUp: readonly AgentMessage[];
    };
  },
  id: string,
): boolean {
  const { steering, followUp } = agent.queued;
  return (
    steering.some((message) => message.id === id) ||
    followUp.some((message) => message.id === id) ||
    agent.messages.some(
      (message) =>
        message.id === id || (message.role === "custom" && message.replaces?.includes(id) === true),
    )
  );
}

/** The sources of messages a wake brought: a schedule's slot, an event from outside, a late result. */
const WAKE_SOURCES: ReadonlySet<MessageSource | undefined> = new Set(["schedule", "event", "laterResult"]);

/**
 * Whether a message was brought by a wake (a schedule's slot, an event, a late result), not typed
 * by a person: `agent.abort()` keeps such a message queued, since nothing would send it again (a
 * late result's handle is settled, a slot counted, an event's sender answered).
 *
 * @example
 * ```ts
 * isWakeMessage({ role: "user", content: "CI failed", source: "event", timestamp: 0 }); // true
 * ```
 */
export function isWakeMessage(message: AgentMessage): boolean {
  return (message.role === "user" || message.role === "custom") && WAKE_SOURCES.has(message.source);
}
