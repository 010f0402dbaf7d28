import { anthropic } from "./anthropic.js";
import { openai } from "./openai.js";
import { openaiCompatible } from "./openai-compatible.js";
import { processEnv } from "./internal/env.js";
import type { Provider } from "./provider.js";

/** Provider names `--provider` accepts. */
export const PROVIDER_NAMES = ["anthropic", "openai", "openai-responses", "openai-compatible"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Default models when `--model` is not given. */
export const DEFAULT_MODELS: Record<Exclude<ProviderName, "openai-compatible">, string> = {
  anthropic: "claude-sonnet-4-6",
  openai: "gpt-4.1",
  "openai-responses": "gpt-4.1",
};

/** What {@link providerFromEnv} found: a provider and a sentence saying which, or why none. */
export type ProviderFromEnvResult =
  { provider: Provider; reason: string } | { provider: undefined; reason: string };

/** Options of {@link providerFromEnv}: the CLI's `--provider` / `--model`, and the environment to read. */
export interface ProviderFromEnvOptions {
  provider?: string;
  model?: string;
  /** Defaults to `process.env` (empty where there is no `process`, e.g. a browser). */
  env?: Record<string, string | undefined>;
}

/**
 * Picks a provider from the environment: `ANTHROPIC_API_KEY` → Anthropic, else `OPENAI_API_KEY` →
 * OpenAI (at `OPENAI_BASE_URL` when set), else `OPENAI_BASE_URL` alone → an OpenAI-compatible
 * server. `provider` / `model` override the choice. When nothing fits, `provider` is `undefined`
 * and `reason` says plainly why, so the caller can fall back to the scripted demo. The key is
 * never part of `reason`.
 *
 * @example
 * ```ts
 * const found = providerFromEnv({ provider: args.provider, model: args.model });
 * if (!found.provider) console.error(`${found.reason} Using the scripted demo provider.`);
 * const provider = found.provider ?? scripted(demoSteps);
 * ```
 */
export function providerFromEnv(options: ProviderFromEnvOptions = {}): ProviderFromEnvResult {
  const env = options.env ?? processEnv();
  const anthropicKey = env.ANTHROPIC_API_KEY || undefined;
  const openaiKey = env.OPENAI_API_KEY || undefined;
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const requested = options.provider;

  if (requested !== undefined && !(PROVIDER_NAMES as readonly string[]).includes(requested)) {
    return {
      provider: undefined,
      reason: `Unknown provider "${requested}": use one of ${PROVIDER_NAMES.join(", ")}.`,
    };
  }
  const name: ProviderName | undefined =
    (requested as ProviderName | undefined) ??
    (anthropicKey ? "anthropic" : openaiKey ? "openai" : baseURL ? "openai-compatible" : undefined);

  switch (name) {
    case undefined:
      return {
        provider: undefined,
        reason:
          "No provider configured: none of ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL is set.",
      };
    case "anthropic": {
      if (!anthropicKey)
        return { provider: undefined, reason: "Provider anthropic needs ANTHROPIC_API_KEY." };
      const model = options.model ?? DEFAULT_MODELS.anthropic;
      return {
        provider: anthropic({ model, apiKey: anthropicKey }),
        reason: `Using Anthropic ${model} (ANTHROPIC_API_KEY).`,
      };
    }
    case "openai":
    case "openai-responses": {
      if (!openaiKey) return { provider: undefined, reason: `Provider ${name} needs OPENAI_API_KEY.` };
      const model = options.model ?? DEFAULT_MODELS[name];
      const api = name === "openai-responses" ? "responses" : "chat";
      return {
        provider: openai({ model, api, apiKey: openaiKey, baseURL }),
        reason: `Using OpenAI ${model} via the ${api === "chat" ? "Chat Completions" : "Responses"} API (OPENAI_API_KEY${baseURL ? `, OPENAI_BASE_URL=${baseURL}` : ""}).`,
      };
    }
    case "openai-compatible": {
      if (!baseURL)
        return { provider: undefined, reason: "Provider openai-compatible needs OPENAI_BASE_URL." };
      if (!options.model) {
        return {
          provider: undefined,
          reason: `OPENAI_BASE_URL is set (${baseURL}) but no model: pass --model with a model that server serves.`,
        };
      }
      return {
        provider: openaiCompatible({ baseURL, model: options.model, apiKey: openaiKey }),
        reason: `Using ${options.model} at ${baseURL} (OpenAI-compatible server).`,
      };
    }
  }
}
