import type {
  AgentMessage,
  AssistantMessage,
  ImageContent,
  Message,
  StopReason,
  TextContent,
} from "../core/messages.js";

/** A message part in the GenAI conventions' JSON form (`gen_ai.input.messages` / `output.messages`). */
export type GenAiPart =
  | { type: "text"; content: string }
  | { type: "reasoning"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; response: string }
  | { type: "blob"; modality: "image"; mime_type: string; content: string };

/** A message in the GenAI conventions' JSON form. */
export interface GenAiMessage {
  role: "system" | "user" | "assistant" | "tool";
  parts: GenAiPart[];
  finish_reason?: string;
}

/**
 * `gen_ai.response.finish_reasons` for our stop reasons: `stop`, `length`, `tool_call`, `error`
 * as in the conventions, `aborted` for a call the user aborted.
 *
 * @example
 * ```ts
 * finishReason("toolUse"); // "tool_call"
 * ```
 */
export function finishReason(stopReason: StopReason): string {
  return stopReason === "toolUse" ? "tool_call" : stopReason;
}

/** Images are not copied into spans (they can be megabytes): the part says what was there. */
function imagePart(image: ImageContent): GenAiPart {
  return {
    type: "blob",
    modality: "image",
    mime_type: image.mimeType,
    content: `[${Math.floor((image.data.length * 3) / 4)} bytes not recorded]`,
  };
}

function contentParts(content: string | (TextContent | ImageContent)[]): GenAiPart[] {
  if (typeof content === "string") return [{ type: "text", content }];
  return content.map((part) =>
    part.type === "text" ? { type: "text", content: part.text } : imagePart(part),
  );
}

/** The text of a tool result's parts, as the model reads it. */
export function resultText(content: readonly (TextContent | ImageContent)[]): string {
  return content.map((part) => (part.type === "text" ? part.text : `[image ${part.mimeType}]`)).join("\n");
}

/** An assistant message in the conventions' form, with its finish reason. */
export function assistantMessage(message: AssistantMessage): GenAiMessage {
  const parts: GenAiPart[] = message.content.map((part) => {
    if (part.type === "text") return { type: "text", content: part.text };
    if (part.type === "thinking")
      return { type: "reasoning", content: part.redacted ? "[redacted]" : part.thinking };
    return { type: "tool_call", id: part.id, name: part.name, arguments: part.arguments };
  });
  return { role: "assistant", parts, finish_reason: finishReason(message.stopReason) };
}

/**
 * Transcript messages (after `convertToLlm`, as the provider received them) in the GenAI
 * conventions' JSON form.
 *
 * @example
 * ```ts
 * toGenAiMessages([{ role: "user", content: "Hi", timestamp: 0 }]);
 * // [{ role: "user", parts: [{ type: "text", content: "Hi" }] }]
 * ```
 */
export function toGenAiMessages(messages: readonly (Message | AgentMessage)[]): GenAiMessage[] {
  const out: GenAiMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", parts: contentParts(message.content) });
        break;
      case "assistant":
        out.push(assistantMessage(message));
        break;
      case "toolResult":
        out.push({
          role: "tool",
          parts: [
            { type: "tool_call_response", id: message.toolCallId, response: resultText(message.content) },
          ],
        });
        break;
      default:
        // Custom messages reach the model only through convertToLlm; untranslated ones are skipped.
        break;
    }
  }
  return out;
}
