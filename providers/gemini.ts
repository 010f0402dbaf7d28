import type { Usage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { checkHttpUrl, checkInteger, checkOneOf, checkString, refuseValue } from "../core/option-values.js";
import { parseRetryAfterMs } from "./internal/errors.js";
import { processEnv } from "./internal/env.js";
import { toGeminiRequest } from "./internal/gemini-request.js";
import { classifyGeminiError, type GeminiChunk, geminiStreamEvents } from "./internal/gemini-stream.js";
import { loadOptionalPeer } from "./internal/optional-peer.js";
import { withCost } from "./pricing.js";
import type { Provider, ProviderEvent, ProviderRequest } from "./provider.js";
import { withOutputTool } from "./internal/structured-output.js";

/** Options of {@link gemini}. */
export interface GeminiOptions {
  /** A Gemini model id, e.g. `gemini-2.5-flash` or `gemini-3-pro-preview`. */
  model: string;
  /**
   * Gemini API key. Defaults to `GEMINI_API_KEY`, else `GOOGLE_API_KEY`. Not used with `vertex`
   * (Vertex AI authenticates with Google Cloud credentials). Kept inside the SDK client only.
   */
  apiKey?: string;
  /**
   * Vertex AI instead of the Gemini API: `true` takes the project and location from
   * `GOOGLE_CLOUD_PROJECT` / `GOOGLE_CLOUD_LOCATION`, and credentials from Application Default
   * Credentials (the SDK's `vertexai` option).
   */
  vertex?:
    | boolean
    | {
        project?: string;
        location?: string;
        /**
         * Passed to google-auth-library's `GoogleAuth` (e.g. `{ keyFilename }`, `{ credentials }` or
         * `{ authClient }`); default: Application Default Credentials.
         */
        googleAuthOptions?: Record<string, unknown>;
      };
  /** Another endpoint for the API (the SDK's `httpOptions.baseUrl`), e.g. a proxy. */
  baseURL?: string;
  /** Output token cap per model call (`maxOutputTokens`). Default: the model's. */
  maxTokens?: number;
  /**
   * Thinking: `true` asks for thought summaries with the model's own budget; a `budgetTokens`
   * (Gemini 2.5) or a `level` (Gemini 3) sets how much. `false` (or a budget of 0) turns thinking
   * off where the model allows it. Default: the model's default, without summaries.
   */
  thinking?: boolean | { budgetTokens?: number; level?: "minimal" | "low" | "medium" | "high" };
  /** The name of an explicit context cache (`cachedContents/…`) this conversation's prefix is in. */
  cachedContent?: string;
}

const GEMINI_KEYS: OptionKeys<GeminiOptions> = {
  model: true,
  apiKey: true,
  vertex: true,
  baseURL: true,
  maxTokens: true,
  thinking: true,
  cachedContent: true,
};

type GenAIModule = typeof import("@google/genai");
type GenAIClient = InstanceType<GenAIModule["GoogleGenAI"]>;

function thinkingConfig(thinking: GeminiOptions["thinking"]) {
  if (thinking === undefined) return undefined;
  if (thinking === false) return { thinkingBudget: 0 };
  if (thinking === true) return { includeThoughts: true };
  return {
    includeThoughts: thinking.budgetTokens !== 0,
    ...(thinking.budgetTokens !== undefined ? { thinkingBudget: thinking.budgetTokens } : {}),
    ...(thinking.level ? { thinkingLevel: thinking.level.toUpperCase() } : {}),
  };
}

/**
 * A provider for Google Gemini over the official `@google/genai` SDK (an optional peer
 * dependency: `npm install @google/genai`), on the Gemini API or, with `vertex`, on Vertex AI.
 * Streams text, thought summaries (their signatures go back on the next request) and function
 * calls, parallel ones included. The SDK neither retries nor resumes a stream (the agent retries);
 * every failure ends the stream with one `error` event.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: gemini({ model: "gemini-2.5-flash", thinking: true }), // GEMINI_API_KEY
 *   tools: [readTool],
 * });
 * ```
 */
export function gemini(options: GeminiOptions): Provider {
  checkOptionKeys("gemini", options, GEMINI_KEYS);
  checkGeminiOptions(options);
  const { model } = options;
  const env = processEnv();
  const vertexOptions = typeof options.vertex === "object" ? options.vertex : {};
  const vertex = options.vertex
    ? {
        project: vertexOptions.project ?? env.GOOGLE_CLOUD_PROJECT,
        location: vertexOptions.location ?? env.GOOGLE_CLOUD_LOCATION ?? "global",
        googleAuthOptions: vertexOptions.googleAuthOptions,
      }
    : undefined;
  const apiKey = vertex
    ? options.apiKey
    : (options.apiKey ?? (env.GEMINI_API_KEY || env.GOOGLE_API_KEY || undefined));
  const finish = (usage: Usage | undefined) => (usage ? withCost(usage, model) : undefined);
  // Named in a connection failure (the SDK's own defaults when no baseURL is given).
  const endpoint =
    options.baseURL ??
    (vertex
      ? `https://${vertex.location === "global" ? "" : `${vertex.location}-`}aiplatform.googleapis.com`
      : "https://generativelanguage.googleapis.com");
  // The client (and the key inside it) lives only in this closure, made on the first call.
  let client: Promise<GenAIClient> | undefined;
  const getClient = () =>
    (client ??= loadOptionalPeer<GenAIModule>("@google/genai").then(
      ({ GoogleGenAI }) =>
        new GoogleGenAI({
          ...(vertex
            ? {
                vertexai: true,
                project: vertex.project,
                location: vertex.location,
                ...(vertex.googleAuthOptions ? { googleAuthOptions: vertex.googleAuthOptions as never } : {}),
              }
            : {}),
          ...(apiKey ? { apiKey } : {}),
          httpOptions: {
            ...(options.baseURL ? { baseUrl: options.baseURL } : {}),
            // Streams have no overall deadline here: the agent's limits and abort decide.
            timeout: 10 * 60 * 1000,
          },
        }),
    ));

  async function* stream(request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    if (!vertex && !apiKey) {
      yield {
        type: "error",
        kind: "auth",
        message: "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass apiKey",
      };
      return;
    }
    // The SDK's ApiError keeps no headers: a 429's or 503's retry-after (Vertex AI, a gateway) is
    // read here, for when the body has no RetryInfo.
    let headerWaitMs: number | undefined;
    const readWait = async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await fetch(input, init);
      if (!response.ok) headerWaitMs = parseRetryAfterMs(response.headers);
      return response;
    };
    try {
      const ai = await getClient();
      const { contents, systemInstruction, tools, toolConfig } = toGeminiRequest(request);
      const thinking = thinkingConfig(options.thinking);
      const chunks = await ai.models.generateContentStream({
        model,
        contents: contents as never,
        config: {
          abortSignal: signal,
          httpOptions: { fetch: readWait } as never,
          ...(systemInstruction ? { systemInstruction } : {}),
          ...(tools ? { tools: tools as never } : {}),
          ...(toolConfig ? { toolConfig: toolConfig as never } : {}),
          ...(options.maxTokens ? { maxOutputTokens: options.maxTokens } : {}),
          ...(thinking ? { thinkingConfig: thinking as never } : {}),
          ...(options.cachedContent ? { cachedContent: options.cachedContent } : {}),
          // The agent owns retries and tool calls: no automatic function calling, no resumption.
          automaticFunctionCalling: { disable: true },
          ...({ automaticContinuation: false } as object),
        },
      });
      yield* geminiStreamEvents(chunks as AsyncIterable<GeminiChunk>, signal, finish);
    } catch (error) {
      yield classifyGeminiError(error, signal, apiKey, endpoint, headerWaitMs);
    }
  }

  return {
    id: vertex ? "gemini-vertex" : "gemini",
    model,
    ...(options.maxTokens !== undefined && { maxOutputTokens: options.maxTokens }),
    // Gemini's responseSchema does not combine with function calling: the output is a tool (docs/output.md).
    stream: (request, signal) => withOutputTool(request, (forced) => stream(forced, signal)),
  };
}

function checkGeminiOptions(options: GeminiOptions): void {
  const where = "gemini";
  checkString(where, "model", options.model, {
    required: true,
    accepts: 'a Gemini model id, e.g. "gemini-2.5-flash"',
  });
  checkString(where, "apiKey", options.apiKey);
  checkHttpUrl(where, "baseURL", options.baseURL, "https://generativelanguage.googleapis.com");
  checkInteger(where, "maxTokens", options.maxTokens, 1);
  checkString(where, "cachedContent", options.cachedContent);
  const { vertex, thinking } = options;
  if (vertex !== undefined && typeof vertex !== "boolean" && (vertex === null || typeof vertex !== "object"))
    refuseValue(where, "vertex", "true or { project?, location?, googleAuthOptions? }", vertex);
  if (thinking !== undefined && typeof thinking !== "boolean") {
    if (thinking === null || typeof thinking !== "object")
      refuseValue(where, "thinking", "a boolean or { budgetTokens?, level? }", thinking);
    checkInteger(where, "thinking.budgetTokens", thinking.budgetTokens, 0);
    checkOneOf(where, "thinking.level", thinking.level, ["minimal", "low", "medium", "high"]);
  }
}
