/**
 * Builders of each API's documented streaming wire format, for the fixture server. The event
 * names, field names and block order follow the official API references (Anthropic "Streaming
 * Messages", OpenAI "Chat Completions streaming" and "Responses streaming events").
 */
import { AUTO_USAGE, type FixtureReply, type SSEFrame } from "./provider-server.js";

// ---------------------------------------------------------------- Anthropic Messages API

export type AnthropicBlock =
  | { type: "text"; text: string[] }
  | { type: "thinking"; thinking: string[]; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; json: string[] };

export interface AnthropicMessageOptions {
  blocks: AnthropicBlock[];
  /** Default: `tool_use` when a block is one, else `end_turn`. */
  stopReason?: string;
  /** Default: the server computes input and cache tokens from the request (prompt cache model). */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  model?: string;
}

/** A whole Messages API stream: message_start, a ping, each block's start/deltas/stop, message_delta, message_stop. */
export function anthropicMessage(options: AnthropicMessageOptions): SSEFrame[] {
  const stopReason =
    options.stopReason ?? (options.blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  const usage = options.usage;
  const frames: SSEFrame[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_01FixtureServer0000000001",
          type: "message",
          role: "assistant",
          content: [],
          model: options.model ?? "claude-haiku-4-5-20251001",
          stop_reason: null,
          stop_sequence: null,
          usage: usage
            ? {
                input_tokens: usage.input,
                cache_creation_input_tokens: usage.cacheWrite ?? 0,
                cache_read_input_tokens: usage.cacheRead ?? 0,
                output_tokens: 1,
              }
            : { input_tokens: AUTO_USAGE, output_tokens: 1 },
        },
      },
    },
  ];
  options.blocks.forEach((block, index) => {
    switch (block.type) {
      case "text":
        frames.push({
          event: "content_block_start",
          data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        });
        if (index === 0) frames.push({ event: "ping", data: { type: "ping" } });
        for (const text of block.text) {
          frames.push({
            event: "content_block_delta",
            data: { type: "content_block_delta", index, delta: { type: "text_delta", text } },
          });
        }
        break;
      case "thinking":
        frames.push({
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index,
            content_block: { type: "thinking", thinking: "", signature: "" },
          },
        });
        if (index === 0) frames.push({ event: "ping", data: { type: "ping" } });
        for (const thinking of block.thinking) {
          frames.push({
            event: "content_block_delta",
            data: { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } },
          });
        }
        frames.push({
          event: "content_block_delta",
          data: {
            type: "content_block_delta",
            index,
            delta: { type: "signature_delta", signature: block.signature },
          },
        });
        break;
      case "redacted_thinking":
        frames.push({
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index,
            content_block: { type: "redacted_thinking", data: block.data },
          },
        });
        break;
      case "tool_use":
        frames.push({
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index,
            content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
          },
        });
        if (index === 0) frames.push({ event: "ping", data: { type: "ping" } });
        for (const partial_json of block.json) {
          frames.push({
            event: "content_block_delta",
            data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
          });
        }
        break;
    }
    frames.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  frames.push({
    event: "message_delta",
    data: {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: usage?.output ?? 12 },
    },
  });
  frames.push({ event: "message_stop", data: { type: "message_stop" } });
  return frames;
}

/** The `event: error` frame Anthropic sends inside a 200 stream. */
export function anthropicErrorFrame(type: string, message: string): SSEFrame {
  return { event: "error", data: { type: "error", error: { type, message } } };
}

/** An Anthropic HTTP error reply. */
export function anthropicHttpError(
  status: number,
  type: string,
  message: string,
  headers?: Record<string, string>,
): FixtureReply {
  return { type: "json", status, headers, body: { type: "error", error: { type, message } } };
}

// ---------------------------------------------------------------- OpenAI Chat Completions

export interface ChatToolCallScript {
  index: number;
  id: string;
  name: string;
  json: string[];
}

export interface ChatStreamOptions {
  text?: string[];
  /** Sent as `reasoning_content` (DeepSeek, vLLM, llama.cpp style). */
  reasoning?: string[];
  toolCalls?: ChatToolCallScript[];
  /** Interleave the calls' argument fragments by index (call 0, call 1, call 0, ...). */
  interleave?: boolean;
  finishReason?: string;
  usage?: { prompt: number; completion: number; cached?: number };
  model?: string;
  /** Leave out the final usage chunk and `[DONE]` (e.g. before injecting a fault). */
  open?: boolean;
}

/** A whole Chat Completions stream: chunks, the finish chunk, the usage chunk, `data: [DONE]`. */
export function chatStream(options: ChatStreamOptions): SSEFrame[] {
  const model = options.model ?? "gpt-4.1-2025-04-14";
  const chunk = (delta: object, finish_reason: string | null = null): SSEFrame => ({
    data: {
      id: "chatcmpl-Fixture0001",
      object: "chat.completion.chunk",
      created: 1_763_000_000,
      model,
      system_fingerprint: "fp_fixture",
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
      usage: null,
    },
  });
  const frames: SSEFrame[] = [chunk({ role: "assistant", content: "", refusal: null })];
  for (const r of options.reasoning ?? []) frames.push(chunk({ reasoning_content: r }));
  for (const t of options.text ?? []) frames.push(chunk({ content: t }));
  const calls = options.toolCalls ?? [];
  for (const call of calls) {
    if (options.interleave) {
      frames.push(
        chunk({
          tool_calls: [
            {
              index: call.index,
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: "" },
            },
          ],
        }),
      );
    }
  }
  if (options.interleave) {
    const longest = Math.max(0, ...calls.map((c) => c.json.length));
    for (let i = 0; i < longest; i++) {
      for (const call of calls) {
        if (i < call.json.length)
          frames.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: call.json[i] } }] }));
      }
    }
  } else {
    for (const call of calls) {
      frames.push(
        chunk({
          tool_calls: [
            {
              index: call.index,
              id: call.id,
              type: "function",
              function: { name: call.name, arguments: "" },
            },
          ],
        }),
      );
      for (const arg of call.json)
        frames.push(chunk({ tool_calls: [{ index: call.index, function: { arguments: arg } }] }));
    }
  }
  if (options.open) return frames;
  frames.push(chunk({}, options.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop")));
  const usage = options.usage ?? { prompt: 50, completion: 12 };
  frames.push({
    data: {
      id: "chatcmpl-Fixture0001",
      object: "chat.completion.chunk",
      created: 1_763_000_000,
      model,
      system_fingerprint: "fp_fixture",
      choices: [],
      usage: {
        prompt_tokens: usage.prompt,
        completion_tokens: usage.completion,
        total_tokens: usage.prompt + usage.completion,
        prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    },
  });
  frames.push({ data: "[DONE]" });
  return frames;
}

/** An OpenAI-style HTTP error reply (`{ error: { message, type, param, code } }`). */
export function openaiHttpError(
  status: number,
  message: string,
  code: string | null = null,
  type = "invalid_request_error",
  headers?: Record<string, string>,
): FixtureReply {
  return { type: "json", status, headers, body: { error: { message, type, param: null, code } } };
}

// ---------------------------------------------------------------- OpenAI Responses API

export interface ResponsesStreamOptions {
  reasoning?: { id: string; summary: string[]; encrypted?: string };
  text?: string[];
  functionCalls?: { id: string; callId: string; name: string; json: string[] }[];
  status?: "completed" | "incomplete";
  usage?: { input: number; output: number; cached?: number };
  model?: string;
}

/** A whole Responses API stream, from `response.created` to `response.completed`. */
export function responsesStream(options: ResponsesStreamOptions): SSEFrame[] {
  let seq = 0;
  const frames: SSEFrame[] = [];
  const emit = (type: string, fields: object) =>
    frames.push({ event: type, data: { type, sequence_number: seq++, ...fields } });
  const model = options.model ?? "gpt-4.1-2025-04-14";
  const base = {
    id: "resp_fixture0001",
    object: "response",
    created_at: 1_763_000_000,
    model,
    output: [] as unknown[],
    usage: null,
  };
  emit("response.created", { response: { ...base, status: "in_progress" } });
  emit("response.in_progress", { response: { ...base, status: "in_progress" } });
  const output: unknown[] = [];
  let outputIndex = 0;
  if (options.reasoning) {
    const r = options.reasoning;
    const index = outputIndex++;
    emit("response.output_item.added", {
      output_index: index,
      item: { id: r.id, type: "reasoning", summary: [] },
    });
    r.summary.forEach((text, summary_index) => {
      emit("response.reasoning_summary_part.added", {
        item_id: r.id,
        output_index: index,
        summary_index,
        part: { type: "summary_text", text: "" },
      });
      emit("response.reasoning_summary_text.delta", {
        item_id: r.id,
        output_index: index,
        summary_index,
        delta: text,
      });
      emit("response.reasoning_summary_text.done", {
        item_id: r.id,
        output_index: index,
        summary_index,
        text,
      });
      emit("response.reasoning_summary_part.done", {
        item_id: r.id,
        output_index: index,
        summary_index,
        part: { type: "summary_text", text },
      });
    });
    const item = {
      id: r.id,
      type: "reasoning",
      summary: r.summary.map((text) => ({ type: "summary_text", text })),
      ...(r.encrypted ? { encrypted_content: r.encrypted } : {}),
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
  }
  if (options.text) {
    const index = outputIndex++;
    const id = "msg_fixture0001";
    const full = options.text.join("");
    emit("response.output_item.added", {
      output_index: index,
      item: { id, type: "message", status: "in_progress", content: [], role: "assistant" },
    });
    emit("response.content_part.added", {
      item_id: id,
      output_index: index,
      content_index: 0,
      part: { type: "output_text", annotations: [], text: "" },
    });
    for (const delta of options.text) {
      emit("response.output_text.delta", {
        item_id: id,
        output_index: index,
        content_index: 0,
        delta,
        logprobs: [],
      });
    }
    emit("response.output_text.done", {
      item_id: id,
      output_index: index,
      content_index: 0,
      text: full,
      logprobs: [],
    });
    const part = { type: "output_text", annotations: [], text: full };
    emit("response.content_part.done", { item_id: id, output_index: index, content_index: 0, part });
    const item = { id, type: "message", status: "completed", content: [part], role: "assistant" };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
  }
  for (const call of options.functionCalls ?? []) {
    const index = outputIndex++;
    const args = call.json.join("");
    emit("response.output_item.added", {
      output_index: index,
      item: {
        id: call.id,
        type: "function_call",
        status: "in_progress",
        arguments: "",
        call_id: call.callId,
        name: call.name,
      },
    });
    for (const delta of call.json)
      emit("response.function_call_arguments.delta", { item_id: call.id, output_index: index, delta });
    emit("response.function_call_arguments.done", { item_id: call.id, output_index: index, arguments: args });
    const item = {
      id: call.id,
      type: "function_call",
      status: "completed",
      arguments: args,
      call_id: call.callId,
      name: call.name,
    };
    emit("response.output_item.done", { output_index: index, item });
    output.push(item);
  }
  const u = options.usage ?? { input: 60, output: 14 };
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input + u.output,
  };
  const status = options.status ?? "completed";
  emit(status === "completed" ? "response.completed" : "response.incomplete", {
    response: {
      ...base,
      status,
      output,
      usage,
      ...(status === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
    },
  });
  return frames;
}

/** The Responses API's in-stream `error` event. */
export function responsesErrorFrame(code: string, message: string): SSEFrame {
  return { event: "error", data: { type: "error", code, message, param: null, sequence_number: 99 } };
}
