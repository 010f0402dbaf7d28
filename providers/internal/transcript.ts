import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "../../core/messages.js";

/** The result given to a tool call that, for whatever reason, has none in the transcript. */
export const MISSING_TOOL_RESULT_TEXT = "No result was recorded for this tool call.";

function isEmptyFailedAssistant(message: AssistantMessage): boolean {
  if (message.stopReason !== "error" && message.stopReason !== "aborted") return false;
  return message.content.every(
    (block) =>
      (block.type === "text" && block.text.trim() === "") ||
      (block.type === "thinking" && block.thinking === "" && !block.signature),
  );
}

/**
 * Makes a transcript safe to send to any API: failed or aborted assistant messages without content
 * are dropped, every tool call is followed by exactly one result (a synthetic error result for a call
 * that never got one), and results that answer no preceding call are dropped. The APIs reject a
 * request that breaks any of these rules, so one bad transcript entry would end every later turn.
 *
 * @example
 * ```ts
 * const safe = normalizeTranscript(request.messages);
 * ```
 */
export function normalizeTranscript(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  let open: ToolCall[] = []; // calls of the last assistant message still waiting for a result
  let answered = new Set<string>();

  const closeOpenCalls = () => {
    for (const call of open) {
      if (answered.has(call.id)) continue;
      const synthetic: ToolResultMessage = {
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content: [{ type: "text", text: MISSING_TOOL_RESULT_TEXT }],
        isError: true,
        timestamp: 0,
      };
      out.push(synthetic);
    }
    open = [];
    answered = new Set();
  };

  for (const message of messages) {
    if (message.role === "toolResult") {
      const call = open.find((c) => c.id === message.toolCallId);
      if (!call || answered.has(call.id)) continue;
      answered.add(call.id);
      out.push(message);
      continue;
    }
    closeOpenCalls();
    if (message.role === "assistant") {
      if (isEmptyFailedAssistant(message)) continue;
      open = message.content.filter((c): c is ToolCall => c.type === "toolCall");
    }
    out.push(message);
  }
  closeOpenCalls();
  return out;
}
