import type Anthropic from "@anthropic-ai/sdk";
import type { ImageContent, Message, TextContent } from "../../core/messages.js";
import type { ProviderRequest } from "../provider.js";
import { normalizeTranscript } from "./transcript.js";

type MessageParam = Anthropic.Messages.MessageParam;
type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
type TextBlockParam = Anthropic.Messages.TextBlockParam;
type ImageBlockParam = Anthropic.Messages.ImageBlockParam;
type Tool = Anthropic.Messages.Tool;

const EPHEMERAL = { type: "ephemeral" } as const;
// Every breakpoint gets the same lifetime: the API wants 1-hour entries before 5-minute ones.
const EPHEMERAL_1H = { type: "ephemeral", ttl: "1h" } as const;

/** The Messages API request body for our request, without model / max_tokens / stream. */
export interface AnthropicRequestParts {
  system?: TextBlockParam[];
  messages: MessageParam[];
  tools?: Tool[];
  tool_choice?: { type: "none" };
}

function imageBlock(image: ImageContent): ImageBlockParam {
  return {
    type: "image",
    source: { type: "base64", media_type: image.mimeType as "image/png", data: image.data },
  };
}

function userBlocks(content: string | (TextContent | ImageContent)[]): (TextBlockParam | ImageBlockParam)[] {
  if (typeof content === "string") return content.trim() === "" ? [] : [{ type: "text", text: content }];
  const out: (TextBlockParam | ImageBlockParam)[] = [];
  for (const block of content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") out.push({ type: "text", text: block.text });
    } else out.push(imageBlock(block));
  }
  return out;
}

function assistantBlocks(message: Extract<Message, { role: "assistant" }>): ContentBlockParam[] {
  const out: ContentBlockParam[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") out.push({ type: "text", text: block.text });
    } else if (block.type === "thinking") {
      // Only signed thinking can be sent back; unsigned thinking (cut off, or from another
      // provider) would be rejected, so it stays in our transcript only.
      if (block.redacted && block.signature) out.push({ type: "redacted_thinking", data: block.signature });
      else if (block.signature)
        out.push({ type: "thinking", thinking: block.thinking, signature: block.signature });
    } else {
      out.push({ type: "tool_use", id: block.id, name: block.name, input: block.arguments });
    }
  }
  return out;
}

/**
 * Converts our request to the Messages API's shape: tool results become `tool_result` blocks,
 * consecutive user-side messages (tool results and user text) merge into one user message, and
 * with `cache` on, `cache_control` marks the system prompt, the last tool and the last two user
 * messages (4 breakpoints, the API's maximum), so each turn reads the previous turn's prefix from
 * the cache. `request.cacheRetention: "long"` asks for the 1-hour lifetime on every breakpoint.
 *
 * @example
 * ```ts
 * const { system, messages, tools } = toAnthropicRequest(request, { cache: true });
 * ```
 */
export function toAnthropicRequest(
  request: ProviderRequest,
  options: { cache: boolean },
): AnthropicRequestParts {
  const messages: MessageParam[] = [];
  const push = (role: "user" | "assistant", blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last && last.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else messages.push({ role, content: blocks });
  };

  for (const message of normalizeTranscript(request.messages)) {
    if (message.role === "user") push("user", userBlocks(message.content));
    else if (message.role === "assistant") push("assistant", assistantBlocks(message));
    else {
      const content = userBlocks(message.content);
      push("user", [
        {
          type: "tool_result",
          tool_use_id: message.toolCallId,
          ...(content.length > 0 ? { content } : {}),
          ...(message.isError ? { is_error: true } : {}),
        },
      ]);
    }
  }

  const parts: AnthropicRequestParts = { messages };
  if (request.systemPrompt) parts.system = [{ type: "text", text: request.systemPrompt }];
  if (request.tools.length > 0) {
    parts.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters as Tool["input_schema"],
    }));
    if (request.toolChoice === "none") parts.tool_choice = { type: "none" };
  }

  if (options.cache) {
    const mark = request.cacheRetention === "long" ? EPHEMERAL_1H : EPHEMERAL;
    const lastSystem = parts.system?.[parts.system.length - 1];
    if (lastSystem) lastSystem.cache_control = mark;
    const lastTool = parts.tools?.[parts.tools.length - 1];
    if (lastTool) lastTool.cache_control = mark;
    let marked = 0;
    for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
      const message = messages[i];
      if (message.role !== "user") continue;
      const blocks = message.content as ContentBlockParam[];
      const last = blocks[blocks.length - 1] as { cache_control?: unknown };
      last.cache_control = mark;
      marked++;
    }
  }
  return parts;
}
