import type { Usage } from "../../core/messages.js";
import type { ProviderEvent } from "../provider.js";
import {
  classifyProviderError,
  type ProviderErrorEvent,
  redactSecrets,
  truncatedStreamError,
} from "./errors.js";
import { GENERATED_CALL_ID_PREFIX, type GeminiPart } from "./gemini-request.js";

/** One chunk of a `streamGenerateContent` stream (the fields we read). */
export interface GeminiChunk {
  candidates?: {
    content?: { role?: string; parts?: GeminiPart[] };
    finishReason?: string;
    finishMessage?: string;
  }[];
  promptFeedback?: { blockReason?: string; blockReasonMessage?: string };
  usageMetadata?: GeminiUsage;
}

interface GeminiUsage {
  promptTokenCount?: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

type StopReason = Extract<ProviderEvent, { type: "done" }>["stopReason"];

/**
 * Gemini usage in our terms: `promptTokenCount` includes the cached tokens, ours keeps them apart;
 * thinking tokens are billed as output.
 */
export function geminiUsage(wire: GeminiUsage): Usage {
  const cacheRead = wire.cachedContentTokenCount ?? 0;
  const input = Math.max(0, (wire.promptTokenCount ?? 0) + (wire.toolUsePromptTokenCount ?? 0) - cacheRead);
  const output = (wire.candidatesTokenCount ?? 0) + (wire.thoughtsTokenCount ?? 0);
  return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead };
}

/** Finish reasons that mean the answer was withheld by a filter: the same request gets the same. */
const BLOCKED_FINISH = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "LANGUAGE",
]);

function blockedError(what: string, reason: string, detail: string | undefined): ProviderErrorEvent {
  return {
    type: "error",
    kind: "api",
    message: `Gemini blocked the ${what} (${reason})${detail ? `: ${detail}` : ""}`,
  };
}

let generatedIds = 0;

/**
 * Turns a Gemini chunk stream into provider events, `start` at the first chunk. Each part is
 * complete when it arrives: a function call is `toolcall_start`, one `toolcall_delta` with its
 * JSON and `toolcall_end` at once (parallel calls are parts of the same chunk, in order). A
 * thought part is thinking; a thought signature comes as an empty `thinking_delta` carrying it,
 * after the part it signs, so it goes back on that part next turn. A safety or recitation finish
 * (or a blocked prompt) ends the stream as an `api` error that names the reason.
 *
 * @example
 * ```ts
 * for await (const event of geminiStreamEvents(chunks, signal, finish)) yield event;
 * ```
 */
export async function* geminiStreamEvents(
  chunks: AsyncIterable<GeminiChunk>,
  signal: AbortSignal,
  finish: (usage: Usage | undefined) => Usage | undefined,
): AsyncGenerator<ProviderEvent> {
  let finishReason: string | undefined;
  let finishMessage: string | undefined;
  // Every chunk carries the running usage: the last one counts, converted once at the end.
  let usage: GeminiUsage | undefined;
  let sawToolCall = false;
  let started = false;
  for await (const chunk of chunks) {
    if (!started) {
      started = true;
      yield { type: "start" };
    }
    if (chunk.usageMetadata) usage = chunk.usageMetadata;
    const blockReason = chunk.promptFeedback?.blockReason;
    if (blockReason) {
      yield blockedError("prompt", blockReason, chunk.promptFeedback?.blockReasonMessage);
      return;
    }
    const candidate = chunk.candidates?.[0];
    if (!candidate) continue;
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall) {
        const call = part.functionCall;
        const id = call.id || `${GENERATED_CALL_ID_PREFIX}${++generatedIds}`;
        const args = call.args ?? {};
        sawToolCall = true;
        yield { type: "toolcall_start", id, name: call.name };
        yield { type: "toolcall_delta", id, delta: JSON.stringify(args) };
        yield { type: "toolcall_end", id, name: call.name, arguments: args };
      } else if (part.thought) {
        if (part.text) yield { type: "thinking_delta", delta: part.text };
      } else if (typeof part.text === "string" && part.text !== "") {
        yield { type: "text_delta", delta: part.text };
      }
      if (part.thoughtSignature)
        yield { type: "thinking_delta", delta: "", signature: part.thoughtSignature };
    }
    if (candidate.finishReason) {
      finishReason = candidate.finishReason;
      finishMessage = candidate.finishMessage;
    }
  }
  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (finishReason === undefined) {
    yield truncatedStreamError();
    return;
  }
  if (BLOCKED_FINISH.has(finishReason)) {
    yield blockedError("response", finishReason, finishMessage);
    return;
  }
  if (finishReason === "MALFORMED_FUNCTION_CALL" || finishReason === "UNEXPECTED_TOOL_CALL") {
    yield {
      type: "error",
      kind: "api",
      message: `Gemini could not produce a valid function call (${finishReason})${finishMessage ? `: ${finishMessage}` : ""}`,
    };
    return;
  }
  const stopReason: StopReason = finishReason === "MAX_TOKENS" ? "length" : sawToolCall ? "toolUse" : "stop";
  yield { type: "done", stopReason, usage: finish(usage && geminiUsage(usage)) };
}

/** The JSON error body the Gemini API answers with, as the SDK puts it in `ApiError.message`. */
interface GoogleErrorBody {
  error?: {
    code?: number;
    message?: string;
    status?: string;
    details?: { "@type"?: string; retryDelay?: string; reason?: string }[];
  };
}

function parseErrorBody(message: string): GoogleErrorBody | undefined {
  const start = message.indexOf("{");
  if (start < 0) return undefined;
  try {
    return JSON.parse(message.slice(start)) as GoogleErrorBody;
  } catch {
    return undefined;
  }
}

/** `RetryInfo.retryDelay` ("22s", "1.5s", "0.250s") in milliseconds. */
export function parseGoogleDuration(value: string | undefined): number | undefined {
  const match = value ? /^(\d+(?:\.\d+)?)s$/.exec(value.trim()) : null;
  return match ? Math.round(Number(match[1]) * 1000) : undefined;
}

/**
 * Maps what the Gemini SDK threw to our error event. Its `ApiError` carries the HTTP status and
 * the error body as JSON text; the body's `status` (`RESOURCE_EXHAUSTED`, `UNAVAILABLE`, ...)
 * and `RetryInfo` detail say more than the HTTP status alone. `headerWaitMs`: the response's
 * `retry-after`, which the error does not keep (the provider reads it), used without a `RetryInfo`.
 *
 * @example
 * ```ts
 * catch (error) { yield classifyGeminiError(error, signal, apiKey, endpoint); }
 * ```
 */
export function classifyGeminiError(
  error: unknown,
  signal: AbortSignal,
  secret?: string,
  endpoint?: string,
  headerWaitMs?: number,
): ProviderErrorEvent {
  const e = error as { name?: string; status?: unknown; message?: unknown };
  if (
    signal.aborted ||
    e?.name !== "ApiError" ||
    typeof e.status !== "number" ||
    typeof e.message !== "string"
  )
    return classifyProviderError(error, signal, secret, endpoint);
  const body = parseErrorBody(e.message)?.error;
  const status = e.status;
  const text = redactSecrets(body?.message ?? e.message, secret);
  const grpc = body?.status;
  const reasons = (body?.details ?? []).map((d) => d.reason);
  // The body's gRPC status decides first; the generic classifier covers the rest (overflow texts too).
  const base = classifyProviderError({ status, error: { message: text } }, signal, secret);
  let kind = base.kind;
  if (reasons.includes("API_KEY_INVALID") || grpc === "UNAUTHENTICATED" || grpc === "PERMISSION_DENIED")
    kind = "auth";
  else if (grpc === "RESOURCE_EXHAUSTED") kind = "rate_limit";
  else if (grpc === "UNAVAILABLE") kind = "overloaded";
  else if (grpc === "DEADLINE_EXCEEDED" || grpc === "INTERNAL") kind = "network";
  const event: ProviderErrorEvent = {
    type: "error",
    kind,
    message: `${status}${grpc ? ` ${grpc}` : ""} ${text}`,
  };
  const retryInfo = body?.details?.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo"));
  const retryAfterMs = parseGoogleDuration(retryInfo?.retryDelay) ?? headerWaitMs;
  if (retryAfterMs !== undefined && (kind === "rate_limit" || kind === "overloaded" || kind === "network"))
    event.retryAfterMs = retryAfterMs;
  return event;
}
