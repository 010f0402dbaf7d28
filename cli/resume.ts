import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, ToolCall, ToolResultMessage } from "../core/messages.js";

/** What a saved session needs to go on: its transcript, with every tool call answered. */
export interface ResumePlan {
  /** The transcript to start the new agent from. */
  messages: AgentMessage[];
  /** Steering / follow-up messages that were queued when the session stopped. */
  steering: AgentMessage[];
  followUps: AgentMessage[];
  /** The session stopped in the middle of a run: the CLI continues it at once. */
  wasRunning: boolean;
  /** Calls that had no result and were answered as interrupted. */
  interrupted: ToolCall[];
  /** Calls whose result was missing from the snapshot but found in the event log. */
  recovered: ToolCall[];
  /** The result messages this plan added (for the event log). */
  added: ToolResultMessage[];
  /** The context window the session had learned from overflow errors, if any (docs/compaction.md). */
  learnedMaxContextTokens?: number;
}

/** The text the model sees for a call that was running when the process stopped. */
export function interruptedText(toolName: string): string {
  return (
    `Tool ${toolName} was interrupted: the agent process stopped while it ran, and the session was resumed. ` +
    "It may have completed partly or not at all; check its effects before relying on them, and run it again if needed."
  );
}

interface SavedContext {
  learnedMaxContextTokens?: number;
  messages?: AgentMessage[];
  pending?: AgentMessage[];
  steeringQueue?: AgentMessage[];
  followUpQueue?: AgentMessage[];
}

function isEndEvent(record: unknown): record is Extract<AgentEvent, { type: "tool_execution_end" }> {
  return (
    typeof record === "object" &&
    record !== null &&
    (record as { type?: unknown }).type === "tool_execution_end" &&
    typeof (record as { toolCallId?: unknown }).toolCallId === "string"
  );
}

/**
 * Turns a saved session (persisted snapshot + event log) into a transcript a new agent can continue.
 *
 * The core's own restore re-runs calls without a result (at-least-once). A coding agent's calls
 * have side effects (a half-run `bash`), so the CLI answers them instead: a call whose
 * `tool_execution_end` is in the event log (it finished, but its group had not completed) gets that
 * result; any other call gets an error result saying it was interrupted, and the model decides.
 *
 * @example
 * ```ts
 * const plan = planResume(session.loadSnapshot(), session.loadEvents());
 * const agent = createAgent({ ...options, messages: plan.messages });
 * if (plan.wasRunning) await agent.continue();
 * ```
 */
/**
 * How many messages the model is given when a session is resumed from `snapshot` and `events`: what
 * the `--resume` list counts, the same number the resume notice says (after a compaction the event
 * log holds more messages than the transcript that goes on).
 *
 * @example
 * ```ts
 * const inspection = store.inspect(id, { images: false });
 * resumedMessageCount(inspection.snapshot, inspection.events); // e.g. 11
 * ```
 */
export function resumedMessageCount(snapshot: unknown, events: readonly unknown[]): number {
  return planResume(snapshot, events).messages.length;
}

export function planResume(snapshot: unknown, events: readonly unknown[], now = Date.now()): ResumePlan {
  const saved = (snapshot as { context?: SavedContext; value?: unknown } | undefined) ?? {};
  const context = saved.context ?? {};
  const wasRunning = saved.value !== undefined && saved.value !== "idle";
  const transcript = [...(context.messages ?? []), ...(context.pending ?? [])];

  const finished = new Map<string, Extract<AgentEvent, { type: "tool_execution_end" }>>();
  for (const record of events) if (isEndEvent(record)) finished.set(record.toolCallId, record);

  const answered = new Set<string>();
  for (const message of transcript) if (message.role === "toolResult") answered.add(message.toolCallId);

  const interrupted: ToolCall[] = [];
  const recovered: ToolCall[] = [];
  const added: ToolResultMessage[] = [];
  const messages: AgentMessage[] = [];
  for (let i = 0; i < transcript.length; i++) {
    const message = transcript[i]!;
    messages.push(message);
    if (message.role !== "assistant") continue;
    // The missing results go after this message's existing results, in the order of the calls.
    while (transcript[i + 1]?.role === "toolResult") messages.push(transcript[++i]!);
    for (const part of message.content) {
      if (part.type !== "toolCall" || answered.has(part.id)) continue;
      answered.add(part.id);
      const end = finished.get(part.id);
      const result: ToolResultMessage = end
        ? {
            role: "toolResult",
            toolCallId: part.id,
            toolName: part.name,
            content: end.result.content,
            details: end.result.details,
            isError: end.isError,
            timestamp: now,
          }
        : {
            role: "toolResult",
            toolCallId: part.id,
            toolName: part.name,
            content: [{ type: "text", text: interruptedText(part.name) }],
            details: { interrupted: true },
            isError: true,
            timestamp: now,
          };
      (end ? recovered : interrupted).push(part);
      added.push(result);
      messages.push(result);
    }
  }

  return {
    messages,
    steering: context.steeringQueue ?? [],
    followUps: context.followUpQueue ?? [],
    wasRunning,
    interrupted,
    recovered,
    added,
    ...(typeof context.learnedMaxContextTokens === "number" && {
      learnedMaxContextTokens: context.learnedMaxContextTokens,
    }),
  };
}

/** Where a recovery found the transcript. */
export type RecoverySource = "snapshot" | "event log";

/**
 * What can be carried over from a damaged session into a new one: the intact snapshot when there
 * is one (only `meta.json` was damaged), else the transcript the event log holds (every message,
 * in order, from its `message_end` records), with every call answered as `planResume` does.
 * `undefined` when neither is readable.
 *
 * @example
 * ```ts
 * const recovery = planRecovery(store.inspect(id));
 * if (recovery) createAgent({ ...options, messages: recovery.plan.messages });
 * ```
 */
export function planRecovery(
  inspection: { snapshot?: unknown; events: readonly unknown[] },
  now = Date.now(),
): { plan: ResumePlan; source: RecoverySource } | undefined {
  if (inspection.snapshot !== undefined) {
    return { plan: planResume(inspection.snapshot, inspection.events, now), source: "snapshot" };
  }
  const messages = inspection.events
    .filter(
      (record): record is { type: "message_end"; message: AgentMessage } =>
        typeof record === "object" &&
        record !== null &&
        (record as { type?: unknown }).type === "message_end" &&
        typeof (record as { message?: unknown }).message === "object" &&
        // A retried attempt's message never entered the transcript.
        (record as { discarded?: unknown }).discarded !== true,
    )
    .map((record) => record.message);
  if (messages.length === 0) return undefined;
  // Not known to have stopped mid-run: the user decides what comes next.
  const plan = planResume({ context: { messages }, value: "idle" }, inspection.events, now);
  return { plan, source: "event log" };
}
