import type Anthropic from "@anthropic-ai/sdk";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { checkHttpUrl, checkInteger, checkString, checkType, refuseValue } from "../core/option-values.js";
import { toAnthropicRequest } from "./internal/anthropic-request.js";
import { anthropicOutputConfig } from "./internal/structured-output.js";
import { processEnv } from "./internal/env.js";
import { anthropicStreamEvents } from "./internal/anthropic-stream.js";
import { classifyProviderError } from "./internal/errors.js";
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
  // The client (and the key inside it) lives only in this closure. It is made on the first call:
  // the SDK is a few hundred modules that an app importing agent-machine (a serverless cold start,
  // a user of another provider) should not load before it calls Anthropic.
  let client: Promise<Anthropic> | undefined;
  const getClient = () =>
    (client ??= import("@anthropic-ai/sdk").then(
      ({ default: AnthropicClient }) =>
        new AnthropicClient({
          ...(options.apiKey ? { apiKey: options.apiKey } : {}),
          baseURL: options.baseURL,
          maxRetries: 0,
          ...(options.dangerouslyAllowBrowser ? { dangerouslyAllowBrowser: true } : {}),
          // Streams have no overall deadline here: the agent's limits and abort decide.
          timeout: 10 * 60 * 1000,
        }),
    ));
  // Named in a connection failure, before the client exists too (the SDK's own default otherwise).
  let endpoint = options.baseURL ?? env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com";

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
      const client = await getClient();
      endpoint = client.baseURL;
      const parts = toAnthropicRequest(request, { cache });
      const events = await client.messages.create(
        {
          model,
          max_tokens: maxTokens,
          ...parts,
          ...thinkingParam(options.thinking),
          // Structured outputs (JSON format), which work together with tools: docs/output.md.
          ...(request.output ? { output_config: anthropicOutputConfig(request.output) } : {}),
          stream: true,
        },
        { signal },
      );
      yield* anthropicStreamEvents(events, signal, (usage) => withCost(usage, model));
    } catch (error) {
      yield classifyProviderError(error, signal, apiKey, endpoint);
    }
  }

  return {
    id: "anthropic",
    model,
    maxOutputTokens: maxTokens,
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
