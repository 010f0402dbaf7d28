import type Anthropic from "@anthropic-ai/sdk";
import type { Usage } from "../../core/messages.js";
import type { ProviderEvent } from "../provider.js";
import { truncatedStreamError } from "./errors.js";
import { parseToolArguments } from "./tool-arguments.js";

type StopReason = Extract<ProviderEvent, { type: "done" }>["stopReason"];

function mapStopReason(reason: string | null | undefined, sawToolCall: boolean): StopReason {
  switch (reason) {
    case "tool_use":
      return "toolUse";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "end_turn":
    case "stop_sequence":
    case "refusal":
    case "pause_turn":
      return "stop";
    default:
      return sawToolCall ? "toolUse" : "stop";
  }
}

interface WireUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  /** Of the cache writes, how many per lifetime (absent on older API versions). */
  cache_creation?: {
    ephemeral_5m_input_tokens?: number | null;
    ephemeral_1h_input_tokens?: number | null;
  } | null;
}

function mergeUsage(usage: Usage, wire: WireUsage | null | undefined): Usage {
  if (!wire) return usage;
  const next = { ...usage };
  if (wire.input_tokens != null) next.input = wire.input_tokens;
  if (wire.output_tokens != null) next.output = wire.output_tokens;
  if (wire.cache_read_input_tokens != null) next.cacheRead = wire.cache_read_input_tokens;
  if (wire.cache_creation_input_tokens != null) next.cacheWrite = wire.cache_creation_input_tokens;
  const long = wire.cache_creation?.ephemeral_1h_input_tokens;
  if (long) next.cacheWriteLong = long;
  next.totalTokens = next.input + next.output + next.cacheRead + next.cacheWrite;
  return next;
}

/**
 * Turns a Messages API event stream into provider events, `start` at the first event (an HTTP
 * error must not open a message): text and thinking deltas, the thinking block's signature (the
 * whole signature so far), redacted thinking, tool use from its block start, input deltas and block
 * stop. The stream is done at `message_stop`; one that ends before it is a `network` error.
 *
 * @example
 * ```ts
 * yield* anthropicStreamEvents(await client.messages.create({ ...body, stream: true }), signal, finish);
 * ```
 */
export async function* anthropicStreamEvents(
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>,
  signal: AbortSignal,
  finish: (usage: Usage) => Usage,
): AsyncGenerator<ProviderEvent> {
  let usage: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 };
  let stopReason: string | null | undefined;
  let finished = false;
  let sawToolCall = false;
  const blocks = new Map<
    number,
    { kind: string; id?: string; name?: string; json: string; signature: string }
  >();

  let started = false;
  for await (const event of events) {
    // `start` waits for the first event: an HTTP error must not open a message.
    if (!started) {
      started = true;
      yield { type: "start" };
    }
    switch (event.type) {
      case "message_start":
        usage = mergeUsage(usage, event.message.usage);
        break;
      case "content_block_start": {
        const block = event.content_block;
        const state = { kind: block.type, json: "", signature: "" } as {
          kind: string;
          id?: string;
          name?: string;
          json: string;
          signature: string;
        };
        blocks.set(event.index, state);
        if (block.type === "text") {
          if (block.text) yield { type: "text_delta", delta: block.text };
        } else if (block.type === "thinking") {
          if (block.thinking) yield { type: "thinking_delta", delta: block.thinking };
        } else if (block.type === "redacted_thinking") {
          yield { type: "thinking_delta", delta: "", redacted: true, signature: block.data };
        } else if (block.type === "tool_use") {
          state.id = block.id;
          state.name = block.name;
          sawToolCall = true;
          yield { type: "toolcall_start", id: block.id, name: block.name };
        }
        break;
      }
      case "content_block_delta": {
        const state = blocks.get(event.index);
        const delta = event.delta;
        if (delta.type === "text_delta") yield { type: "text_delta", delta: delta.text };
        else if (delta.type === "thinking_delta") yield { type: "thinking_delta", delta: delta.thinking };
        else if (delta.type === "signature_delta" && state) {
          state.signature += delta.signature;
          yield { type: "thinking_delta", delta: "", signature: state.signature };
        } else if (delta.type === "input_json_delta" && state?.id && delta.partial_json !== "") {
          state.json += delta.partial_json;
          yield { type: "toolcall_delta", id: state.id, delta: delta.partial_json };
        }
        break;
      }
      case "content_block_stop": {
        const state = blocks.get(event.index);
        if (state?.kind === "tool_use" && state.id && state.name) {
          yield {
            type: "toolcall_end",
            id: state.id,
            name: state.name,
            arguments: parseToolArguments(state.json),
          };
        }
        break;
      }
      case "message_delta":
        stopReason = event.delta.stop_reason ?? stopReason;
        usage = mergeUsage(usage, event.usage as WireUsage);
        break;
      case "message_stop":
        finished = true;
        break;
    }
  }
  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (!finished) {
    yield truncatedStreamError();
    return;
  }
  yield {
    type: "done",
    stopReason: mapStopReason(stopReason, sawToolCall),
    usage: finish(usage),
  };
}
