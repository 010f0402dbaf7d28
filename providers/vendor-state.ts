import type { AssistantMessage, Message } from "../core/messages.js";

/**
 * The messages as another vendor may see them: assistant messages another provider wrote keep
 * their text, thinking and tool calls, but lose what only their own vendor can read (thinking
 * signatures, redacted thinking, the empty blocks that carry metadata). A chain or router that
 * hands a conversation to a different vendor sends this; messages of `providerId` are untouched,
 * and so is the array when no message needs a change.
 *
 * @example
 * ```ts
 * withoutOtherVendorsState(request.messages, "openai"); // Anthropic's signed thinking goes as plain thinking
 * ```
 */
export function withoutOtherVendorsState(messages: Message[], providerId: string): Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== "assistant" || message.provider === undefined || message.provider === providerId)
      continue;
    if (!message.content.some((block) => block.type === "thinking" && (block.signature || block.redacted))) {
      continue;
    }
    out ??= messages.slice();
    out[i] = stripped(message);
  }
  return out ?? messages;
}

function stripped(message: AssistantMessage): AssistantMessage {
  const content: AssistantMessage["content"] = [];
  for (const block of message.content) {
    if (block.type !== "thinking" || (!block.signature && !block.redacted)) content.push(block);
    // Redacted thinking is only its vendor's ciphertext; an empty signed block only carries metadata.
    else if (!block.redacted && block.thinking !== "")
      content.push({ type: "thinking", thinking: block.thinking });
  }
  return { ...message, content };
}
