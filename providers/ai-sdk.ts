import type { Usage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { checkInteger, checkType } from "../core/option-values.js";
import { type AiSdkSpecVersion, toAiSdkPrompt } from "./internal/ai-sdk-prompt.js";
import { type AiSdkStreamPart, aiSdkStreamEvents, classifyAiSdkError } from "./internal/ai-sdk-stream.js";
import { withCost } from "./pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "./provider.js";
import { withOutputTool } from "./internal/structured-output.js";

/**
 * What {@link aiSdk} needs of an AI SDK language model: the provider-level `LanguageModel`
 * specification (`@ai-sdk/provider`'s `LanguageModelV2`, `V3` or `V4`, what `@ai-sdk/mistral`,
 * `@ai-sdk/groq`, `@ai-sdk/openai-compatible` and the rest return). Typed structurally, so this
 * package needs none of the AI SDK's packages.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: AiSdkSpecVersion;
  readonly provider: string;
  readonly modelId: string;
  doStream(options: never): PromiseLike<{ stream: ReadableStream<unknown> }>;
}

/** Options of {@link aiSdk}. */
export interface AiSdkOptions {
  /** Output token cap per model call (`maxOutputTokens`). */
  maxTokens?: number;
  /** Passed to every call as the AI SDK's `providerOptions` (e.g. `{ anthropic: { thinking: … } }`). */
  providerOptions?: Record<string, Record<string, unknown>>;
  /** Extra HTTP headers for every call. */
  headers?: Record<string, string>;
}

const AI_SDK_KEYS: OptionKeys<AiSdkOptions> = { maxTokens: true, providerOptions: true, headers: true };

/**
 * A provider for any AI SDK language model — Mistral, Groq, xAI, Together, Ollama, Bedrock, and the
 * rest of the AI SDK's catalogue — through its `doStream` (specification v2, v3 or v4: AI SDK 5, 6
 * or 7). Stream parts become our events (text, reasoning, streamed tool calls, usage, finish
 * reason); errors keep their retry hints (`statusCode`, `retry-after`, `isRetryable`). The model's
 * own package does the HTTP, with whatever key it reads; the AI SDK never retries here (the agent
 * does).
 *
 * @example
 * ```ts
 * import { createMistral } from "@ai-sdk/mistral";
 * const agent = createAgent({
 *   provider: aiSdk(createMistral()("mistral-large-latest")), // MISTRAL_API_KEY
 *   tools: [readTool],
 * });
 * ```
 */
export function aiSdk(model: AiSdkLanguageModel, options: AiSdkOptions = {}): Provider {
  checkOptionKeys("aiSdk", options, AI_SDK_KEYS);
  checkInteger("aiSdk", "maxTokens", options.maxTokens, 1);
  checkType("aiSdk", "providerOptions", options.providerOptions, "object");
  checkType("aiSdk", "headers", options.headers, "object");
  const version = model?.specificationVersion;
  if (version !== "v2" && version !== "v3" && version !== "v4") {
    throw new TypeError(
      `aiSdk() needs an AI SDK LanguageModel object of specification v2, v3 or v4 (got ${
        typeof model === "string" ? `the string "${model}"` : `specificationVersion ${String(version)}`
      })`,
    );
  }
  const id = `ai-sdk:${model.provider}`;
  const finish = (usage: Usage | undefined) => (usage ? withCost(usage, model.modelId) : undefined);

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    try {
      const { prompt, tools, toolChoice } = toAiSdkPrompt(request, version, id);
      const result = await model.doStream({
        prompt,
        ...(tools ? { tools } : {}),
        ...(toolChoice ? { toolChoice } : {}),
        ...(options.maxTokens ? { maxOutputTokens: options.maxTokens } : {}),
        ...(options.providerOptions ? { providerOptions: options.providerOptions } : {}),
        ...(options.headers ? { headers: options.headers } : {}),
        abortSignal: signal,
        includeRawChunks: false,
      } as never);
      yield* aiSdkStreamEvents(result.stream as ReadableStream<AiSdkStreamPart>, signal, finish);
    } catch (error) {
      yield classifyAiSdkError(error, signal);
    }
  }

  // The wrapped model may be any provider's: the output tool works with every one that calls tools.
  return {
    id,
    model: model.modelId,
    ...(options.maxTokens !== undefined && { maxOutputTokens: options.maxTokens }),
    stream: (request, signal) => withOutputTool(request, (forced) => stream(forced, signal)),
  };
}
