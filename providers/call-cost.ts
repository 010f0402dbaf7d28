import type { Provider } from "../core/provider.js";
import { bedrockPriceId } from "./bedrock.js";
import { modelPrice } from "./pricing.js";

/**
 * Output tokens reserved for a call when the provider states no cap (`maxOutputTokens`). Anthropic
 * and Bedrock state theirs; give OpenAI, Gemini and the others `maxTokens` for a tighter budget.
 */
export const UNCAPPED_OUTPUT_TOKENS = 32_000;

/**
 * Characters per token of the reservation's estimate of prompt text no provider has counted yet:
 * below the context estimate's 4, so code and non-English text (fewer characters per token) are
 * not under-reserved.
 */
export const RESERVE_CHARS_PER_TOKEN = 3;

/**
 * What the budget needs to know of a model call's worst case, as plain data (it lives in the
 * agent's context and snapshots): the dearest prices among the models the provider may use.
 */
export interface CallCostModel {
  /** USD per prompt token: the dearest of input and cache write (the long lifetime's included). */
  promptUsdPerToken: number;
  /** USD per output token. */
  outputUsdPerToken: number;
  /** The most output tokens one call may produce. */
  maxOutputTokens: number;
  /** Tokens of the system prompt and tool definitions, at {@link RESERVE_CHARS_PER_TOKEN}. */
  fixedPromptTokens: number;
}

/**
 * The cost model of a provider (a `fallback` chain or a `route`: of every model it may use, the
 * dearest prices and the largest output cap). Throws a `TypeError` naming a model without a price:
 * a budget in money cannot count a model it cannot price (`setModelPrice` adds one).
 *
 * @example
 * ```ts
 * callCostModel(anthropic({ model: "claude-sonnet-4-5" }), 1_200);
 * // { promptUsdPerToken: 0.00000375, outputUsdPerToken: 0.000015, maxOutputTokens: 8192, fixedPromptTokens: 1200 }
 * ```
 */
export function callCostModel(provider: Provider, fixedPromptTokens: number): CallCostModel {
  const model: CallCostModel = {
    promptUsdPerToken: 0,
    outputUsdPerToken: 0,
    maxOutputTokens: 0,
    fixedPromptTokens,
  };
  for (const member of leavesOf(provider)) {
    const price = modelPrice(member.id === "bedrock" ? bedrockPriceId(member.model) : member.model);
    if (!price) {
      throw new TypeError(
        `createAgent limits.maxCostUsd: the model "${member.model}" has no price; add one with setModelPrice("${member.model}", { input, output })`,
      );
    }
    // The cache policy may ask any call for the long lifetime: its writes are the dearest prompt.
    const write = price.cacheWrite ?? price.input;
    const prompt = Math.max(price.input, write, price.cacheWriteLong ?? write) / 1_000_000;
    model.promptUsdPerToken = Math.max(model.promptUsdPerToken, prompt);
    model.outputUsdPerToken = Math.max(model.outputUsdPerToken, price.output / 1_000_000);
    model.maxOutputTokens = Math.max(model.maxOutputTokens, member.maxOutputTokens ?? UNCAPPED_OUTPUT_TOKENS);
  }
  return model;
}

/**
 * The most one call can cost, in USD: its prompt at the dearest prompt price, and as much output
 * as it may produce at the dearest output price.
 *
 * @example
 * ```ts
 * worstCaseCallUsd(model, 10_000); // e.g. 0.0375 + 0.12288
 * ```
 */
export function worstCaseCallUsd(model: CallCostModel, promptTokens: number): number {
  return promptTokens * model.promptUsdPerToken + model.maxOutputTokens * model.outputUsdPerToken;
}

function leavesOf(provider: Provider): Provider[] {
  if (!provider.members) return [provider];
  return provider.members.flatMap(leavesOf);
}
