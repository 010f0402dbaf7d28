import type { AgentMessage, AssistantMessage, ImageContent, TextContent } from "../../../core/messages.js";
import type { AgUiContentPart, AgUiMessage } from "./types.js";

/**
 * The AG-UI messages of a transcript, as a `MESSAGES_SNAPSHOT` carries them: ids are the
 * transcript's. An assistant message's thinking comes first as a `reasoning` message
 * (`<id>:reasoning`), its text and tool calls as the assistant message; a tool result is a `tool`
 * message (`error` holds its text when it failed); a custom message is a `developer` message (what
 * the model reads), or an `activity` when it is UI-only.
 *
 * @example
 * ```ts
 * toAgUiMessages(agent.messages); // [{ id: "m1", role: "user", content: "Hi" }, { id: "m2", role: "assistant", content: "Hello" }]
 * ```
 */
export function toAgUiMessages(transcript: readonly AgentMessage[]): AgUiMessage[] {
  const out: AgUiMessage[] = [];
  transcript.forEach((message, index) => {
    const id = message.id ?? `message-${index}`;
    switch (message.role) {
      case "user":
        out.push({ id, role: "user", content: userContent(message.content) });
        break;
      case "assistant": {
        const reasoning = reasoningOf(message);
        if (reasoning) out.push({ id: reasoningId(id), ...reasoning });
        out.push(assistantOf(id, message));
        break;
      }
      case "toolResult": {
        const text = plainText(message.content);
        out.push({
          id,
          role: "tool",
          toolCallId: message.toolCallId,
          content: text,
          ...(message.isError && { error: text || "error" }),
        });
        break;
      }
      case "custom":
        out.push(
          message.display === "ui-only"
            ? {
                id,
                role: "activity",
                activityType: `agent-machine.${message.customType}`,
                content: { text: plainText(message.content) },
              }
            : { id, role: "developer", content: plainText(message.content) },
        );
        break;
    }
  });
  return out;
}

/** The id of the reasoning message of assistant message `id`. */
export function reasoningId(id: string): string {
  return `${id}:reasoning`;
}

/** The assistant message as AG-UI has it: its text (absent when none) and its tool calls. */
function assistantOf(id: string, message: AssistantMessage): AgUiMessage {
  let text = "";
  const toolCalls = [];
  for (const block of message.content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "toolCall") {
      toolCalls.push({
        id: block.id,
        type: "function" as const,
        function: { name: block.name, arguments: JSON.stringify(block.arguments ?? {}) },
      });
    }
  }
  return {
    id,
    role: "assistant",
    ...(text !== "" && { content: text }),
    ...(toolCalls.length > 0 && { toolCalls }),
  };
}

function reasoningOf(message: AssistantMessage): { role: "reasoning"; content: string } | undefined {
  let text = "";
  for (const block of message.content)
    if (block.type === "thinking" && !block.redacted) text += block.thinking;
  return text === "" ? undefined : { role: "reasoning", content: text };
}

function userContent(content: string | (TextContent | ImageContent)[]): string | AgUiContentPart[] {
  if (typeof content === "string") return content;
  return content.map((block) =>
    block.type === "text"
      ? { type: "text", text: block.text }
      : { type: "image", source: { type: "data", value: block.data, mimeType: block.mimeType } },
  );
}

/** Text blocks joined; an image counts as a marker (AG-UI tool and developer content is text). */
export function plainText(content: string | readonly (TextContent | ImageContent)[]): string {
  if (typeof content === "string") return content;
  let out = "";
  for (const block of content) out += block.type === "text" ? block.text : `[image ${block.mimeType}]`;
  return out;
}
