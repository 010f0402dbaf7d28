import type { AgentMessage, ImageContent, Message, Usage } from "../core/messages.js";
import type { ToolSpec } from "../providers/provider.js";
import type { ContextConfig, TokenCalibration } from "./config.js";

/** Characters per token of the estimate. Real tokenisers give 3–4.5 for English and code. */
export const CHARS_PER_TOKEN = 4;
/** Tokens every message costs beyond its content (role, separators). */
export const MESSAGE_OVERHEAD_TOKENS = 4;
/** Bounds of an image's estimate: the smallest tile and the largest image providers bill for. */
export const IMAGE_MIN_TOKENS = 85;
export const IMAGE_MAX_TOKENS = 1_600;
/** Bytes of compressed image data per token, between the two bounds above. */
const IMAGE_BYTES_PER_TOKEN = 200;

interface CachedEstimate {
  tokens: number;
  /** What the estimate was computed from, so a message mutated in place is re-estimated. */
  content: unknown;
  length: number;
}

const estimates = new WeakMap<object, CachedEstimate>();

/**
 * Tokens an image costs: providers bill by pixel count, which we cannot see without decoding; the
 * size of the compressed data tracks it well enough, clamped to what providers actually charge.
 * Counting base64 as text would overestimate a 1 MB screenshot by a factor of 200.
 *
 * @example
 * ```ts
 * estimateImageTokens({ type: "image", data: "iVBORw0...", mimeType: "image/png" }); // ≥ 85
 * ```
 */
export function estimateImageTokens(image: ImageContent): number {
  const bytes = Math.floor(((image.data?.length ?? 0) * 3) / 4);
  return Math.min(IMAGE_MAX_TOKENS, Math.max(IMAGE_MIN_TOKENS, Math.ceil(bytes / IMAGE_BYTES_PER_TOKEN)));
}

/**
 * Tokens of a plain text by the characters / 4 rule.
 *
 * @example
 * ```ts
 * estimateTextTokens("hello world!"); // 3
 * ```
 */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function contentCost(content: AgentMessage["content"]): { chars: number; imageTokens: number } {
  if (typeof content === "string") return { chars: content.length, imageTokens: 0 };
  let chars = 0;
  let imageTokens = 0;
  for (const block of content) {
    switch (block.type) {
      case "text":
        chars += block.text.length;
        break;
      case "image":
        imageTokens += estimateImageTokens(block);
        break;
      case "thinking":
        chars += block.thinking.length + (block.signature?.length ?? 0);
        break;
      case "toolCall":
        // The model sees the call as its name and JSON arguments, plus the id to pair the result.
        chars += block.id.length + block.name.length + JSON.stringify(block.arguments ?? {}).length;
        break;
    }
  }
  return { chars, imageTokens };
}

function computeEstimate(message: AgentMessage): number {
  if (message.role === "custom" && message.display === "ui-only") return 0;
  const { chars, imageTokens } = contentCost(message.content);
  const extra = message.role === "toolResult" ? message.toolName.length + message.toolCallId.length : 0;
  return MESSAGE_OVERHEAD_TOKENS + Math.ceil((chars + extra) / CHARS_PER_TOKEN) + imageTokens;
}

/**
 * Estimated tokens of one message as the model sees it: characters / 4 for text, thinking and tool
 * calls (name + JSON arguments), images by size, a few tokens of framing; 0 for UI-only custom
 * messages. Cached per message object, so estimating a growing transcript every turn stays linear
 * overall. Messages are treated as immutable; one whose content is replaced or appended to is
 * re-estimated.
 *
 * @example
 * ```ts
 * estimateMessageTokens({ role: "user", content: "x".repeat(400), timestamp: 0 }); // 104
 * ```
 */
export function estimateMessageTokens(message: AgentMessage): number {
  const cached = estimates.get(message);
  const content = message.content;
  const length = typeof content === "string" ? -1 : content.length;
  if (cached && cached.content === content && cached.length === length) return cached.tokens;
  const tokens = computeEstimate(message);
  estimates.set(message, { tokens, content, length });
  return tokens;
}

/**
 * Estimated tokens of a transcript: the sum of `estimateMessageTokens`.
 *
 * @example
 * ```ts
 * if (estimateTokens(agent.messages) > 100_000) console.log("getting long");
 * ```
 */
export function estimateTokens(messages: readonly AgentMessage[]): number {
  let sum = 0;
  for (const message of messages) sum += estimateMessageTokens(message);
  return sum;
}

/**
 * Prompt tokens a provider reported for one call: fresh input plus both cache counts.
 *
 * @example
 * ```ts
 * reportedPromptTokens({ input: 10, output: 5, cacheRead: 90, cacheWrite: 0, totalTokens: 105 }); // 100
 * ```
 */
export function reportedPromptTokens(usage: Usage): number {
  return usage.input + usage.cacheRead + usage.cacheWrite;
}

/**
 * The calibration of one model call: our estimate of the messages sent next to the prompt size
 * the provider reported. Store it and pass it to `isOverBudget` / `compactContext` next time.
 *
 * @example
 * ```ts
 * const calibration = calibrationFromUsage(sentMessages, assistant.usage);
 * ```
 */
export function calibrationFromUsage(sent: readonly AgentMessage[] | readonly Message[], usage: Usage) {
  return {
    estimated: estimateTokens(sent),
    reported: reportedPromptTokens(usage),
  } satisfies TokenCalibration;
}

/**
 * Tokens the provider counted that our estimate of the messages did not: the system prompt, tool
 * schemas, framing, and whatever our characters / 4 rule missed. 0 when unknown or negative (our
 * estimate is then the conservative one).
 *
 * @example
 * ```ts
 * measuredOverhead({ estimated: 1_000, reported: 3_400 }); // 2_400
 * ```
 */
export function measuredOverhead(calibration: TokenCalibration | undefined): number {
  if (!calibration) return 0;
  const { estimated, reported } = calibration;
  if (!Number.isFinite(estimated) || !Number.isFinite(reported) || reported <= 0) return 0;
  return Math.max(0, Math.ceil(reported - estimated));
}

/**
 * Estimated tokens of what a request sends besides the messages: system prompt and tool schemas.
 * A good `systemPromptTokens` before the provider has reported any usage.
 *
 * @example
 * ```ts
 * const context = { maxContextTokens: 32_000, systemPromptTokens: estimateRequestOverhead({ systemPrompt, tools }) };
 * ```
 */
export function estimateRequestOverhead(request: {
  systemPrompt?: string;
  tools?: readonly ToolSpec[];
}): number {
  let chars = request.systemPrompt?.length ?? 0;
  for (const tool of request.tools ?? []) {
    chars += tool.name.length + tool.description.length + JSON.stringify(tool.parameters ?? {}).length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/**
 * The tokens the messages may take: `maxContextTokens` minus the overhead, which is the larger of
 * the configured `systemPromptTokens` and the overhead measured from the last call's usage.
 *
 * @example
 * ```ts
 * contextBudget({ maxContextTokens: 32_000, systemPromptTokens: 2_000 }); // 30_000
 * ```
 */
export function contextBudget(config: ContextConfig, calibration?: TokenCalibration): number {
  const overhead = Math.max(config.systemPromptTokens ?? 0, measuredOverhead(calibration));
  return Math.max(0, Math.floor(config.maxContextTokens - overhead));
}
