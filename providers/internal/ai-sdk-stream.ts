import type { Usage } from "../../core/messages.js";
import type { ProviderEvent } from "../provider.js";
import { AI_SDK_CALL_METADATA_PREFIX, AI_SDK_METADATA_PREFIX } from "./ai-sdk-prompt.js";
import { classifyProviderError, type ProviderErrorEvent, truncatedStreamError } from "./errors.js";
import { parseToolArguments } from "./tool-arguments.js";

/** A part of a `doStream` stream (`LanguageModelV2/V3/V4StreamPart`), the fields we read. */
export interface AiSdkStreamPart {
  type: string;
  id?: string;
  delta?: string;
  toolName?: string;
  toolCallId?: string;
  input?: string;
  providerExecuted?: boolean;
  providerMetadata?: Record<string, unknown>;
  finishReason?: string | { unified: string; raw?: string };
  usage?: AiSdkUsage;
  error?: unknown;
}

/** V2 usage is flat; V3 and V4 split input and output. */
type AiSdkUsage =
  | { inputTokens?: number; outputTokens?: number; cachedInputTokens?: number; reasoningTokens?: number }
  | {
      inputTokens: { total?: number; noCache?: number; cacheRead?: number; cacheWrite?: number };
      outputTokens: { total?: number };
    };

type StopReason = Extract<ProviderEvent, { type: "done" }>["stopReason"];

/** Usage of either shape in our terms (`input` without the cached tokens). */
export function aiSdkUsage(usage: AiSdkUsage | undefined): Usage | undefined {
  if (!usage) return undefined;
  let input: number;
  let output: number;
  let cacheRead: number;
  let cacheWrite = 0;
  if (typeof usage.inputTokens === "object" && usage.inputTokens !== null) {
    const u = usage as Extract<AiSdkUsage, { inputTokens: object }>;
    cacheRead = u.inputTokens.cacheRead ?? 0;
    cacheWrite = u.inputTokens.cacheWrite ?? 0;
    input = u.inputTokens.noCache ?? Math.max(0, (u.inputTokens.total ?? 0) - cacheRead - cacheWrite);
    output = u.outputTokens?.total ?? 0;
  } else {
    const u = usage as Exclude<AiSdkUsage, { inputTokens: object }>;
    cacheRead = u.cachedInputTokens ?? 0;
    input = Math.max(0, (u.inputTokens ?? 0) - cacheRead);
    output = u.outputTokens ?? 0;
  }
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite };
}

/** A header record (as `APICallError.responseHeaders` has it) read like `Headers`. */
function headerSource(headers: Record<string, string> | undefined) {
  if (!headers) return undefined;
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { get: (name: string) => lower.get(name.toLowerCase()) ?? null };
}

function parseBody(body: string | undefined): unknown {
  if (!body) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/**
 * Maps an AI SDK error (an `APICallError` with `statusCode`, `responseHeaders`, `responseBody`
 * and `isRetryable`, a `LoadAPIKeyError`, or anything a provider put in an `error` part) to our
 * error event: the status and body decide as for the other providers, `retry-after(-ms)` gives
 * `retryAfterMs`, and a failure without a status that the SDK calls retryable is `network`.
 *
 * @example
 * ```ts
 * yield classifyAiSdkError(part.error, signal);
 * ```
 */
export function classifyAiSdkError(error: unknown, signal: AbortSignal): ProviderErrorEvent {
  const e = (error ?? {}) as {
    name?: string;
    statusCode?: number;
    responseHeaders?: Record<string, string>;
    responseBody?: string;
    isRetryable?: boolean;
    data?: unknown;
    message?: string;
    cause?: unknown;
    url?: string;
  };
  if (e.name === "AI_LoadAPIKeyError")
    return { type: "error", kind: "auth", message: e.message ?? "No API key" };
  if (e.name !== "AI_APICallError") return classifyProviderError(error, signal);
  // "Failed to process successful response": reading a 200 failed, the cause says how.
  if (e.statusCode !== undefined && e.statusCode < 300 && e.cause !== undefined) {
    const inner = classifyProviderError(e.cause, signal);
    return { ...inner, message: `${e.message}: ${inner.message}` };
  }
  const event = classifyProviderError(
    {
      status: e.statusCode,
      headers: headerSource(e.responseHeaders),
      error: e.data ?? parseBody(e.responseBody),
      message: e.message,
      cause: e.cause,
    },
    signal,
    undefined,
    typeof e.url === "string" ? e.url : undefined,
  );
  if (e.statusCode === undefined && e.isRetryable && event.kind === "api") event.kind = "network";
  return event;
}

function mapFinishReason(reason: AiSdkStreamPart["finishReason"], sawToolCall: boolean): string {
  const unified = typeof reason === "object" && reason !== null ? reason.unified : (reason ?? "other");
  if (unified === "length" || unified === "content-filter" || unified === "error") return unified;
  return unified === "tool-calls" || sawToolCall ? "toolUse" : "stop";
}

interface CallState {
  name: string;
  json: string;
  /** Provider metadata a `tool-input-start` carried (a `tool-call` may add to it). */
  metadata?: Record<string, unknown>;
}

/** A reasoning block's provider metadata so far, whether its last addition went out, whether it has text. */
interface ReasoningState {
  metadata?: Record<string, unknown>;
  unsent: boolean;
  text: boolean;
}

/** Whether a part carries provider metadata worth keeping. */
function hasMetadata(metadata: Record<string, unknown> | undefined): metadata is Record<string, unknown> {
  return metadata !== undefined && metadata !== null && Object.keys(metadata).length > 0;
}

/**
 * Provider metadata merged per provider key: a package may spread one block's metadata over
 * several parts (`@ai-sdk/anthropic` puts the signature on an empty `reasoning-delta`, redacted
 * data on `reasoning-start`), and every piece must go back.
 */
function mergeProviderMetadata(
  into: Record<string, unknown> | undefined,
  more: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  if (!hasMetadata(more)) return into;
  const merged: Record<string, unknown> = { ...into };
  for (const [key, value] of Object.entries(more)) {
    const before = merged[key];
    merged[key] =
      before && typeof before === "object" && value && typeof value === "object"
        ? { ...before, ...value }
        : value;
  }
  return merged;
}

/**
 * The thinking delta that carries a reasoning block's metadata: set on the block's text, or, for
 * a block with no text (Anthropic's redacted thinking, an encrypted reasoning item), a block of its
 * own marked redacted.
 */
function reasoningSignature(state: ReasoningState): ProviderEvent {
  state.unsent = false;
  const signature = AI_SDK_METADATA_PREFIX + JSON.stringify(state.metadata);
  return state.text
    ? { type: "thinking_delta", delta: "", signature }
    : { type: "thinking_delta", delta: "", signature, redacted: true };
}

/**
 * Turns a `doStream` part stream into provider events, `start` at the first part: text and
 * reasoning deltas as they come; a tool call from `tool-input-start` (its deltas streamed) or,
 * for providers that send calls whole, from `tool-call` alone, completed by `tool-call` with its
 * final input. Calls the provider ran itself (`providerExecuted`) are not ours to run and are
 * left out. A reasoning part's provider metadata (a signature) comes as an empty thinking delta
 * whose signature holds it. The first `error` part ends the stream; a `content-filter` finish is
 * an `api` error.
 *
 * @example
 * ```ts
 * yield* aiSdkStreamEvents(result.stream, signal, finish);
 * ```
 */
export async function* aiSdkStreamEvents(
  stream: ReadableStream<AiSdkStreamPart>,
  signal: AbortSignal,
  finish: (usage: Usage | undefined) => Usage | undefined,
): AsyncGenerator<ProviderEvent> {
  const reader = stream.getReader();
  const calls = new Map<string, CallState>();
  const reasoning = new Map<string, ReasoningState>();
  const ended = new Set<string>();
  let finished: AiSdkStreamPart | undefined;
  let sawToolCall = false;
  let started = false;
  // The signal alone may not stop a model's stream (a package that ignores it): cancelling the
  // stream does, and ends a read that would otherwise wait forever.
  const cancel = () => void reader.cancel(signal.reason).catch(() => {});
  if (signal.aborted) cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  try {
    while (true) {
      const { done, value: part } = await reader.read();
      if (done) break;
      if (!started) {
        started = true;
        yield { type: "start" };
      }
      switch (part.type) {
        case "text-delta":
          if (part.delta) yield { type: "text_delta", delta: part.delta };
          break;
        case "reasoning-start":
        case "reasoning-delta":
        case "reasoning-end": {
          // Metadata may come on any of the three (@ai-sdk/anthropic: the signature on an empty
          // delta, redacted data on the start); it goes out after the text, or at the end.
          const id = part.id ?? "";
          let state = reasoning.get(id);
          if (!state) reasoning.set(id, (state = { unsent: false, text: false }));
          if (part.type === "reasoning-delta" && part.delta) {
            state.text = true;
            yield { type: "thinking_delta", delta: part.delta };
          }
          if (hasMetadata(part.providerMetadata)) {
            state.metadata = mergeProviderMetadata(state.metadata, part.providerMetadata);
            state.unsent = true;
          }
          const ending = part.type === "reasoning-end";
          if (state.unsent && (ending || (state.text && part.type === "reasoning-delta")))
            yield reasoningSignature(state);
          if (ending) reasoning.delete(id);
          break;
        }
        case "tool-input-start": {
          const id = part.id as string;
          if (part.providerExecuted || calls.has(id)) break;
          calls.set(id, {
            name: part.toolName as string,
            json: "",
            ...(hasMetadata(part.providerMetadata) && { metadata: part.providerMetadata }),
          });
          sawToolCall = true;
          yield { type: "toolcall_start", id, name: part.toolName as string };
          break;
        }
        case "tool-input-delta": {
          const call = calls.get(part.id as string);
          if (!call || !part.delta) break;
          call.json += part.delta;
          yield { type: "toolcall_delta", id: part.id as string, delta: part.delta };
          break;
        }
        case "tool-call": {
          const id = part.toolCallId as string;
          if (part.providerExecuted || ended.has(id)) break;
          const input = part.input ?? "";
          if (!calls.has(id)) {
            calls.set(id, { name: part.toolName as string, json: input });
            sawToolCall = true;
            yield { type: "toolcall_start", id, name: part.toolName as string };
            if (input) yield { type: "toolcall_delta", id, delta: input };
          }
          ended.add(id);
          yield {
            type: "toolcall_end",
            id,
            name: part.toolName as string,
            arguments: parseToolArguments(input),
          };
          const metadata = mergeProviderMetadata(calls.get(id)?.metadata, part.providerMetadata);
          if (metadata) yield callMetadataEvent(id, metadata);
          break;
        }
        case "finish":
          finished = part;
          break;
        case "error":
          yield classifyAiSdkError(part.error, signal);
          return;
      }
    }
  } finally {
    signal.removeEventListener("abort", cancel);
    // Stops the provider's request when we end early (an error part, or the consumer returned).
    reader.cancel().catch(() => {});
  }
  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (!finished) {
    yield truncatedStreamError();
    return;
  }
  // Calls whose input streamed but whose `tool-call` never came are completed from what streamed.
  for (const [id, call] of calls) {
    if (ended.has(id)) continue;
    yield { type: "toolcall_end", id, name: call.name, arguments: parseToolArguments(call.json) };
    if (call.metadata) yield callMetadataEvent(id, call.metadata);
  }
  const reason = mapFinishReason(finished.finishReason, sawToolCall);
  if (reason === "content-filter" || reason === "error") {
    yield {
      type: "error",
      kind: "api",
      message:
        reason === "content-filter"
          ? "The response was cut off by the provider's content filter"
          : "The provider ended the response with an error",
    };
    return;
  }
  yield { type: "done", stopReason: reason as StopReason, usage: finish(aiSdkUsage(finished.usage)) };
}

/**
 * A tool call's provider metadata (Gemini's thought signature, say), kept as an empty thinking
 * block right after the call, so the next request can put it back on that call.
 */
function callMetadataEvent(toolCallId: string, providerMetadata: Record<string, unknown>): ProviderEvent {
  return {
    type: "thinking_delta",
    delta: "",
    signature: AI_SDK_CALL_METADATA_PREFIX + JSON.stringify({ toolCallId, providerMetadata }),
  };
}
