import type { AssistantMessage, ImageContent, Message, TextContent } from "../../core/messages.js";
import type { ProviderRequest } from "../provider.js";
import { base64ToBytes } from "./base64.js";
import { normalizeTranscript } from "./transcript.js";

/** A Converse API content block (the members we send), as the SDK takes it. */
export type BedrockBlock =
  | { text: string }
  | { image: { format: string; source: { bytes: Uint8Array } } }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | {
      toolResult: {
        toolUseId: string;
        content: ({ text: string } | { image: { format: string; source: { bytes: Uint8Array } } })[];
        status: "success" | "error";
      };
    }
  | {
      reasoningContent:
        { reasoningText: { text: string; signature?: string } } | { redactedContent: Uint8Array };
    }
  | { cachePoint: { type: "default"; ttl?: "1h" } };

export interface BedrockMessage {
  role: "user" | "assistant";
  content: BedrockBlock[];
}

const CACHE_POINT_5M: BedrockBlock = { cachePoint: { type: "default" } };
// Every cache point gets the same lifetime: 1-hour entries must come before 5-minute ones.
const CACHE_POINT_1H: BedrockBlock = { cachePoint: { type: "default", ttl: "1h" } };

/** A base64 image as the Converse API takes it: its format name and its bytes. */
function image(c: ImageContent) {
  return {
    image: {
      format: c.mimeType.replace(/^image\//, "").replace("jpg", "jpeg"),
      source: { bytes: base64ToBytes(c.data) },
    },
  };
}

function userBlocks(content: string | (TextContent | ImageContent)[]): BedrockBlock[] {
  if (typeof content === "string") return [{ text: content }];
  return content.map((c) => (c.type === "text" ? { text: c.text } : image(c)));
}

/** Thinking goes back only to Bedrock (its signatures are the model vendor's, checked there). */
function assistantBlocks(message: AssistantMessage): BedrockBlock[] {
  const blocks: BedrockBlock[] = [];
  const fromBedrock = message.provider === undefined || message.provider === "bedrock";
  for (const block of message.content) {
    if (block.type === "text") {
      if (block.text.trim() !== "") blocks.push({ text: block.text });
    } else if (block.type === "toolCall") {
      blocks.push({ toolUse: { toolUseId: block.id, name: block.name, input: block.arguments } });
    } else if (fromBedrock && block.redacted && block.signature) {
      blocks.push({
        reasoningContent: { redactedContent: base64ToBytes(block.signature) },
      });
    } else if (fromBedrock && block.signature) {
      // Unsigned thinking (cut off) would be rejected; it stays in our transcript only.
      blocks.push({
        reasoningContent: { reasoningText: { text: block.thinking, signature: block.signature } },
      });
    }
  }
  return blocks;
}

/**
 * Converts our request to a Converse request's `messages`, `system` and `toolConfig`. Tool results
 * are `toolResult` blocks of a user message (consecutive ones and a following user text merge into
 * one message, as the API wants roles to alternate). With `cache`, cache points follow the system
 * prompt, the tools and the last message, so each turn reads the previous turn's prefix; with
 * `longCache` too, a request whose `cacheRetention` is `"long"` asks for their 1-hour lifetime.
 *
 * @example
 * ```ts
 * const { messages, system, toolConfig } = toBedrockRequest(request, { cache: true });
 * ```
 */
export function toBedrockRequest(
  request: ProviderRequest,
  options: { cache: boolean; longCache?: boolean },
): {
  messages: BedrockMessage[];
  system?: BedrockBlock[];
  toolConfig?: { tools: object[]; toolChoice?: { any: object } };
} {
  const messages: BedrockMessage[] = [];
  const push = (role: "user" | "assistant", content: BedrockBlock[]) => {
    if (content.length === 0) return;
    const previous = messages[messages.length - 1];
    if (previous?.role === role) previous.content.push(...content);
    else messages.push({ role, content });
  };
  for (const message of normalizeTranscript(request.messages) as Message[]) {
    if (message.role === "user") push("user", userBlocks(message.content));
    else if (message.role === "assistant") push("assistant", assistantBlocks(message));
    else {
      const content = message.content.map((c) => (c.type === "text" ? { text: c.text } : image(c)));
      push("user", [
        {
          toolResult: {
            toolUseId: message.toolCallId,
            content: content.length > 0 ? content : [{ text: "(no output)" }],
            status: message.isError ? "error" : "success",
          },
        },
      ]);
    }
  }
  const CACHE_POINT =
    options.longCache && request.cacheRetention === "long" ? CACHE_POINT_1H : CACHE_POINT_5M;
  if (options.cache && messages.length > 0) messages[messages.length - 1].content.push(CACHE_POINT);

  const out: ReturnType<typeof toBedrockRequest> = { messages };
  if (request.systemPrompt)
    out.system = [{ text: request.systemPrompt }, ...(options.cache ? [CACHE_POINT] : [])];
  // The API wants the tools declared whenever the transcript holds tool calls, so they are sent
  // with `toolChoice: "none"` too (which Converse cannot express: the model may still call one).
  if (request.tools.length > 0) {
    out.toolConfig = {
      tools: [
        ...request.tools.map((tool) => ({
          toolSpec: {
            name: tool.name,
            description: tool.description,
            inputSchema: { json: tool.parameters },
          },
        })),
        ...(options.cache ? [CACHE_POINT] : []),
      ],
      ...(request.toolChoice === "required" && { toolChoice: { any: {} } }),
    };
  }
  return out;
}
