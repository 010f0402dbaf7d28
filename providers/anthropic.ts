import Anthropic from "@anthropic-ai/sdk";
import type { Usage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { checkHttpUrl, checkInteger, checkString, checkType, refuseValue } from "../core/option-values.js";
import { toAnthropicRequest } from "./internal/anthropic-request.js";
import { processEnv } from "./internal/env.js";
import { classifyProviderError, truncatedStreamError } from "./internal/errors.js";
import { parseToolArguments } from "./internal/tool-arguments.js";
import { withCost } from "./pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "./provider.js";

/** Options of {@link anthropic}. */
export interface AnthropicOptions {
  /** A Messages API model id, e.g. `claude-sonnet-4-6`. */
  model: string;
  /**
   * Defaults to `ANTHROPIC_API_KEY` (or `ANTHROPIC_AUTH_TOKEN`). Kept inside the SDK client, never
   * on the provider object.
   */
  apiKey?: string;
  /** Defaults to `ANTHROPIC_BASE_URL`, else Anthropic's API. */
  baseURL?: string;
  /** Output token cap per model call. Default 8192 (16384 with thinking on). */
  maxTokens?: number;
  /**
   * Extended thinking: `"adaptive"` (the model decides how much to think; what newer models
   * recommend) or a fixed token budget (must be below `maxTokens`).
   */
  thinking?: "adaptive" | { budgetTokens: number };
  /** Prompt caching breakpoints on the system prompt, tools and last messages. Default `true`. */
  cache?: boolean;
  /**
   * Lets the SDK run in a browser, where the key is visible to whoever uses the page (the SDK's own
   * option, off by default). Prefer a `baseURL` on your server that adds the key.
   */
  dangerouslyAllowBrowser?: boolean;
}

const ANTHROPIC_KEYS: OptionKeys<AnthropicOptions> = {
  model: true,
  apiKey: true,
  baseURL: true,
  maxTokens: true,
  thinking: true,
  cache: true,
  dangerouslyAllowBrowser: true,
};

function thinkingParam(thinking: AnthropicOptions["thinking"]) {
  if (!thinking) return {};
  if (thinking === "adaptive") return { thinking: { type: "adaptive" as const } };
  return { thinking: { type: "enabled" as const, budget_tokens: thinking.budgetTokens } };
}

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
}

function mergeUsage(usage: Usage, wire: WireUsage | null | undefined): Usage {
  if (!wire) return usage;
  const next = { ...usage };
  if (wire.input_tokens != null) next.input = wire.input_tokens;
  if (wire.output_tokens != null) next.output = wire.output_tokens;
  if (wire.cache_read_input_tokens != null) next.cacheRead = wire.cache_read_input_tokens;
  if (wire.cache_creation_input_tokens != null) next.cacheWrite = wire.cache_creation_input_tokens;
  next.totalTokens = next.input + next.output + next.cacheRead + next.cacheWrite;
  return next;
}

/**
 * A provider for Anthropic's Messages API, streamed through the official SDK. The SDK never
 * retries (the agent does, once, with backoff); every failure ends the stream with one `error`
 * event whose `kind` says whether a retry may help.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: anthropic({ model: "claude-sonnet-4-6", thinking: "adaptive" }),
 *   tools: [readTool],
 * });
 * ```
 */
export function anthropic(options: AnthropicOptions): Provider {
  checkOptionKeys("anthropic", options, ANTHROPIC_KEYS);
  checkAnthropicOptions(options);
  const model = options.model;
  // Kept for the missing-key check and to scrub error texts; the SDK reads the environment itself
  // (ANTHROPIC_API_KEY, or ANTHROPIC_AUTH_TOKEN for bearer tokens) when no key is passed.
  const env = processEnv();
  const apiKey = options.apiKey ?? env.ANTHROPIC_API_KEY ?? env.ANTHROPIC_AUTH_TOKEN;
  const maxTokens = options.maxTokens ?? (options.thinking ? 16384 : 8192);
  const cache = options.cache ?? true;
  // The client (and the key inside it) lives only in this closure.
  const client = new Anthropic({
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    baseURL: options.baseURL,
    maxRetries: 0,
    ...(options.dangerouslyAllowBrowser ? { dangerouslyAllowBrowser: true } : {}),
    // Streams have no overall deadline here: the agent's limits and abort decide.
    timeout: 10 * 60 * 1000,
  });

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (!apiKey) {
      yield {
        type: "error",
        kind: "auth",
        message: "No Anthropic API key: set ANTHROPIC_API_KEY or pass apiKey",
      };
      return;
    }
    try {
      const parts = toAnthropicRequest(request, { cache });
      const events = await client.messages.create(
        {
          model,
          max_tokens: maxTokens,
          ...parts,
          ...thinkingParam(options.thinking),
          stream: true,
        },
        { signal },
      );
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
        usage: withCost(usage, model),
      };
    } catch (error) {
      yield classifyProviderError(error, signal, apiKey);
    }
  }

  return {
    id: "anthropic",
    model,
    stream: (request, signal) => stream(request, signal),
  };
}

function checkAnthropicOptions(options: AnthropicOptions): void {
  const where = "anthropic";
  if (options === null || typeof options !== "object") {
    refuseValue(where, "options", 'an object with a model, e.g. { model: "claude-sonnet-4-6" }', options);
  }
  checkString(where, "model", options.model, {
    required: true,
    accepts: 'a Messages API model id, e.g. "claude-sonnet-4-6"',
  });
  checkString(where, "apiKey", options.apiKey);
  checkHttpUrl(where, "baseURL", options.baseURL, "https://api.anthropic.com");
  checkInteger(where, "maxTokens", options.maxTokens, 1);
  const { thinking } = options;
  if (thinking !== undefined && thinking !== "adaptive") {
    const budget = (thinking as { budgetTokens?: unknown } | null)?.budgetTokens;
    if (typeof budget !== "number" || !Number.isInteger(budget) || budget < 1) {
      refuseValue(where, "thinking", '"adaptive" or { budgetTokens: n } with n a whole number ≥ 1', thinking);
    }
  }
  checkType(where, "cache", options.cache, "boolean");
  checkType(where, "dangerouslyAllowBrowser", options.dangerouslyAllowBrowser, "boolean");
}
