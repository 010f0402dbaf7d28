import type { Usage } from "../../core/messages.js";
import { isRetryableKind, type ProviderErrorKind, type ProviderEvent } from "../provider.js";
import {
  classifyProviderError,
  isContextOverflowText,
  parseRetryAfterMs,
  type ProviderErrorEvent,
  redactSecrets,
  truncatedStreamError,
} from "./errors.js";
import { bytesToBase64 } from "./base64.js";
import { parseToolArguments } from "./tool-arguments.js";

/** One event of a `ConverseStream` output (the members we read), as the SDK yields it. */
export interface BedrockStreamEvent {
  messageStart?: { role?: string };
  contentBlockStart?: {
    contentBlockIndex?: number;
    start?: { toolUse?: { toolUseId?: string; name?: string } };
  };
  contentBlockDelta?: {
    contentBlockIndex?: number;
    delta?: {
      text?: string;
      toolUse?: { input?: string };
      reasoningContent?: { text?: string; signature?: string; redactedContent?: Uint8Array };
    };
  };
  contentBlockStop?: { contentBlockIndex?: number };
  messageStop?: { stopReason?: string };
  metadata?: { usage?: BedrockUsage };
  internalServerException?: { message?: string };
  modelStreamErrorException?: { message?: string; originalStatusCode?: number; originalMessage?: string };
  serviceUnavailableException?: { message?: string };
  throttlingException?: { message?: string };
  validationException?: { message?: string };
}

interface BedrockUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** Cache writes per lifetime (`ttl` "5m" or "1h"), when there were any. */
  cacheDetails?: { ttl?: string; inputTokens?: number }[];
}

/** Converse usage in our terms: `inputTokens` already excludes cache reads and writes. */
export function bedrockUsage(wire: BedrockUsage): Usage {
  const input = wire.inputTokens ?? 0;
  const output = wire.outputTokens ?? 0;
  const cacheRead = wire.cacheReadInputTokens ?? 0;
  const cacheWrite = wire.cacheWriteInputTokens ?? 0;
  let cacheWriteLong = 0;
  for (const detail of wire.cacheDetails ?? [])
    if (detail.ttl === "1h") cacheWriteLong += detail.inputTokens ?? 0;
  const usage: Usage = {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
  };
  if (cacheWriteLong > 0) usage.cacheWriteLong = cacheWriteLong;
  return usage;
}

/** Which kind each Bedrock exception is (HTTP errors and in-stream exceptions alike). */
const EXCEPTION_KINDS: Record<string, ProviderErrorKind> = {
  ThrottlingException: "rate_limit",
  ServiceQuotaExceededException: "rate_limit",
  ServiceUnavailableException: "overloaded",
  ModelNotReadyException: "overloaded",
  InternalServerException: "network",
  ModelStreamErrorException: "network",
  ModelTimeoutException: "network",
  AccessDeniedException: "auth",
  UnrecognizedClientException: "auth",
  ExpiredTokenException: "auth",
  InvalidSignatureException: "auth",
  IncompleteSignature: "auth",
  ValidationException: "api",
  ModelErrorException: "api",
  ResourceNotFoundException: "api",
};

/** Texts by which Bedrock (and the models behind it) say the prompt does not fit. */
const BEDROCK_OVERFLOW = [
  /too many input tokens/i,
  /input is too long/i,
  /model_context_window_exceeded/i,
  /context window/i,
];

function exceptionEvent(name: string, message: string | undefined, secret?: string): ProviderErrorEvent {
  const text = redactSecrets(message || name, secret);
  const overflow = isContextOverflowText(text) || BEDROCK_OVERFLOW.some((p) => p.test(text));
  const kind: ProviderErrorKind =
    overflow && (name === "ValidationException" || name === "ModelErrorException")
      ? "context_overflow"
      : (EXCEPTION_KINDS[name] ?? "api");
  return { type: "error", kind, message: `${name}: ${text}` };
}

/**
 * Maps what the Bedrock SDK threw (a `BedrockRuntimeServiceException` subclass named after the
 * exception, with `$metadata.httpStatusCode`) to our error event; anything else (a cut connection,
 * an abort) goes to the common classifier.
 *
 * @example
 * ```ts
 * catch (error) { yield classifyBedrockError(error, signal); }
 * ```
 */
export function classifyBedrockError(
  error: unknown,
  signal: AbortSignal,
  secret?: string,
  endpoint?: string,
): ProviderErrorEvent {
  const e = error as {
    name?: string;
    message?: string;
    code?: string;
    $fault?: string;
    $metadata?: { httpStatusCode?: number };
    /** The HTTP response of an HTTP-level exception (smithy's), headers in lower case. */
    $response?: { headers?: Record<string, string | undefined> };
  };
  if (!signal.aborted && e?.code === "ERR_HTTP2_ERROR") return notHttp2Event(e.message, endpoint);
  if (signal.aborted || !e || typeof e.name !== "string" || !e.$fault)
    return classifyProviderError(error, signal, secret, endpoint);
  if (e.name in EXCEPTION_KINDS)
    return withServerWait(exceptionEvent(e.name, e.message, secret), e.$response);
  const status = e.$metadata?.httpStatusCode;
  const generic = classifyProviderError({ status, error: { message: e.message } }, signal, secret);
  return { ...generic, message: `${e.name}: ${redactSecrets(e.message ?? "", secret)}` };
}

/** A throttled or busy answer's `retry-after(-ms)` header (a gateway in front of Bedrock may send one). */
function withServerWait(
  event: ProviderErrorEvent,
  response: { headers?: Record<string, string | undefined> } | undefined,
): ProviderErrorEvent {
  const headers = response?.headers;
  if (!headers || !isRetryableKind(event.kind)) return event;
  const retryAfterMs = parseRetryAfterMs({ get: (name) => headers[name] ?? null });
  return retryAfterMs === undefined ? event : { ...event, retryAfterMs };
}

/**
 * The SDK's default handler speaks HTTP/2 only; an endpoint that answers in HTTP/1.1 makes the
 * session fail with a bare "Protocol error". Say why, and what to pass instead.
 */
function notHttp2Event(message: string | undefined, endpoint: string | undefined): ProviderErrorEvent {
  return {
    type: "error",
    kind: "api",
    message:
      `${message ?? "Protocol error"} (ERR_HTTP2_ERROR) from ${endpoint ?? "the Bedrock endpoint"}: ` +
      "the AWS SDK's default handler speaks HTTP/2 and the endpoint did not; for an endpoint that " +
      "speaks only HTTP/1.1, pass bedrock({ requestHandler: new NodeHttpHandler() }) " +
      "(from @smithy/node-http-handler)",
  };
}

const IN_STREAM_EXCEPTIONS = [
  ["internalServerException", "InternalServerException"],
  ["modelStreamErrorException", "ModelStreamErrorException"],
  ["serviceUnavailableException", "ServiceUnavailableException"],
  ["throttlingException", "ThrottlingException"],
  ["validationException", "ValidationException"],
] as const;

type StopReason = Extract<ProviderEvent, { type: "done" }>["stopReason"];

interface BlockState {
  id?: string;
  name?: string;
  json: string;
  signature: string;
}

/**
 * Turns a `ConverseStream` event stream into provider events, `start` at the first event: text
 * deltas; reasoning deltas as thinking, their signature as a thinking delta carrying it (the whole
 * signature so far), redacted reasoning as redacted thinking; a tool use from its block start, its
 * input deltas and its block stop. `metadata` (after `messageStop`) carries the usage, so the
 * stream is done when it ends. A guardrail or content-filter stop is an `api` error.
 *
 * @example
 * ```ts
 * yield* bedrockStreamEvents(response.stream, signal, finish);
 * ```
 */
export async function* bedrockStreamEvents(
  events: AsyncIterable<BedrockStreamEvent>,
  signal: AbortSignal,
  finish: (usage: Usage | undefined) => Usage | undefined,
): AsyncGenerator<ProviderEvent> {
  const blocks = new Map<number, BlockState>();
  let stopReason: string | undefined;
  let usage: Usage | undefined;
  let sawToolCall = false;
  let started = false;
  for await (const event of events) {
    if (!started) {
      started = true;
      yield { type: "start" };
    }
    if (event.contentBlockDelta) {
      const index = event.contentBlockDelta.contentBlockIndex ?? 0;
      const delta = event.contentBlockDelta.delta ?? {};
      let block = blocks.get(index);
      if (!block) blocks.set(index, (block = { json: "", signature: "" }));
      if (delta.text) yield { type: "text_delta", delta: delta.text };
      else if (delta.toolUse && block.id) {
        const input = delta.toolUse.input ?? "";
        block.json += input;
        if (input) yield { type: "toolcall_delta", id: block.id, delta: input };
      } else if (delta.reasoningContent) {
        const reasoning = delta.reasoningContent;
        if (reasoning.text) yield { type: "thinking_delta", delta: reasoning.text };
        if (reasoning.signature) {
          block.signature += reasoning.signature;
          yield { type: "thinking_delta", delta: "", signature: block.signature };
        }
        if (reasoning.redactedContent) {
          const data = bytesToBase64(reasoning.redactedContent);
          yield { type: "thinking_delta", delta: "", redacted: true, signature: data };
        }
      }
    } else if (event.contentBlockStart) {
      const index = event.contentBlockStart.contentBlockIndex ?? 0;
      const toolUse = event.contentBlockStart.start?.toolUse;
      if (toolUse?.toolUseId && toolUse.name) {
        blocks.set(index, { id: toolUse.toolUseId, name: toolUse.name, json: "", signature: "" });
        sawToolCall = true;
        yield { type: "toolcall_start", id: toolUse.toolUseId, name: toolUse.name };
      }
    } else if (event.contentBlockStop) {
      const block = blocks.get(event.contentBlockStop.contentBlockIndex ?? 0);
      if (block?.id && block.name)
        yield {
          type: "toolcall_end",
          id: block.id,
          name: block.name,
          arguments: parseToolArguments(block.json),
        };
    } else if (event.messageStop) {
      stopReason = event.messageStop.stopReason ?? "end_turn";
    } else if (event.metadata) {
      if (event.metadata.usage) usage = bedrockUsage(event.metadata.usage);
    } else {
      for (const [member, name] of IN_STREAM_EXCEPTIONS) {
        const exception = event[member];
        if (exception) {
          yield exceptionEvent(name, exception.message);
          return;
        }
      }
    }
  }
  if (signal.aborted) {
    yield { type: "error", kind: "aborted", message: "Request aborted" };
    return;
  }
  if (stopReason === undefined) {
    yield truncatedStreamError();
    return;
  }
  if (stopReason === "guardrail_intervened" || stopReason === "content_filtered") {
    yield { type: "error", kind: "api", message: `Bedrock stopped the response (${stopReason})` };
    return;
  }
  let reason: StopReason = sawToolCall ? "toolUse" : "stop";
  if (stopReason === "max_tokens" || stopReason === "model_context_window_exceeded") reason = "length";
  else if (stopReason === "tool_use") reason = "toolUse";
  yield { type: "done", stopReason: reason, usage: finish(usage) };
}
