import type OpenAI from "openai";
import type { ImageContent, TextContent, Usage } from "../../core/messages.js";
import type { ProviderEvent, ProviderRequest } from "../provider.js";
import { classifyProviderError, truncatedStreamError } from "./errors.js";
import { parseToolArguments } from "./tool-arguments.js";
import { normalizeTranscript } from "./transcript.js";

type InputItem = OpenAI.Responses.ResponseInputItem;
type InputContent = OpenAI.Responses.ResponseInputContent;
type FunctionTool = OpenAI.Responses.FunctionTool;

const dataUrl = (image: ImageContent) => `data:${image.mimeType};base64,${image.data}`;

function inputContent(content: string | (TextContent | ImageContent)[]): InputContent[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  return content.map((c): InputContent =>
    c.type === "text"
      ? { type: "input_text", text: c.text }
      : { type: "input_image", image_url: dataUrl(c), detail: "auto" },
  );
}

/** A reasoning item we stored in a thinking block's signature, if that is what the signature is. */
function reasoningItemFrom(signature: string | undefined): InputItem | undefined {
  if (!signature?.startsWith("{")) return undefined;
  try {
    const item = JSON.parse(signature) as { type?: string };
    return item.type === "reasoning" ? (item as InputItem) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Converts our request to Responses API input items: the system prompt goes to `instructions`,
 * tool calls become `function_call` items and their results `function_call_output` items (with
 * images, as content lists). Reasoning items travel back only when `withReasoning` is on (their
 * encrypted content is kept in the thinking block's `signature`).
 *
 * @example
 * ```ts
 * const { input, tools, instructions } = toResponsesRequest(request, { withReasoning: false });
 * ```
 */
export function toResponsesRequest(
  request: ProviderRequest,
  options: { withReasoning: boolean },
): { input: InputItem[]; tools?: FunctionTool[]; tool_choice?: "none" | "required"; instructions?: string } {
  const input: InputItem[] = [];
  for (const message of normalizeTranscript(request.messages)) {
    if (message.role === "user") {
      input.push({ role: "user", content: inputContent(message.content) });
    } else if (message.role === "assistant") {
      for (const block of message.content) {
        if (block.type === "thinking") {
          const item = options.withReasoning ? reasoningItemFrom(block.signature) : undefined;
          if (item) input.push(item);
        } else if (block.type === "text") {
          if (block.text !== "") input.push({ role: "assistant", content: block.text });
        } else {
          input.push({
            type: "function_call",
            call_id: block.id,
            name: block.name,
            arguments: JSON.stringify(block.arguments),
          });
        }
      }
    } else {
      const hasImage = message.content.some((c) => c.type === "image");
      const text = message.content
        .filter((c): c is TextContent => c.type === "text")
        .map((c) => c.text)
        .join("\n");
      input.push({
        type: "function_call_output",
        call_id: message.toolCallId,
        output: hasImage
          ? (inputContent(message.content) as OpenAI.Responses.ResponseFunctionCallOutputItemList)
          : text,
      });
    }
  }
  const out: {
    input: InputItem[];
    tools?: FunctionTool[];
    tool_choice?: "none" | "required";
    instructions?: string;
  } = {
    input,
  };
  if (request.systemPrompt) out.instructions = request.systemPrompt;
  if (request.tools.length > 0) {
    out.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
    if (request.toolChoice) out.tool_choice = request.toolChoice;
  }
  return out;
}

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
}

function responsesUsage(wire: WireUsage | null | undefined): Usage | undefined {
  if (!wire) return undefined;
  const cacheRead = wire.input_tokens_details?.cached_tokens ?? 0;
  const input = Math.max(0, (wire.input_tokens ?? 0) - cacheRead);
  const output = wire.output_tokens ?? 0;
  return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead };
}

/**
 * Turns a Responses API event stream into provider events, `start` at the first event. Function calls are
 * keyed by their item id and completed at `response.output_item.done`; reasoning summaries become
 * thinking, and with `withReasoning` the finished reasoning item is kept as the block's signature.
 */
export async function* responsesStreamEvents(
  events: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>,
  signal: AbortSignal,
  options: { withReasoning: boolean; secret?: string },
  finish: (usage: Usage | undefined) => Usage | undefined,
): AsyncGenerator<ProviderEvent> {
  const calls = new Map<string, { id: string; name: string; json: string }>();
  let sawToolCall = false;
  let ended: { stopReason: "stop" | "length" | "toolUse"; usage?: Usage } | undefined;

  let started = false;
  for await (const event of events) {
    if (!started) {
      started = true;
      yield { type: "start" };
    }
    switch (event.type) {
      case "response.output_item.added":
        if (event.item.type === "function_call") {
          const id = event.item.call_id;
          calls.set(event.item.id ?? id, { id, name: event.item.name, json: "" });
          sawToolCall = true;
          yield { type: "toolcall_start", id, name: event.item.name };
        }
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (event.delta) yield { type: "text_delta", delta: event.delta };
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        if (event.delta) yield { type: "thinking_delta", delta: event.delta };
        break;
      case "response.function_call_arguments.delta": {
        const call = calls.get(event.item_id);
        if (call) {
          call.json += event.delta;
          yield { type: "toolcall_delta", id: call.id, delta: event.delta };
        }
        break;
      }
      case "response.output_item.done": {
        const item = event.item;
        if (item.type === "function_call") {
          const call = calls.get(item.id ?? item.call_id);
          const raw = item.arguments || call?.json || "";
          yield {
            type: "toolcall_end",
            id: item.call_id,
            name: item.name,
            arguments: parseToolArguments(raw),
          };
        } else if (item.type === "reasoning" && options.withReasoning) {
          yield { type: "thinking_delta", delta: "", signature: JSON.stringify(item) };
        }
        break;
      }
      case "response.completed":
        ended = { stopReason: sawToolCall ? "toolUse" : "stop", usage: responsesUsage(event.response.usage) };
        break;
      case "response.incomplete": {
        const reason = event.response.incomplete_details?.reason;
        // As a Chat Completions content_filter finish: the answer is cut off, and asking again gives the same.
        if (reason === "content_filter") {
          yield {
            type: "error",
            kind: "api",
            message: "The response was cut off by the provider's content filter",
          };
          return;
        }
        ended = {
          stopReason: reason === "max_output_tokens" ? "length" : sawToolCall ? "toolUse" : "stop",
          usage: responsesUsage(event.response.usage),
        };
        break;
      }
      case "response.failed": {
        const failure = event.response.error;
        yield classifyProviderError(
          {
            error: { code: failure?.code ?? "server_error", message: failure?.message ?? "Response failed" },
          },
          signal,
          options.secret,
        );
        return;
      }
      case "error":
        yield classifyProviderError(
          { error: { code: event.code ?? undefined, message: event.message } },
          signal,
          options.secret,
        );
        return;
    }
  }
  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (!ended) {
    yield truncatedStreamError();
    return;
  }
  yield { type: "done", stopReason: ended.stopReason, usage: finish(ended.usage) };
}
