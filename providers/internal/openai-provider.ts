import type OpenAI from "openai";
import type { Usage } from "../../core/messages.js";
import { withCost } from "../pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "../provider.js";
import { classifyProviderError } from "./errors.js";
import { chatStreamEvents, guardedStream, toChatRequest } from "./openai-chat.js";
import { responsesStreamEvents, toResponsesRequest } from "./openai-responses.js";
import { chatResponseFormat, responsesTextFormat, withOutputTool } from "./structured-output.js";

/** Reasoning effort for OpenAI reasoning models. */
export type ReasoningEffort = "minimal" | "low" | "medium" | "high";

/**
 * The provider behind `openai()` and `openaiCompatible()`: one SDK client (no retries), streaming
 * either Chat Completions or the Responses API.
 *
 * @example
 * ```ts
 * createOpenAIProvider({ id: "openai", model: "gpt-4.1", api: "chat", apiKey, baseURL: undefined });
 * ```
 */
export function createOpenAIProvider(config: {
  id: string;
  model: string;
  api: "chat" | "responses";
  apiKey: string | undefined;
  baseURL: string | undefined;
  maxTokens?: number;
  reasoningEffort?: ReasoningEffort;
  /** Chat only: the `max_tokens` field name older OpenAI-compatible servers understand. */
  legacyMaxTokens?: boolean;
  missingKeyMessage?: string;
  dangerouslyAllowBrowser?: boolean;
  /**
   * How an output schema is asked for: `"native"` (default), the API's structured output
   * (`response_format` / `text.format`), which works together with tools; `"tool"`, an output tool
   * the model must call to finish, for servers without it (see `withOutputTool`).
   */
  structuredOutput?: "native" | "tool";
  /** A call that asks for the long cache lifetime sends `prompt_cache_retention: "24h"`. */
  longCache?: boolean;
}): Provider {
  const { model, apiKey } = config;
  // The client (and the key inside it) lives only in this closure. It is made on the first call:
  // the SDK is a few hundred modules that an app importing agent-machine (a serverless cold start,
  // a user of another provider) should not load before it calls the API.
  let client: Promise<OpenAI> | undefined;
  const getClient = (key: string) =>
    (client ??= import("openai").then(
      ({ default: OpenAIClient }) =>
        new OpenAIClient({
          apiKey: key,
          baseURL: config.baseURL,
          maxRetries: 0,
          timeout: 10 * 60 * 1000,
          ...(config.dangerouslyAllowBrowser ? { dangerouslyAllowBrowser: true } : {}),
        }),
    ));
  const finish = (usage: Usage | undefined) => (usage ? withCost(usage, model) : undefined);
  const withReasoning = config.reasoningEffort !== undefined;
  // Extended retention is asked for only where the model has it: elsewhere the API refuses it.
  const retention = (request: ProviderRequest) =>
    config.longCache && request.cacheRetention === "long" ? { prompt_cache_retention: "24h" as const } : {};

  function streamChat(c: OpenAI, request: ProviderRequest, signal: AbortSignal) {
    const { messages, tools, tool_choice } = toChatRequest(request);
    return guardedStream(
      async () => {
        const chunks = await c.chat.completions.create(
          {
            model,
            messages,
            ...(tools ? { tools } : {}),
            ...(tool_choice ? { tool_choice } : {}),
            ...(request.output ? { response_format: chatResponseFormat(request.output) } : {}),
            stream: true,
            stream_options: { include_usage: true },
            ...(config.maxTokens
              ? config.legacyMaxTokens
                ? { max_tokens: config.maxTokens }
                : { max_completion_tokens: config.maxTokens }
              : {}),
            ...(config.reasoningEffort ? { reasoning_effort: config.reasoningEffort } : {}),
            ...retention(request),
          },
          { signal },
        );
        return chatStreamEvents(chunks, signal, finish);
      },
      signal,
      apiKey,
      c.baseURL,
    );
  }

  function streamResponses(c: OpenAI, request: ProviderRequest, signal: AbortSignal) {
    const { input, tools, tool_choice, instructions } = toResponsesRequest(request, { withReasoning });
    return guardedStream(
      async () => {
        const events = await c.responses.create(
          {
            model,
            input,
            ...(instructions ? { instructions } : {}),
            ...(tools ? { tools } : {}),
            ...(tool_choice ? { tool_choice } : {}),
            ...(request.output ? { text: responsesTextFormat(request.output) } : {}),
            stream: true,
            store: false,
            ...(config.maxTokens ? { max_output_tokens: config.maxTokens } : {}),
            ...(withReasoning
              ? {
                  reasoning: { effort: config.reasoningEffort, summary: "auto" as const },
                  include: ["reasoning.encrypted_content" as const],
                }
              : {}),
            ...retention(request),
          },
          { signal },
        );
        return responsesStreamEvents(events, signal, { withReasoning, secret: apiKey }, finish);
      },
      signal,
      apiKey,
      c.baseURL,
    );
  }

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (!apiKey) {
      yield { type: "error", kind: "auth", message: config.missingKeyMessage ?? "No API key" };
      return;
    }
    let opened: OpenAI;
    try {
      opened = await getClient(apiKey);
    } catch (error) {
      yield classifyProviderError(error, signal, apiKey, config.baseURL);
      return;
    }
    if (config.api === "responses") yield* streamResponses(opened, request, signal);
    else if (request.output && config.structuredOutput === "tool") {
      yield* withOutputTool(request, (forced) => streamChat(opened, forced, signal));
    } else yield* streamChat(opened, request, signal);
  }

  return {
    id: config.id,
    model,
    ...(config.maxTokens !== undefined && { maxOutputTokens: config.maxTokens }),
    stream: (request, signal) => stream(request, signal),
  };
}
