// The provider contract, as types: what the agent asks a model for and what it streams back. The
// implementations (and `isRetryableKind`) live in providers/; every floor that speaks to a model
// stands on these.
import type { Message, StopReason, Usage } from "./messages.js";
import type { OutputRequest } from "./output.js";

/** A tool as the model sees it: its name, what it does, and a JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** What the agent asks a provider for on each turn. */
export interface ProviderRequest {
  systemPrompt?: string;
  /**
   * The conversation, converted by `convertToLlm`. The agent hands it over as a getter that copies
   * the messages on first read, so a turn costs the runtime nothing per message of history; the
   * array you get is yours (it never changes later).
   */
  messages: Message[];
  tools: ToolSpec[];
  /**
   * `"none"`: the model must answer in text and call no tool, though `tools` are still listed (the
   * transcript refers to them, and keeping them keeps the prompt cache). `"required"`: the model
   * must call a tool (providers that give the output schema as a tool ask for it). Absent: the model
   * chooses.
   */
  toolChoice?: "none" | "required";
  /**
   * The run's output schema: the final answer (the one without tool calls) must be a JSON object of
   * this schema. A provider uses its API's structured output where it has one that works together
   * with tools, else an output tool the model calls to finish (`withOutputTool`); either way the
   * answer reaches the agent as text (docs/output.md).
   */
  output?: OutputRequest;
  /**
   * How long the provider should keep this prompt in its cache: `"long"` asks for the longer
   * lifetime where the API has one (Anthropic and Bedrock: 1 hour instead of 5 minutes; OpenAI:
   * `prompt_cache_retention: "24h"`), because the agent may wait longer than the short one before
   * its next call (an approval, a client-run tool, a hibernation, a schedule). Absent or `"short"`:
   * the provider's default. Set by the agent's `promptCache` policy; a provider without a choice
   * ignores it.
   */
  cacheRetention?: CacheRetention;
}

/** The prompt cache lifetime a call asks for: the provider's default (`short`) or its longer one. */
export type CacheRetention = "short" | "long";

export type ProviderErrorKind =
  "context_overflow" | "rate_limit" | "overloaded" | "auth" | "network" | "aborted" | "api";

/** One event of a provider's stream. A stream ends with exactly one `done` or `error`. */
export type ProviderEvent =
  | { type: "start" }
  | { type: "text_delta"; delta: string }
  /** `signature`, when present, signs the thinking block so it can be sent back (Anthropic). */
  | { type: "thinking_delta"; delta: string; signature?: string; redacted?: boolean }
  | { type: "toolcall_start"; id: string; name: string }
  | { type: "toolcall_delta"; id: string; delta: string }
  | { type: "toolcall_end"; id: string; name: string; arguments: Record<string, unknown> }
  | { type: "done"; stopReason: Exclude<StopReason, "error" | "aborted">; usage?: Usage }
  | {
      type: "error";
      kind: ProviderErrorKind;
      message: string;
      retryAfterMs?: number;
      usage?: Usage;
      /**
       * `false`: the provider knows waiting will not help although the kind is transient (a TLS
       * certificate the client rejects, a port fetch refuses to use); the agent does not retry.
       */
      retryable?: false;
      /**
       * `true`: the request never reached the server (connection refused, host name not found).
       * The agent retries it only `retry.maxConnectRetries` times (default 0), not `maxRetries`.
       */
      unreachable?: true;
    };

/**
 * A model behind a streaming API. Implementations must honour `signal` (end promptly with an
 * `error` of kind `"aborted"` or by returning) and should report failures as `error` events rather
 * than throwing; a thrown error is treated as a `"network"` error.
 *
 * @example
 * ```ts
 * const echo: Provider = {
 *   id: "echo", model: "echo-1",
 *   async *stream(request) {
 *     yield { type: "start" };
 *     yield { type: "text_delta", delta: "hello" };
 *     yield { type: "done", stopReason: "stop" };
 *   },
 * };
 * ```
 */
export interface Provider {
  readonly id: string;
  readonly model: string;
  /**
   * The most output tokens one call can produce (the `maxTokens` the provider sends), when the
   * provider caps it: `limits.maxCostUsd` reserves this much output before each call.
   */
  readonly maxOutputTokens?: number;
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
  /**
   * A provider made of other models (`fallback`, `route`): the models to try for this request, in
   * order. The agent streams each itself, so a failed model's partial answer is withdrawn as a
   * retry withdraws it before the next one answers. Absent on a plain provider.
   */
  plan?(request: ProviderRequest): ModelPlan;
  /** A provider made of other models: every model it may use (the budget reserves the dearest). */
  readonly members?: readonly Provider[];
}

/** A failed attempt of a model call, as the agent saw it (`stalled` when its watchdog gave it up). */
export type ProviderFailure = Extract<ProviderEvent, { type: "error" }> & { stalled?: boolean };

/** The models one call may try, in order, and when a failure hands the call to the next one. */
export interface ModelPlan {
  readonly models: readonly Provider[];
  /**
   * Whether `failure` of `models[index]`, after `retries` retries of that model, hands the call to
   * `models[index + 1]` (asked only when there is one). `retries` is `Number.MAX_SAFE_INTEGER`
   * when no retry of that model can come (its server asked for a longer wait than `retry.maxDelayMs`).
   */
  fallsOver(failure: ProviderFailure, index: number, retries: number): boolean;
  /** Told how each attempt ended (`failure` undefined: it answered), e.g. for a circuit breaker. */
  settled?(model: Provider, failure: ProviderFailure | undefined): void;
}
