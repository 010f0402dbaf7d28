import type { AgentMessage, ToolResultMessage } from "../core/messages.js";

/** The text of the result given to a call the snapshot recorded no result for. */
export function unfinishedCallText(toolName: string): string {
  return (
    `Tool ${toolName} did not finish: the session was saved while it ran and could not be resumed ` +
    "where it stopped. It may have completed partly or not at all; check its effects before relying on them."
  );
}

/**
 * The transcript of a persisted agent snapshot of any version, as messages a new agent can start
 * from (`createAgent({ messages })`): the recorded messages, then those queued for the next turn,
 * with every tool call that has no result in the transcript answered: by the result a child actor
 * had already recorded (a call that finished while others of its group still ran), else by an
 * error result saying it did not finish.
 * It reads only the snapshot's data, never the machine, so a snapshot no release can restore any
 * more is still readable. Anything that is not a message is left out; garbage gives `[]`.
 *
 * @example
 * ```ts
 * const messages = messagesOfSnapshot(JSON.parse(saved));
 * const agent = createAgent({ provider, tools, messages });
 * ```
 */
export function messagesOfSnapshot(snapshot: unknown, now = Date.now()): AgentMessage[] {
  const context = (snapshot as { context?: { messages?: unknown; pending?: unknown } } | null)?.context;
  const recorded = [
    ...(Array.isArray(context?.messages) ? context.messages : []),
    ...(Array.isArray(context?.pending) ? context.pending : []),
  ].filter(isMessage);

  const answered = new Set<string>();
  for (const message of recorded) if (message.role === "toolResult") answered.add(message.toolCallId);
  const finished = new Map<string, ToolResultMessage>();
  collectResults((snapshot as { children?: unknown } | null)?.children, finished);

  const calls = new Set<string>();
  const out: AgentMessage[] = [];
  for (let i = 0; i < recorded.length; i++) {
    const message = recorded[i]!;
    // A result whose call is not in the transcript before it would make the transcript invalid.
    if (message.role === "toolResult" && !calls.has(message.toolCallId)) continue;
    out.push(message);
    if (message.role !== "assistant") continue;
    for (const part of message.content) if (part.type === "toolCall") calls.add(part.id);
    // A call's missing result goes after the results its message already has.
    while (recorded[i + 1]?.role === "toolResult") {
      const result = recorded[++i] as ToolResultMessage;
      if (calls.has(result.toolCallId)) out.push(result);
    }
    for (const part of message.content) {
      if (part.type !== "toolCall" || answered.has(part.id)) continue;
      answered.add(part.id);
      const result: ToolResultMessage = finished.get(part.id) ?? {
        role: "toolResult",
        toolCallId: part.id,
        toolName: part.name,
        content: [{ type: "text", text: unfinishedCallText(part.name) }],
        details: { unfinished: true },
        isError: true,
        timestamp: now,
      };
      out.push(result);
    }
  }
  return out;
}

/** Tool-result messages anywhere in the child actors' snapshots, by call id (depth-limited). */
function collectResults(value: unknown, into: Map<string, ToolResultMessage>, depth = 0): void {
  if (depth > 12 || typeof value !== "object" || value === null) return;
  if (isMessage(value) && value.role === "toolResult" && typeof value.toolCallId === "string") {
    into.set(value.toolCallId, value);
    return;
  }
  for (const child of Object.values(value)) collectResults(child, into, depth + 1);
}

function isMessage(value: unknown): value is AgentMessage {
  if (typeof value !== "object" || value === null) return false;
  const { role, content } = value as { role?: unknown; content?: unknown };
  if (role === "assistant") return Array.isArray(content);
  return (
    (role === "user" || role === "toolResult" || role === "custom") &&
    (typeof content === "string" || Array.isArray(content))
  );
}
