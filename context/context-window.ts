import type { AgentMessage } from "../core/messages.js";
import { type ContextConfig, resolveContextConfig, type TokenCalibration } from "./config.js";
import { contextBudget, estimateTokens } from "./tokens.js";

/**
 * The sizes a context-overflow error states, when it states them: the request's size and the
 * model's maximum, in the provider's tokens.
 *
 * @example
 * ```ts
 * parseContextOverflow("prompt is too long: 3396 tokens > 1000 maximum"); // { requested: 3396, maximum: 1000 }
 * ```
 */
export interface StatedContextOverflow {
  requested?: number;
  maximum?: number;
}

const NUMBER = String.raw`(\d[\d,_]*)`;

/** How the supported APIs state the sizes, requested first or maximum first. */
const STATED_SIZES: { pattern: RegExp; requested: number; maximum: number }[] = [
  // Anthropic: "prompt is too long: 3396 tokens > 1000 maximum"
  { pattern: new RegExp(`${NUMBER} tokens? > ${NUMBER} maximum`, "i"), requested: 1, maximum: 2 },
  // OpenAI chat, vLLM, OpenRouter: "maximum context length is 128000 tokens. However, your messages
  // resulted in 130514 tokens" / "you requested 5000 tokens"
  {
    pattern: new RegExp(
      `maximum context length is ${NUMBER} tokens?[^\\d]*?(?:resulted in|requested|have|of) ${NUMBER} tokens?`,
      "i",
    ),
    requested: 2,
    maximum: 1,
  },
  // llama.cpp server: "the request (5000 tokens) exceeds the available context size (4096 tokens)"
  {
    pattern: new RegExp(
      `\\(${NUMBER} tokens?\\) exceeds the available context size \\(${NUMBER} tokens?\\)`,
      "i",
    ),
    requested: 1,
    maximum: 2,
  },
  // OpenAI, one request over the tokens-per-minute limit: "… (TPM): Limit 30000, Requested 50000."
  { pattern: new RegExp(`Limit ${NUMBER}, Requested ${NUMBER}`, "i"), requested: 2, maximum: 1 },
  // LM Studio: "... (5000) is greater than the context length (4096)"
  {
    pattern: new RegExp(`\\(${NUMBER}\\) is greater than the context length[^\\d]*\\(?${NUMBER}`, "i"),
    requested: 1,
    maximum: 2,
  },
];

/**
 * Anthropic (and Claude on Bedrock) count the output cap in: "input length and `max_tokens` exceed
 * context limit: 188240 + 21333 > 200000". The input may then take the window less the cap.
 */
const INPUT_PLUS_OUTPUT = new RegExp(`exceed context limit: ${NUMBER} \\+ ${NUMBER} > ${NUMBER}`, "i");

function inputAndOutputSizes(message: string): StatedContextOverflow | undefined {
  const match = INPUT_PLUS_OUTPUT.exec(message);
  if (!match) return undefined;
  const input = toNumber(match[1]);
  const output = toNumber(match[2]);
  const limit = toNumber(match[3]);
  if (input === undefined || output === undefined || limit === undefined) return undefined;
  return limit > output ? { requested: input, maximum: limit - output } : { requested: input };
}

/** xAI: "This model's maximum prompt length is 131072 but the request contains 200000 tokens." */
const PROMPT_LENGTH = new RegExp(
  `maximum prompt length is ${NUMBER} but the request contains ${NUMBER}`,
  "i",
);

/** A maximum stated without the request's size ("maximum context length is 8192 tokens"). */
const STATED_MAXIMUM = new RegExp(
  `(?:maximum context length is|context (?:window|length|size) (?:is|of)) ${NUMBER} tokens?`,
  "i",
);

const toNumber = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const value = Number(text.replace(/[,_]/g, ""));
  return Number.isFinite(value) && value > 0 ? value : undefined;
};

/**
 * Reads the request size and the model's maximum out of a context-overflow error message, for the
 * wordings of Anthropic (also "input + max_tokens > limit", where the maximum is the room left
 * for the input), OpenAI, vLLM, OpenRouter, llama.cpp, LM Studio and xAI; `{}` when it states none.
 *
 * @example
 * ```ts
 * parseContextOverflow("This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.");
 * // { requested: 9000, maximum: 8192 }
 * ```
 */
export function parseContextOverflow(message: string | undefined): StatedContextOverflow {
  if (!message) return {};
  const withOutput = inputAndOutputSizes(message);
  if (withOutput) return withOutput;
  for (const { pattern, requested, maximum } of STATED_SIZES) {
    const match = pattern.exec(message);
    if (match) return { requested: toNumber(match[requested]), maximum: toNumber(match[maximum]) };
  }
  const prompt = PROMPT_LENGTH.exec(message);
  if (prompt) return { requested: toNumber(prompt[2]), maximum: toNumber(prompt[1]) };
  const maximum = toNumber(STATED_MAXIMUM.exec(message)?.[1]);
  return maximum === undefined ? {} : { maximum };
}

/**
 * What an overflow taught: the largest request (in our token estimate, system prompt and tools
 * included) the model is now assumed to take, and what it was derived from.
 *
 * @example
 * ```ts
 * const learned: LearnedContextWindow = { maxContextTokens: 15_200, previous: 32_000, refusedTokens: 16_480, providerMaximum: 16_000 };
 * ```
 */
export interface LearnedContextWindow {
  /** The new `maxContextTokens` for the rest of the session. */
  maxContextTokens: number;
  /** The one in force before. */
  previous: number;
  /** Our estimate of the refused request: its messages plus the system prompt and tools. */
  refusedTokens: number;
  /** The maximum the error stated, in the provider's tokens. */
  providerMaximum?: number;
  /** The request size the error stated, in the provider's tokens. */
  providerRequested?: number;
}

/** Share of the stated maximum (converted to our estimate) kept as the new window: a margin for our estimate's error. */
const STATED_MARGIN = 0.95;
/** Without a stated maximum: the new window is this share of the refused request, lowered again on each overflow. */
const UNSTATED_SHRINK = 0.9;

/**
 * Lowers the context window after the provider refused a request as too long: to the maximum the
 * error states (converted into our estimate's units with the sizes it states: `refused × maximum ÷
 * requested`), less a 5 % margin; without stated sizes, to 90 % of the refused request, so repeated
 * overflows keep lowering it. Never raises the window, and never below one token.
 *
 * `messages` are the refused request's messages, `current` the `maxContextTokens` in force (the
 * configured one, or one learned earlier).
 *
 * @example
 * ```ts
 * const learned = learnContextWindow({
 *   config: { maxContextTokens: 32_000 },
 *   current: 32_000,
 *   messages: agent.messages,
 *   errorMessage: "prompt is too long: 21000 tokens > 16000 maximum",
 * });
 * // learned.maxContextTokens ≈ 0.95 × 16000 in our estimate's units
 * ```
 */
export function learnContextWindow(input: {
  config: ContextConfig;
  current: number;
  messages: readonly AgentMessage[];
  calibration?: TokenCalibration;
  errorMessage?: string;
}): LearnedContextWindow {
  const resolved = resolveContextConfig({ ...input.config, maxContextTokens: input.current });
  const overhead = resolved.maxContextTokens - contextBudget(resolved, input.calibration);
  const refusedTokens = estimateTokens(input.messages) + overhead;
  const stated = parseContextOverflow(input.errorMessage);
  let learned = Math.floor(refusedTokens * UNSTATED_SHRINK);
  if (stated.maximum !== undefined) {
    const inOurUnits =
      stated.requested !== undefined && stated.requested > stated.maximum
        ? (refusedTokens * stated.maximum) / stated.requested
        : stated.maximum;
    learned = Math.floor(Math.min(inOurUnits * STATED_MARGIN, refusedTokens * STATED_MARGIN));
  }
  return {
    maxContextTokens: Math.max(1, Math.min(input.current, learned)),
    previous: input.current,
    refusedTokens,
    ...(stated.maximum !== undefined && { providerMaximum: stated.maximum }),
    ...(stated.requested !== undefined && { providerRequested: stated.requested }),
  };
}

/**
 * The budget in force: the configured one with its window lowered to what overflows taught, or,
 * for an agent configured without one, the learned window alone (so it compacts from then on).
 *
 * @example
 * ```ts
 * withLearnedWindow({ maxContextTokens: 32_000, keepRecent: 4 }, 15_000); // { maxContextTokens: 15_000, keepRecent: 4 }
 * ```
 */
export function withLearnedWindow(
  config: ContextConfig | undefined,
  learned: number | undefined,
): ContextConfig | undefined {
  if (learned === undefined) return config;
  if (!config) return { maxContextTokens: learned };
  return learned < config.maxContextTokens ? { ...config, maxContextTokens: learned } : config;
}

/**
 * The text of a run that ends because even the smallest context the compaction rules allow was
 * refused: what happened, what was kept, and what the user can do (the provider's words last).
 *
 * @example
 * ```ts
 * contextOverflowText({ providerMessage: "prompt is too long: 3396 tokens > 1000 maximum", messages: 12, tokens: 3100, maxContextTokens: 950 });
 * ```
 */
export function contextOverflowText(input: {
  providerMessage: string;
  /** Messages in the transcript, kept as they are. */
  messages: number;
  /** Our estimate of their tokens. */
  tokens: number;
  /** The window in force after the overflow. */
  maxContextTokens: number;
}): string {
  return [
    `The conversation does not fit the model's context window: even compacted to the smallest the rules allow (the first message, a marker, the most recent turns), the model refused it.`,
    `Kept: the compacted transcript, your last message included (${input.messages} messages, about ${input.tokens} tokens by our estimate; the model's window is now taken to be about ${input.maxContextTokens} tokens).`,
    `What you can do: make the last message or tool output shorter, lower context.keepRecent, use a model with a larger context window, or start a new session.`,
    `(Provider: ${input.providerMessage})`,
  ].join(" ");
}
