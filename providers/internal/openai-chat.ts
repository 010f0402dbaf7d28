import type OpenAI from "openai";
import type { ImageContent, Message, TextContent, Usage } from "../../core/messages.js";
import type { ProviderEvent, ProviderRequest } from "../provider.js";
import { classifyProviderError, type ProviderErrorEvent, truncatedStreamError } from "./errors.js";
import { parseToolArguments } from "./tool-arguments.js";
import { normalizeTranscript } from "./transcript.js";

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
type ContentPart = OpenAI.Chat.Completions.ChatCompletionContentPart;
type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;
type StopReason = Extract<ProviderEvent, { type: "done" }>["stopReason"];

const dataUrl = (image: ImageContent) => `data:${image.mimeType};base64,${image.data}`;

function textOnly(content: (TextContent | ImageContent)[]): string {
  return content
    .filter((c): c is TextContent => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

function userContent(content: string | (TextContent | ImageContent)[]): string | ContentPart[] {
  if (typeof content === "string") return content;
  if (content.every((c) => c.type === "text")) return textOnly(content);
  return content.map((c): ContentPart =>
    c.type === "text"
      ? { type: "text", text: c.text }
      : { type: "image_url", image_url: { url: dataUrl(c) } },
  );
}

/**
 * Converts our request to Chat Completions messages and tools. Tool results become `tool`
 * messages right after their assistant message; a tool message can carry text only, so images
 * from tool results follow in one user message after the run of results. Thinking is not sent
 * back (the API has no field for it).
 *
 * @example
 * ```ts
 * const { messages, tools } = toChatRequest(request);
 * ```
 */
export function toChatRequest(request: ProviderRequest): {
  messages: ChatMessage[];
  tools?: ChatTool[];
  tool_choice?: "none" | "required";
} {
  const messages: ChatMessage[] = [];
  if (request.systemPrompt) messages.push({ role: "system", content: request.systemPrompt });
  let pendingImages: ImageContent[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    messages.push({
      role: "user",
      content: [
        { type: "text", text: "Images returned by the tool calls above:" },
        ...pendingImages.map((image): ContentPart => ({
          type: "image_url",
          image_url: { url: dataUrl(image) },
        })),
      ],
    });
    pendingImages = [];
  };

  for (const message of normalizeTranscript(request.messages) as Message[]) {
    if (message.role !== "toolResult") flushImages();
    if (message.role === "user") {
      messages.push({ role: "user", content: userContent(message.content) });
    } else if (message.role === "assistant") {
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("");
      const toolCalls = message.content.flatMap((c) =>
        c.type === "toolCall"
          ? [
              {
                id: c.id,
                type: "function" as const,
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              },
            ]
          : [],
      );
      if (text === "" && toolCalls.length === 0) continue;
      messages.push({
        role: "assistant",
        content: text === "" ? null : text,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      });
    } else {
      const text = textOnly(message.content);
      pendingImages.push(...message.content.filter((c): c is ImageContent => c.type === "image"));
      messages.push({
        role: "tool",
        tool_call_id: message.toolCallId,
        content: text === "" ? "(no output)" : text,
      });
    }
  }
  flushImages();

  if (request.tools.length === 0) return { messages };
  const tools = request.tools.map((tool): ChatTool => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  return { messages, tools, ...(request.toolChoice && { tool_choice: request.toolChoice }) };
}

function mapFinishReason(reason: string | null, sawToolCall: boolean): StopReason {
  if (reason === "length") return "length";
  if (reason === "tool_calls" || reason === "function_call" || sawToolCall) return "toolUse";
  return "stop";
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** Chat usage counts cached tokens inside `prompt_tokens`; ours keeps them apart. */
export function chatUsage(wire: WireUsage): Usage {
  const cacheRead = wire.prompt_tokens_details?.cached_tokens ?? 0;
  const input = Math.max(0, (wire.prompt_tokens ?? 0) - cacheRead);
  const output = wire.completion_tokens ?? 0;
  return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead };
}

interface CallState {
  id: string;
  name: string;
  json: string;
  started: boolean;
}

/**
 * Turns a Chat Completions chunk stream into provider events, `start` at the first chunk. Tool calls arrive as
 * fragments keyed by `index`, possibly interleaved; each is announced once its id and name are
 * known and completed when the choice finishes. `reasoning_content` / `reasoning` (DeepSeek,
 * vLLM, llama.cpp, OpenRouter, Ollama) become thinking.
 */
export async function* chatStreamEvents(
  chunks: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>,
  signal: AbortSignal,
  finish: (usage: Usage | undefined) => Usage | undefined,
): AsyncGenerator<ProviderEvent> {
  const calls = new Map<number, CallState>();
  let finishReason: string | null = null;
  let usage: Usage | undefined;
  let sawToolCall = false;

  let started = false;
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield { type: "start" };
    }
    if (chunk.usage) usage = chatUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & {
      reasoning_content?: string | null;
      reasoning?: string | null;
    };
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") yield { type: "thinking_delta", delta: reasoning };
    if (typeof delta.content === "string" && delta.content !== "")
      yield { type: "text_delta", delta: delta.content };
    for (const fragment of delta.tool_calls ?? []) {
      const index = fragment.index ?? 0;
      let call = calls.get(index);
      if (!call) {
        call = { id: "", name: "", json: "", started: false };
        calls.set(index, call);
      }
      if (fragment.id && !call.started) call.id = fragment.id;
      if (fragment.function?.name && !call.started) call.name += fragment.function.name;
      const args = fragment.function?.arguments ?? "";
      call.json += args;
      if (!call.started && call.name) {
        // Some local servers never send an id; the transcript still needs one per call.
        if (!call.id) call.id = `call_${index}_${Math.random().toString(36).slice(2, 10)}`;
        call.started = true;
        sawToolCall = true;
        yield { type: "toolcall_start", id: call.id, name: call.name };
        if (call.json) yield { type: "toolcall_delta", id: call.id, delta: call.json };
      } else if (call.started && args) {
        yield { type: "toolcall_delta", id: call.id, delta: args };
      }
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }

  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (finishReason === null) {
    yield truncatedStreamError();
    return;
  }
  for (const index of [...calls.keys()].sort((a, b) => a - b)) {
    const call = calls.get(index) as CallState;
    if (!call.started) continue;
    yield { type: "toolcall_end", id: call.id, name: call.name, arguments: parseToolArguments(call.json) };
  }
  if (finishReason === "content_filter") {
    yield {
      type: "error",
      kind: "api",
      message: "The response was cut off by the provider's content filter",
    };
    return;
  }
  yield { type: "done", stopReason: mapFinishReason(finishReason, sawToolCall), usage: finish(usage) };
}

/** Wraps one streamed call so that every failure, when opening or reading, ends it as one `error`. */
export async function* guardedStream(
  open: () => Promise<AsyncIterable<ProviderEvent>>,
  signal: AbortSignal,
  secret: string | undefined,
  endpoint?: string,
): AsyncGenerator<ProviderEvent> {
  try {
    yield* await open();
  } catch (error) {
    const event: ProviderErrorEvent = classifyProviderError(error, signal, secret, endpoint);
    yield event;
  }
}
