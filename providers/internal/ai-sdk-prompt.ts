import type { ImageContent, Message, TextContent } from "../../core/messages.js";
import type { ProviderRequest } from "../provider.js";
import { normalizeTranscript } from "./transcript.js";

/** The `LanguageModel` specification versions the adapter speaks (AI SDK 5, 6 and 7). */
export type AiSdkSpecVersion = "v2" | "v3" | "v4";

/** A message of the AI SDK's provider-level prompt (`LanguageModelV2/V3/V4Prompt`), loosely typed. */
export type AiSdkPromptMessage = { role: string; content: unknown; providerOptions?: unknown };

/** The prefix of a thinking block's signature that holds the reasoning's AI SDK provider metadata. */
export const AI_SDK_METADATA_PREFIX = "ai-sdk-metadata:";

/**
 * The prefix of an empty thinking block's signature that holds a tool call's AI SDK provider
 * metadata (`{ toolCallId, providerMetadata }`), for the call right before it.
 */
export const AI_SDK_CALL_METADATA_PREFIX = "ai-sdk-call-metadata:";

/** A tool call's metadata from such a signature, or `undefined` when it is none or unreadable. */
function callMetadata(
  signature: string | undefined,
): { toolCallId: string; providerMetadata: Record<string, unknown> } | undefined {
  if (!signature?.startsWith(AI_SDK_CALL_METADATA_PREFIX)) return undefined;
  try {
    const value = JSON.parse(signature.slice(AI_SDK_CALL_METADATA_PREFIX.length)) as {
      toolCallId?: unknown;
      providerMetadata?: unknown;
    };
    if (
      typeof value.toolCallId !== "string" ||
      !value.providerMetadata ||
      typeof value.providerMetadata !== "object"
    )
      return undefined;
    return {
      toolCallId: value.toolCallId,
      providerMetadata: value.providerMetadata as Record<string, unknown>,
    };
  } catch {
    return undefined;
  }
}

/** An image as a file part of the given specification version (they differ in how data is wrapped). */
function filePart(image: ImageContent, version: AiSdkSpecVersion): object {
  return version === "v4"
    ? { type: "file", mediaType: image.mimeType, data: { type: "data", data: image.data } }
    : { type: "file", mediaType: image.mimeType, data: image.data };
}

/** An image inside a tool result's `content` output. */
function resultImage(image: ImageContent, version: AiSdkSpecVersion): object {
  if (version === "v2") return { type: "media", mediaType: image.mimeType, data: image.data };
  if (version === "v3") return { type: "file-data", mediaType: image.mimeType, data: image.data };
  return { type: "file", mediaType: image.mimeType, data: { type: "data", data: image.data } };
}

function reasoningOptions(signature: string | undefined): object {
  if (!signature?.startsWith(AI_SDK_METADATA_PREFIX)) return {};
  try {
    return { providerOptions: JSON.parse(signature.slice(AI_SDK_METADATA_PREFIX.length)) };
  } catch {
    return {};
  }
}

/**
 * Whether a thinking block goes back as a reasoning part: with text or metadata; a redacted one
 * only when it holds AI SDK metadata (it has no text, the metadata is the whole of it).
 */
function sendableReasoning(block: { thinking: string; signature?: string; redacted?: boolean }): boolean {
  if (block.redacted) return block.signature?.startsWith(AI_SDK_METADATA_PREFIX) === true;
  return block.thinking !== "" || block.signature !== undefined;
}

/**
 * Converts our request to the AI SDK's provider-level prompt and tools: the system prompt as a
 * `system` message, images as file parts, tool calls as `tool-call` parts, consecutive tool results
 * as one `tool` message (text, `error-text` for a failed call, `content` when there are images).
 * Reasoning goes back only to the provider it came from, with the provider metadata it came with
 * (Anthropic's signature, say) as its `providerOptions`.
 *
 * @example
 * ```ts
 * const { prompt, tools, toolChoice } = toAiSdkPrompt(request, "v3", "ai-sdk:mistral.chat");
 * ```
 */
export function toAiSdkPrompt(
  request: ProviderRequest,
  version: AiSdkSpecVersion,
  providerId: string,
): { prompt: AiSdkPromptMessage[]; tools?: object[]; toolChoice?: { type: "none" | "required" } } {
  const prompt: AiSdkPromptMessage[] = [];
  if (request.systemPrompt) prompt.push({ role: "system", content: request.systemPrompt });
  let results: object[] | undefined;
  const closeResults = () => {
    if (results) prompt.push({ role: "tool", content: results });
    results = undefined;
  };
  for (const message of normalizeTranscript(request.messages) as Message[]) {
    if (message.role === "toolResult") {
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      const images = message.content.filter((c): c is ImageContent => c.type === "image");
      const output =
        images.length > 0 && !message.isError
          ? {
              type: "content",
              value: [
                ...(text ? [{ type: "text", text }] : []),
                ...images.map((i) => resultImage(i, version)),
              ],
            }
          : { type: message.isError ? "error-text" : "text", value: text === "" ? "(no output)" : text };
      (results ??= []).push({
        type: "tool-result",
        toolCallId: message.toolCallId,
        toolName: message.toolName,
        output,
      });
      continue;
    }
    closeResults();
    if (message.role === "user") {
      const content =
        typeof message.content === "string"
          ? [{ type: "text", text: message.content }]
          : message.content.map((c) =>
              c.type === "text" ? { type: "text", text: c.text } : filePart(c, version),
            );
      prompt.push({ role: "user", content });
    } else if (message.role === "assistant") {
      const sameProvider = message.provider === providerId;
      const content: object[] = [];
      for (const block of message.content) {
        if (block.type === "text") {
          if (block.text !== "") content.push({ type: "text", text: block.text });
        } else if (block.type === "toolCall") {
          content.push({
            type: "tool-call",
            toolCallId: block.id,
            toolName: block.name,
            input: block.arguments,
          });
        } else if (callMetadata(block.signature)) {
          // A tool call's metadata: back on that call, for the provider that gave it.
          const { toolCallId, providerMetadata } = callMetadata(block.signature)!;
          const call = content.find(
            (part) => (part as { type?: string; toolCallId?: string }).toolCallId === toolCallId,
          );
          if (sameProvider && call) Object.assign(call, { providerOptions: providerMetadata });
        } else if (sameProvider && sendableReasoning(block)) {
          content.push({ type: "reasoning", text: block.thinking, ...reasoningOptions(block.signature) });
        }
      }
      if (content.length > 0) prompt.push({ role: "assistant", content });
    }
  }
  closeResults();
  if (request.tools.length === 0) return { prompt };
  const tools = request.tools.map((tool) => ({
    type: "function",
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters,
  }));
  return {
    prompt,
    tools,
    ...(request.toolChoice ? { toolChoice: { type: request.toolChoice } } : {}),
  };
}
