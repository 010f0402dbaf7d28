import { anthropic } from "./anthropic.js";
import { bedrock } from "./bedrock.js";
import { gemini } from "./gemini.js";
import { openai } from "./openai.js";
import { openaiCompatible } from "./openai-compatible.js";
import { processEnv } from "./internal/env.js";
import type { Provider } from "./provider.js";

/** Provider names `--provider` accepts. */
export const PROVIDER_NAMES = [
  "anthropic",
  "openai",
  "openai-responses",
  "openai-compatible",
  "gemini",
  "bedrock",
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Default models when `--model` is not given. */
export const DEFAULT_MODELS: Record<Exclude<ProviderName, "openai-compatible">, string> = {
  anthropic: "claude-sonnet-4-6",
  openai: "gpt-4.1",
  "openai-responses": "gpt-4.1",
  gemini: "gemini-2.5-flash",
  bedrock: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
};

/** What no configuration finds, in one sentence. */
export const NO_PROVIDER_REASON =
  "No provider configured: none of ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (GOOGLE_API_KEY) or OPENAI_BASE_URL is set.";

/**
 * `--model <provider>:<id>` (`bedrock:amazon.nova-pro-v1:0`, `gemini:gemini-2.5-pro`) names the
 * provider too. Only a known provider name counts as a prefix, so `qwen3:8b` stays a model id.
 */
export function splitModelPrefix(model: string | undefined): { provider?: ProviderName; model?: string } {
  if (model === undefined) return {};
  const colon = model.indexOf(":");
  const prefix = colon > 0 ? model.slice(0, colon) : "";
  if ((PROVIDER_NAMES as readonly string[]).includes(prefix))
    return { provider: prefix as ProviderName, model: model.slice(colon + 1) || undefined };
  return { model };
}

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
 * OpenAI (at `OPENAI_BASE_URL` when set), else `GEMINI_API_KEY` / `GOOGLE_API_KEY` → Gemini, else
 * `OPENAI_BASE_URL` alone → an OpenAI-compatible server. Bedrock is never picked on its own (AWS
 * credentials are in many environments for other reasons): ask for it with `provider: "bedrock"`
 * or a model `bedrock:<id>`. `provider` / `model` (or the model's `<provider>:` prefix) override the
 * choice. When nothing fits, `provider` is `undefined`
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
  const geminiKey = env.GEMINI_API_KEY || env.GOOGLE_API_KEY || undefined;
  const vertex = /^(true|1)$/i.test(env.GOOGLE_GENAI_USE_VERTEXAI ?? "");
  const prefixed = splitModelPrefix(options.model);
  if (
    options.provider !== undefined &&
    prefixed.provider !== undefined &&
    options.provider !== prefixed.provider
  ) {
    return {
      provider: undefined,
      reason: `--provider ${options.provider} and the model's prefix ${prefixed.provider}: name one provider.`,
    };
  }
  const requested = options.provider ?? prefixed.provider;
  const requestedModel = prefixed.model;

  if (requested !== undefined && !(PROVIDER_NAMES as readonly string[]).includes(requested)) {
    return {
      provider: undefined,
      reason: `Unknown provider "${requested}": use one of ${PROVIDER_NAMES.join(", ")}.`,
    };
  }
  const name: ProviderName | undefined =
    (requested as ProviderName | undefined) ??
    (anthropicKey
      ? "anthropic"
      : openaiKey
        ? "openai"
        : geminiKey || vertex
          ? "gemini"
          : baseURL
            ? "openai-compatible"
            : undefined);

  switch (name) {
    case undefined:
      return { provider: undefined, reason: NO_PROVIDER_REASON };
    case "anthropic": {
      if (!anthropicKey)
        return { provider: undefined, reason: "Provider anthropic needs ANTHROPIC_API_KEY." };
      const model = requestedModel ?? DEFAULT_MODELS.anthropic;
      return {
        provider: anthropic({ model, apiKey: anthropicKey }),
        reason: `Using Anthropic ${model} (ANTHROPIC_API_KEY).`,
      };
    }
    case "openai":
    case "openai-responses": {
      if (!openaiKey) return { provider: undefined, reason: `Provider ${name} needs OPENAI_API_KEY.` };
      const model = requestedModel ?? DEFAULT_MODELS[name];
      const api = name === "openai-responses" ? "responses" : "chat";
      return {
        provider: openai({ model, api, apiKey: openaiKey, baseURL }),
        reason: `Using OpenAI ${model} via the ${api === "chat" ? "Chat Completions" : "Responses"} API (OPENAI_API_KEY${baseURL ? `, OPENAI_BASE_URL=${baseURL}` : ""}).`,
      };
    }
    case "openai-compatible": {
      if (!baseURL)
        return { provider: undefined, reason: "Provider openai-compatible needs OPENAI_BASE_URL." };
      if (!requestedModel) {
        return {
          provider: undefined,
          reason: `OPENAI_BASE_URL is set (${baseURL}) but no model: pass --model with a model that server serves.`,
        };
      }
      return {
        provider: openaiCompatible({ baseURL, model: requestedModel, apiKey: openaiKey }),
        reason: `Using ${requestedModel} at ${baseURL} (OpenAI-compatible server).`,
      };
    }
    case "gemini": {
      const model = requestedModel ?? DEFAULT_MODELS.gemini;
      if (vertex) {
        return {
          provider: gemini({ model, vertex: true }),
          reason: `Using Gemini ${model} on Vertex AI (GOOGLE_GENAI_USE_VERTEXAI, project ${env.GOOGLE_CLOUD_PROJECT ?? "from the credentials"}, location ${env.GOOGLE_CLOUD_LOCATION ?? "global"}).`,
        };
      }
      if (!geminiKey)
        return { provider: undefined, reason: "Provider gemini needs GEMINI_API_KEY (or GOOGLE_API_KEY)." };
      return {
        provider: gemini({ model, apiKey: geminiKey }),
        reason: `Using Gemini ${model} (${env.GEMINI_API_KEY ? "GEMINI_API_KEY" : "GOOGLE_API_KEY"}).`,
      };
    }
    case "bedrock": {
      const model = requestedModel ?? DEFAULT_MODELS.bedrock;
      const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined;
      return {
        provider: bedrock({ model, ...(region ? { region } : {}) }),
        reason: `Using Amazon Bedrock ${model} (region ${region ?? "from the AWS config"}, credentials from the standard AWS chain).`,
      };
    }
  }
}
