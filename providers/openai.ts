import { processEnv } from "./internal/env.js";
import { createOpenAIProvider, type ReasoningEffort } from "./internal/openai-provider.js";
import type { Provider } from "./provider.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import {
  checkHttpUrl,
  checkInteger,
  checkOneOf,
  checkString,
  checkType,
  refuseValue,
} from "../core/option-values.js";

/** Options of {@link openai}. */
export interface OpenAIOptions {
  /** A model id, e.g. `gpt-4.1` or `o4-mini`. */
  model: string;
  /** `"chat"` (Chat Completions, the default) or `"responses"` (the Responses API). */
  api?: "chat" | "responses";
  /** Defaults to `OPENAI_API_KEY`. Kept inside the SDK client, never on the provider object. */
  apiKey?: string;
  /** Defaults to `OPENAI_BASE_URL`, else OpenAI's API. */
  baseURL?: string;
  /** Output token cap per model call (`max_completion_tokens` / `max_output_tokens`). */
  maxTokens?: number;
  /**
   * Reasoning effort for reasoning models. With the Responses API this also asks for reasoning
   * summaries (shown as thinking) and keeps the encrypted reasoning so it round-trips.
   */
  reasoningEffort?: ReasoningEffort;
  /**
   * Whether a call the agent's `promptCache` policy asks to keep long sends
   * `prompt_cache_retention: "24h"` (extended prompt caching). Default: on for the models OpenAI
   * offers it for (`gpt-5*`, `gpt-4.1*`), off for the others, whose API would refuse the field.
   */
  longCache?: boolean;
  /**
   * Lets the SDK run in a browser, where the key is visible to whoever uses the page (the SDK's own
   * option, off by default). Prefer a `baseURL` on your server that adds the key.
   */
  dangerouslyAllowBrowser?: boolean;
}

const OPENAI_KEYS: OptionKeys<OpenAIOptions> = {
  model: true,
  api: true,
  apiKey: true,
  baseURL: true,
  maxTokens: true,
  reasoningEffort: true,
  longCache: true,
  dangerouslyAllowBrowser: true,
};

/** Models with extended prompt cache retention (OpenAI's prompt caching guide). */
const LONG_CACHE_MODELS = /^(gpt-5|gpt-4\.1)/;

/**
 * A provider for OpenAI, streamed through the official SDK: the Chat Completions API by default,
 * or the Responses API with `api: "responses"`. The SDK never retries (the agent does, once, with
 * backoff); every failure ends the stream with one `error` event.
 *
 * @example
 * ```ts
 * const agent = createAgent({ provider: openai({ model: "gpt-4.1", api: "responses" }), tools });
 * ```
 */
export function openai(options: OpenAIOptions): Provider {
  checkOptionKeys("openai", options, OPENAI_KEYS);
  checkOpenAIOptions(options);
  const api = options.api ?? "chat";
  return createOpenAIProvider({
    id: api === "responses" ? "openai-responses" : "openai",
    model: options.model,
    api,
    apiKey: options.apiKey ?? processEnv().OPENAI_API_KEY,
    baseURL: options.baseURL ?? processEnv().OPENAI_BASE_URL,
    maxTokens: options.maxTokens,
    reasoningEffort: options.reasoningEffort,
    longCache: options.longCache ?? LONG_CACHE_MODELS.test(options.model),
    dangerouslyAllowBrowser: options.dangerouslyAllowBrowser,
    missingKeyMessage: "No OpenAI API key: set OPENAI_API_KEY or pass apiKey",
  });
}

function checkOpenAIOptions(options: OpenAIOptions): void {
  const where = "openai";
  if (options === null || typeof options !== "object") {
    refuseValue(where, "options", 'an object with a model, e.g. { model: "gpt-4.1" }', options);
  }
  checkString(where, "model", options.model, {
    required: true,
    accepts: 'a model id, e.g. "gpt-4.1" or "o4-mini"',
  });
  checkOneOf(where, "api", options.api, ["chat", "responses"]);
  checkString(where, "apiKey", options.apiKey);
  checkHttpUrl(where, "baseURL", options.baseURL, "https://api.openai.com/v1");
  checkInteger(where, "maxTokens", options.maxTokens, 1);
  checkOneOf(where, "reasoningEffort", options.reasoningEffort, ["minimal", "low", "medium", "high"]);
  checkType(where, "longCache", options.longCache, "boolean");
  checkType(where, "dangerouslyAllowBrowser", options.dangerouslyAllowBrowser, "boolean");
}
