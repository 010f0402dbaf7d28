import { createOpenAIProvider } from "./internal/openai-provider.js";
import type { Provider } from "./provider.js";
import { checkOptionKeys } from "../core/option-keys.js";
import {
  checkHttpUrl,
  checkInteger,
  checkOneOf,
  checkString,
  checkType,
  refuseValue,
} from "../core/option-values.js";

/** Options of {@link openaiCompatible}. */
export interface OpenAICompatibleOptions {
  /** The server's OpenAI-style base URL, e.g. `http://localhost:11434/v1` (Ollama). */
  baseURL: string;
  /** The model name the server knows, e.g. `llama3.1:8b`. */
  model: string;
  /** Most local servers need none; a placeholder is sent then. */
  apiKey?: string;
  /** Output token cap per call, sent as `max_tokens` (what these servers understand). */
  maxTokens?: number;
  /**
   * Lets the SDK run in a browser (the SDK's own option, off by default): the key, if any, is
   * visible to whoever uses the page.
   */
  dangerouslyAllowBrowser?: boolean;
  /**
   * How an output schema (`createAgent({ output })`) is asked for. `"tool"` (default): an output tool
   * the model must call to finish, which any server with tool calling understands; `"native"`: the
   * `response_format` JSON schema, for servers that support it together with tools (vLLM, recent
   * Ollama, OpenRouter for some models). See docs/output.md.
   */
  structuredOutput?: "native" | "tool";
}

/**
 * A provider for any server that speaks OpenAI's Chat Completions API: Ollama, vLLM, llama.cpp
 * server, LM Studio, OpenRouter. Reasoning these servers stream as `reasoning_content` or
 * `reasoning` becomes thinking; their context-overflow errors are recognised. Cost is computed
 * only for models in the price table (see `setModelPrice`).
 *
 * @example
 * ```ts
 * const provider = openaiCompatible({ baseURL: "http://localhost:11434/v1", model: "qwen3:8b" });
 * ```
 */
export function openaiCompatible(options: OpenAICompatibleOptions): Provider {
  checkOptionKeys("openaiCompatible", options, {
    baseURL: true,
    model: true,
    apiKey: true,
    maxTokens: true,
    dangerouslyAllowBrowser: true,
    structuredOutput: true,
  });
  checkOpenAICompatibleOptions(options);
  return createOpenAIProvider({
    id: "openai-compatible",
    model: options.model,
    api: "chat",
    apiKey: options.apiKey ?? "not-needed",
    baseURL: options.baseURL,
    maxTokens: options.maxTokens,
    legacyMaxTokens: true,
    dangerouslyAllowBrowser: options.dangerouslyAllowBrowser,
    structuredOutput: options.structuredOutput ?? "tool",
  });
}

function checkOpenAICompatibleOptions(options: OpenAICompatibleOptions): void {
  const where = "openaiCompatible";
  if (options === null || typeof options !== "object") {
    refuseValue(where, "options", "an object with a baseURL and a model", options);
  }
  checkString(where, "baseURL", options.baseURL, {
    required: true,
    accepts: 'the server\'s OpenAI-style base URL, e.g. "http://localhost:11434/v1"',
  });
  checkHttpUrl(where, "baseURL", options.baseURL, "http://localhost:11434/v1");
  checkString(where, "model", options.model, {
    required: true,
    accepts: 'the model name the server knows, e.g. "llama3.1:8b" (its /v1/models lists them)',
  });
  checkString(where, "apiKey", options.apiKey);
  checkInteger(where, "maxTokens", options.maxTokens, 1);
  checkType(where, "dangerouslyAllowBrowser", options.dangerouslyAllowBrowser, "boolean");
  checkOneOf(where, "structuredOutput", options.structuredOutput, ["native", "tool"]);
}
