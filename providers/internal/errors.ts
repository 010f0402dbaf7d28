import { connectionCause } from "../../core/error-text.js";
import type { ProviderErrorKind, ProviderEvent } from "../provider.js";

/** The one `error` event a failed stream ends with. */
export type ProviderErrorEvent = Extract<ProviderEvent, { type: "error" }>;

/**
 * Texts by which the supported APIs say "the prompt does not fit the context window", in HTTP
 * errors and in-stream errors alike.
 */
const CONTEXT_OVERFLOW_PATTERNS: RegExp[] = [
  /prompt is too long/i, // Anthropic
  /exceed context limit/i, // Anthropic, Bedrock's Claude: "input length and `max_tokens` exceed context limit: …"
  /maximum prompt length is/i, // xAI
  // OpenAI's 429 for one request larger than the tokens-per-minute limit: waiting never helps, a
  // shorter request does ("Request too large for gpt-4o … on tokens per min (TPM): Limit 30000,
  // Requested 50000. The input or output tokens must be reduced in order to run successfully.")
  /input or output tokens must be reduced/i,
  /context_length_exceeded/i, // OpenAI error code
  /exceeds the context window/i, // OpenAI Responses
  /exceeds the available context size/i, // llama.cpp server
  /maximum context length/i, // OpenAI chat, vLLM, OpenRouter
  /greater than the context length/i, // LM Studio
  /context length exceeded/i,
  /exceeds the maximum number of tokens allowed/i, // Gemini
  /input token count.*exceeds/i, // Gemini, Vertex AI
  /too many tokens/i,
  /input is too long/i,
  /reduce the length of the messages/i,
];

/** Whether an error text says the prompt is larger than the model's context window. */
export function isContextOverflowText(text: string | undefined | null): boolean {
  if (!text) return false;
  return CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(text));
}

interface HeaderSource {
  get(name: string): string | null;
}

/**
 * The delay a server asks for: `retry-after-ms` (milliseconds), else `retry-after` (seconds or an
 * HTTP date). `undefined` when neither is present or parseable.
 */
export function parseRetryAfterMs(headers: HeaderSource | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms != null && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const after = headers.get("retry-after");
  if (after == null || after.trim() === "") return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(after);
  if (!Number.isNaN(date)) return Math.max(0, date - now);
  return undefined;
}

/**
 * The wait a rate-limit message asks for in words, for a server that sends no `retry-after`
 * header: OpenAI's and Groq's "Please try again in 1m12.5s." / "in 250ms", Azure's "Please retry
 * after 20 seconds". `undefined` when it names none.
 *
 * @example
 * ```ts
 * retryHintMs("Rate limit reached for gpt-4o on tokens per min (TPM): … Please try again in 1m12.5s."); // 72500
 * ```
 */
export function retryHintMs(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = /try again in (\d+(?:\.\d+)?)ms\b/i.exec(text);
  if (ms) return Math.round(Number(ms[1]));
  const clock = /try again in (?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?\b/i.exec(text);
  if (clock && (clock[1] || clock[2] || clock[3])) {
    const [hours, minutes, seconds] = [clock[1], clock[2], clock[3]].map((part) => Number(part ?? 0));
    return Math.round(((hours! * 60 + minutes!) * 60 + seconds!) * 1000);
  }
  const words = /retry after (\d+(?:\.\d+)?) seconds?/i.exec(text);
  return words ? Math.round(Number(words[1]) * 1000) : undefined;
}

/**
 * Shapes of credentials: OpenAI / Anthropic keys (`sk-…`), Google API keys (`AIza…`), AWS access
 * key ids (`AKIA…`, `ASIA…`).
 */
const SECRET_SHAPES = /\b(?:sk-(?:ant-)?[A-Za-z0-9_*-]{6,}|AIza[0-9A-Za-z_-]{20,}|A[KS]IA[0-9A-Z]{12,})/g;

/**
 * A header value that `fetch` refused, which its error quotes whole: `Headers.append: "Bearer …" is
 * an invalid header value.` (a key with a line break or a NUL pasted into it). Only the header's
 * owner knows it is the key (the AI SDK's model packages read theirs themselves), so the value goes.
 */
const REFUSED_HEADER_VALUE = /(Headers\.\w+: )"[\s\S]*"( is an invalid header value)/g;

/** A credential passed in a URL's query (`?key=…`, `&api_key=…`, `&access_token=…`, a signature). */
const QUERY_CREDENTIAL =
  /([?&](?:key|api[-_]?key|apikey|access[-_]?token|token|auth|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&#\s"')]+/gi;

/**
 * Replaces anything that looks like an API key (and the configured key itself) with `[redacted]`:
 * the key, known key shapes, a header value `fetch` refused (its error quotes it) and a credential
 * in a URL's query.
 *
 * @example
 * ```ts
 * redactSecrets('Headers.append: "Bearer abc\ndef" is an invalid header value.');
 * // 'Headers.append: "[redacted]" is an invalid header value.'
 * ```
 */
export function redactSecrets(text: string, secret?: string): string {
  let out = text;
  if (secret && secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out
    .replace(SECRET_SHAPES, "[redacted]")
    .replace(REFUSED_HEADER_VALUE, '$1"[redacted]"$2')
    .replace(QUERY_CREDENTIAL, "$1[redacted]");
}

/**
 * What to check when `fetch` refused a header before sending anything: nearly always a key pasted
 * with a line break, a tab or a typographic character in it.
 */
function unsendableHeaderHint(message: string): string {
  REFUSED_HEADER_VALUE.lastIndex = 0;
  const refused =
    REFUSED_HEADER_VALUE.test(message) || /Cannot convert argument to a ByteString/.test(message);
  return refused
    ? " (a request header could not be sent: check the API key, and any headers you set, for a line break, a tab or a character such as … pasted into it)"
    : "";
}

/** Error codes Node and undici use for a connection that failed or was cut. */
const NETWORK_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

function isNetworkFailure(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const err = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof err.code === "string" && NETWORK_CODES.has(err.code)) return true;
    const name = typeof err.name === "string" ? err.name : "";
    if (name === "APIConnectionError" || name === "APIConnectionTimeoutError") return true;
    const message = typeof err.message === "string" ? err.message : "";
    if (/^(terminated|fetch failed|other side closed|socket hang up)/i.test(message)) return true;
  }
  return false;
}

function isAbortLike(error: unknown): boolean {
  const name = (error as { name?: unknown })?.name;
  return name === "AbortError" || name === "APIUserAbortError";
}

/** The shape of an SDK `APIError` (both SDKs), read structurally so one classifier serves both. */
interface ApiErrorLike {
  status?: number;
  headers?: HeaderSource;
  error?: unknown;
  message?: string;
  type?: string | null;
  code?: string | null;
}

/** The `type` / `code` / `message` of an error body, wherever the API nests them. */
function describeBody(body: unknown): { type?: string; code?: string; message?: string } {
  if (!body || typeof body !== "object") return typeof body === "string" ? { message: body } : {};
  const b = body as Record<string, unknown>;
  const inner = (b.error && typeof b.error === "object" ? b.error : b) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  return { type: str(inner.type), code: str(inner.code), message: str(inner.message) };
}

/** Which kind a bare error `type`/`code` from a body (HTTP or in-stream) means, if it says. */
function kindFromType(type: string | undefined, text: string): ProviderErrorKind | undefined {
  if (isContextOverflowText(type) || isContextOverflowText(text)) return "context_overflow";
  switch (type) {
    case "overloaded_error":
    case "server_is_overloaded":
    case "slow_down":
      return "overloaded";
    case "rate_limit_error":
    case "rate_limit_exceeded":
    case "tokens":
    case "requests":
      return "rate_limit";
    case "insufficient_quota":
      return "api";
    case "authentication_error":
    case "permission_error":
    case "invalid_api_key":
      return "auth";
    case "api_error":
    case "server_error":
    case "internal_error":
      return "network";
    case "request_too_large":
      return "context_overflow";
    default:
      return undefined;
  }
}

/**
 * Which kind an HTTP status means. 5xx are transient: 503 and Anthropic's 529 say "overloaded";
 * 500, 502 and 504 (a failure somewhere between us and the model) count as `network`. Both retry.
 */
function kindFromStatus(status: number): ProviderErrorKind {
  if (status === 401 || status === 403) return "auth";
  if (status === 413) return "context_overflow";
  if (status === 429) return "rate_limit";
  if (status === 503 || status === 529) return "overloaded";
  if (status === 408 || status === 500 || status === 502 || status === 504) return "network";
  if (status >= 500) return "overloaded";
  return "api";
}

/**
 * Maps anything an SDK call or its stream threw to the single `error` event the stream ends with.
 *
 * @param secret the API key, so it is scrubbed from the message should a server echo it.
 * @example
 * ```ts
 * try { ... } catch (error) { yield classifyProviderError(error, signal, apiKey); }
 * ```
 */
export function classifyProviderError(
  error: unknown,
  signal: AbortSignal,
  secret?: string,
  endpoint?: string,
): ProviderErrorEvent {
  if (signal.aborted || isAbortLike(error))
    return { type: "error", kind: "aborted", message: "Request aborted" };
  const e = (error ?? {}) as ApiErrorLike;
  const body = describeBody(e.error);
  const rawMessage = body.message ?? (typeof e.message === "string" ? e.message : String(error));
  const message =
    redactSecrets(rawMessage || "Unknown provider error", secret) + unsendableHeaderHint(rawMessage);
  const status = typeof e.status === "number" ? e.status : undefined;
  const code = (e.code ?? undefined) || body.code;
  const type = (e.type ?? undefined) || body.type;
  // The code is the more specific of the two (OpenAI: type "server_error", code "server_is_overloaded").
  const bodyKind = kindFromType(code, rawMessage) ?? kindFromType(type, rawMessage);

  let kind: ProviderErrorKind;
  if (status !== undefined) {
    const emptyBody = e.error === undefined || e.error === null || e.error === "";
    if (bodyKind === "context_overflow") kind = "context_overflow";
    else if ((status === 400 || status === 413) && emptyBody) kind = "context_overflow";
    else if (status === 429 && code === "insufficient_quota")
      kind = "api"; // out of quota: waiting will not help
    else kind = kindFromStatus(status);
  } else if (isNetworkFailure(error)) {
    kind = "network";
  } else if (code || type || body.message) {
    // An error that arrived inside a 200 stream: only its body says what it is.
    kind = bodyKind ?? "api";
  } else if (error instanceof SyntaxError) {
    kind = "api"; // a malformed event: the same request would likely fail the same way
  } else {
    // Not a failure we recognise (possibly a bug): retrying would only repeat it.
    kind = isContextOverflowText(rawMessage) ? "context_overflow" : "api";
  }

  // A TLS failure need not look like a network one to the SDK (no "fetch failed" over HTTP/2).
  const failed = status === undefined ? describeConnectionFailure(error, endpoint, secret) : undefined;
  if (failed && (kind === "network" || failed.retryable === false)) kind = "network";
  const event: ProviderErrorEvent = {
    type: "error",
    kind,
    // The SDKs' own text of a body-less error already starts with the status ("413 status code (no body)").
    message: status && !message.startsWith(`${status} `) ? `${status} ${message}` : message,
  };
  if (failed && kind === "network") Object.assign(event, failed);
  // The header first; a rate limit without one may say the wait in its message.
  const retryAfterMs =
    parseRetryAfterMs(e.headers) ?? (kind === "rate_limit" ? retryHintMs(rawMessage) : undefined);
  if (retryAfterMs !== undefined && (kind === "rate_limit" || kind === "overloaded" || kind === "network")) {
    event.retryAfterMs = retryAfterMs;
  }
  return event;
}

/**
 * A connection that could not be made, said with the address and the cause (`Connection error.`
 * alone leaves the user guessing), and whether waiting could help: a refused connection or an
 * unknown host name never reached the server (`unreachable`: the agent retries it only when asked
 * to, `retry.maxConnectRetries`); a TLS failure or a port fetch refuses will not change
 * (`retryable: false`).
 *
 * @example
 * ```ts
 * describeConnectionFailure(error, "http://127.0.0.1:8080/v1");
 * // { message: "Cannot connect to http://127.0.0.1:8080/v1: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:8080); is the server running, on that port?", unreachable: true }
 * ```
 */
export function describeConnectionFailure(
  error: unknown,
  endpoint: string | undefined,
  secret?: string,
): { message: string; retryable?: false; unreachable?: true } | undefined {
  if (!endpoint) return undefined;
  const where = redactSecrets(endpoint, secret);
  if (isBadPort(error)) {
    return {
      message: `Cannot connect to ${where}: fetch refuses its port (a "bad port" of the Fetch standard, kept for other protocols); use another port`,
      retryable: false,
    };
  }
  const cause = connectionCause(error);
  if (!cause) return undefined;
  const { code } = cause;
  const detail = cause.message === code ? "" : ` (${redactSecrets(cause.message, secret)})`;
  if (isTlsCode(code)) {
    const plain = code === "ERR_SSL_WRONG_VERSION_NUMBER" || code === "ERR_SSL_PACKET_LENGTH_TOO_LONG";
    return {
      message:
        `TLS handshake with ${where} failed: ${code}${detail}` +
        (plain
          ? "; does the server speak plain HTTP (then use http://)?"
          : "; its certificate is not trusted here (a private CA can be added with NODE_EXTRA_CA_CERTS)"),
      retryable: false,
    };
  }
  if (code === "ECONNREFUSED") {
    const hint = isLocalAddress(endpoint)
      ? "; is the server running, on that port?"
      : "; nothing accepts connections there";
    return { message: `Cannot connect to ${where}: ${code}${detail}${hint}`, unreachable: true };
  }
  if (code === "ENOTFOUND") {
    return {
      message: `Cannot connect to ${where}: ${code}${detail}; no such host name in DNS: check the address`,
      unreachable: true,
    };
  }
  const verb = code.startsWith("UND_ERR_CONNECT") ? "Cannot connect to" : "Connection to";
  return { message: `${verb} ${where}${verb === "Connection to" ? " failed" : ""}: ${code}${detail}` };
}

/** Whether a TLS code names the handshake or the certificate (a verdict that will not change by waiting). */
function isTlsCode(code: string): boolean {
  return /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_)|SELF_SIGNED_CERT/.test(code);
}

/** undici's refusal of a port the Fetch standard blocks (1, 25, 6000, …): an error with no code. */
function isBadPort(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (
    let e: unknown = error;
    e && typeof e === "object" && !seen.has(e);
    e = (e as { cause?: unknown }).cause
  ) {
    seen.add(e);
    if ((e as { message?: unknown }).message === "bad port") return true;
  }
  return false;
}

/** A loopback address: `localhost`, 127.0.0.0/8, `::1`. */
export function isLocalAddress(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "[::1]" ||
    host === "::1" ||
    /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

/** The error a stream ends with when the connection closed before the API's final event. */
export function truncatedStreamError(): ProviderErrorEvent {
  return { type: "error", kind: "network", message: "Stream ended before the response was complete" };
}
