import OpenAI from "openai";
import type { Usage } from "../core/messages.js";
import { chatStreamEvents, guardedStream, toChatRequest } from "./internal/openai-chat.js";
import { responsesStreamEvents, toResponsesRequest } from "./internal/openai-responses.js";
import { withCost } from "./pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "./provider.js";

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
  reasoningEffort?: "minimal" | "low" | "medium" | "high";
}

/** @internal Shared by {@link openai} and `openaiCompatible`: one SDK client, chat or responses. */
export function createOpenAIProvider(config: {
  id: string;
  model: string;
  api: "chat" | "responses";
  apiKey: string | undefined;
  baseURL: string | undefined;
  maxTokens?: number;
  reasoningEffort?: OpenAIOptions["reasoningEffort"];
  /** Chat only: the `max_tokens` field name older OpenAI-compatible servers understand. */
  legacyMaxTokens?: boolean;
  missingKeyMessage?: string;
}): Provider {
  const { model, apiKey } = config;
  // The client (and the key inside it) lives only in this closure.
  const client = apiKey
    ? new OpenAI({ apiKey, baseURL: config.baseURL, maxRetries: 0, timeout: 10 * 60 * 1000 })
    : undefined;
  const finish = (usage: Usage | undefined) => (usage ? withCost(usage, model) : undefined);
  const withReasoning = config.reasoningEffort !== undefined;

  function streamChat(c: OpenAI, request: ProviderRequest, signal: AbortSignal) {
    const { messages, tools } = toChatRequest(request);
    return guardedStream(
      async () => {
        const chunks = await c.chat.completions.create(
          {
            model,
            messages,
            ...(tools ? { tools } : {}),
            stream: true,
            stream_options: { include_usage: true },
            ...(config.maxTokens
              ? config.legacyMaxTokens
                ? { max_tokens: config.maxTokens }
                : { max_completion_tokens: config.maxTokens }
              : {}),
            ...(config.reasoningEffort ? { reasoning_effort: config.reasoningEffort } : {}),
          },
          { signal },
        );
        return chatStreamEvents(chunks, signal, finish);
      },
      signal,
      apiKey,
    );
  }

  function streamResponses(c: OpenAI, request: ProviderRequest, signal: AbortSignal) {
    const { input, tools, instructions } = toResponsesRequest(request, { withReasoning });
    return guardedStream(
      async () => {
        const events = await c.responses.create(
          {
            model,
            input,
            ...(instructions ? { instructions } : {}),
            ...(tools ? { tools } : {}),
            stream: true,
            store: false,
            ...(config.maxTokens ? { max_output_tokens: config.maxTokens } : {}),
            ...(withReasoning
              ? {
                  reasoning: { effort: config.reasoningEffort, summary: "auto" as const },
                  include: ["reasoning.encrypted_content" as const],
                }
              : {}),
          },
          { signal },
        );
        return responsesStreamEvents(events, signal, { withReasoning, secret: apiKey }, finish);
      },
      signal,
      apiKey,
    );
  }

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (!client) {
      yield { type: "error", kind: "auth", message: config.missingKeyMessage ?? "No API key" };
      return;
    }
    yield* config.api === "responses"
      ? streamResponses(client, request, signal)
      : streamChat(client, request, signal);
  }

  return { id: config.id, model, stream: (request, signal) => stream(request, signal) };
}

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
  const api = options.api ?? "chat";
  return createOpenAIProvider({
    id: api === "responses" ? "openai-responses" : "openai",
    model: options.model,
    api,
    apiKey: options.apiKey ?? process.env.OPENAI_API_KEY,
    baseURL: options.baseURL ?? process.env.OPENAI_BASE_URL,
    maxTokens: options.maxTokens,
    reasoningEffort: options.reasoningEffort,
    missingKeyMessage: "No OpenAI API key: set OPENAI_API_KEY or pass apiKey",
  });
}
