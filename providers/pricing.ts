import type { Usage } from "../core/messages.js";

/** Prices of one model in US dollars per million tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Price of a token read from the prompt cache. Defaults to `input`. */
  cacheRead?: number;
  /** Price of a token written to the prompt cache. Defaults to `input`. */
  cacheWrite?: number;
  /**
   * Price of a token written for the cache's longer lifetime (Anthropic's 1 hour: twice `input`).
   * Defaults to `cacheWrite`.
   */
  cacheWriteLong?: number;
}

/**
 * List prices (USD per million tokens) at the time of writing. Check your provider's price page;
 * add or override models with {@link setModelPrice}. A key of this table prices its model id and
 * that model's dated or versioned snapshots (`claude-sonnet-4-5` prices `claude-sonnet-4-5-20250929`,
 * `gpt-4.1` `gpt-4.1-2025-04-14`, `gemini-3-pro` `gemini-3-pro-preview`), never another model whose
 * id merely starts the same (`gpt-5` does not price `gpt-5-pro`, `o3` not `o3-pro`: a guess that
 * low would let a budget be overspent many times over). The longest matching key wins.
 */
const prices = new Map<string, ModelPrice>(
  Object.entries({
    "claude-opus-4-5": { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25, cacheWriteLong: 10 },
    "claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75, cacheWriteLong: 30 },
    "claude-opus-4": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75, cacheWriteLong: 30 },
    "claude-sonnet-4-6": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
    "claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
    "claude-sonnet-4": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
    "claude-3-7-sonnet": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, cacheWriteLong: 6 },
    "claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25, cacheWriteLong: 2 },
    "claude-3-5-haiku": { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1, cacheWriteLong: 1.6 },
    "gpt-5": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gpt-5-codex": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gpt-5-chat-latest": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gpt-5.1": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gpt-5-mini": { input: 0.25, output: 2, cacheRead: 0.025 },
    "gpt-5-nano": { input: 0.05, output: 0.4, cacheRead: 0.005 },
    "gpt-4.1": { input: 2, output: 8, cacheRead: 0.5 },
    "gpt-4.1-mini": { input: 0.4, output: 1.6, cacheRead: 0.1 },
    "gpt-4.1-nano": { input: 0.1, output: 0.4, cacheRead: 0.025 },
    "gpt-4o": { input: 2.5, output: 10, cacheRead: 1.25 },
    "gpt-4o-mini": { input: 0.15, output: 0.6, cacheRead: 0.075 },
    o3: { input: 2, output: 8, cacheRead: 0.5 },
    // Gemini API paid tier, prompts up to 200k tokens (longer prompts cost more on the Pro models).
    "gemini-3-pro": { input: 2, output: 12, cacheRead: 0.2 },
    "gemini-3-flash": { input: 0.5, output: 3, cacheRead: 0.05 },
    "gemini-2.5-pro": { input: 1.25, output: 10, cacheRead: 0.125 },
    "gemini-2.5-flash": { input: 0.3, output: 2.5, cacheRead: 0.03 },
    "gemini-2.5-flash-lite": { input: 0.1, output: 0.4, cacheRead: 0.01 },
    "gemini-2.0-flash": { input: 0.1, output: 0.4, cacheRead: 0.025 },
    "gemini-2.0-flash-lite": { input: 0.075, output: 0.3 },
    // Amazon Nova on Bedrock (on-demand, us-east-1); Bedrock ids are priced without their region
    // and vendor prefix, so `us.anthropic.claude-sonnet-4-5-…` takes the Claude price above.
    "nova-premier": { input: 2.5, output: 12.5, cacheRead: 0.625 },
    "nova-pro": { input: 0.8, output: 3.2, cacheRead: 0.2 },
    "nova-lite": { input: 0.06, output: 0.24, cacheRead: 0.015 },
    "nova-micro": { input: 0.035, output: 0.14, cacheRead: 0.00875 },
    "o4-mini": { input: 1.1, output: 4.4, cacheRead: 0.275 },
  }),
);

/** The keys of the built-in table, which price snapshots of their model only (see `prices`). */
const builtInKeys = new Set(prices.keys());

/**
 * What may follow a built-in key in a snapshot of the same model: a date (`-20250929`,
 * `-2025-04-14`), a version (`-001`, `-v1:0`), `-latest`, `-preview…` or `-exp…`, and Bedrock's
 * `-v1:0` after any of them.
 */
const SNAPSHOT_SUFFIX =
  /^-(?:\d{8}|\d{4}-\d{2}-\d{2}|\d{3}|v\d+(?::\d+)?|latest|preview(?:-[\w.]+)*|exp(?:-[\w.]+)*)(?:-v\d+(?::\d+)?)?$/;

/**
 * Whether `key` prices `model`: the same id, a snapshot of a built-in key's model, or any id that
 * starts with a key the app set (`setModelPrice("qwen3", …)` prices `qwen3:8b`, as documented).
 *
 * @example
 * ```ts
 * pricesModel("gpt-5", "gpt-5-2025-08-07"); // true
 * pricesModel("gpt-5", "gpt-5-pro"); // false
 * ```
 */
export function pricesModel(key: string, model: string): boolean {
  if (model === key) return true;
  if (!model.startsWith(key)) return false;
  return !builtInKeys.has(key) || SNAPSHOT_SUFFIX.test(model.slice(key.length));
}

/**
 * Adds or replaces the price of a model (or of every model whose id starts with `model`).
 *
 * @example
 * ```ts
 * setModelPrice("my-finetune", { input: 3, output: 12 });
 * setModelPrice("llama3.1", { input: 0, output: 0 }); // a local model is free
 * ```
 */
export function setModelPrice(model: string, price: ModelPrice): void {
  prices.set(model, price);
  // The app's own key is a prefix of every id it names, as documented.
  builtInKeys.delete(model);
}

/**
 * The price of a model: an exact match, else the longest key that prices it ({@link pricesModel}:
 * a snapshot of a built-in model, or an id starting with a key the app set), else `undefined`.
 *
 * @example
 * ```ts
 * modelPrice("claude-sonnet-4-5-20250929"); // { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }
 * ```
 */
export function modelPrice(model: string): ModelPrice | undefined {
  const exact = prices.get(model);
  if (exact) return exact;
  let best: string | undefined;
  for (const key of prices.keys()) {
    if (pricesModel(key, model) && (!best || key.length > best.length)) best = key;
  }
  return best ? prices.get(best) : undefined;
}

/**
 * The usage with its `cost` filled in from the model's price; unchanged when the price is unknown.
 *
 * @example
 * ```ts
 * withCost({ input: 1000, output: 500, cacheRead: 0, cacheWrite: 0, totalTokens: 1500 }, "gpt-4o").cost?.total;
 * ```
 */
export function withCost(usage: Usage, model: string): Usage {
  const price = modelPrice(model);
  if (!price) return usage;
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  const input = usage.input * perToken(price.input);
  const output = usage.output * perToken(price.output);
  const cacheRead = usage.cacheRead * perToken(price.cacheRead ?? price.input);
  // Tokens written for the long lifetime cost more (Anthropic: 2× input, not 1.25×).
  const long = Math.min(usage.cacheWriteLong ?? 0, usage.cacheWrite);
  const cacheWrite =
    (usage.cacheWrite - long) * perToken(price.cacheWrite ?? price.input) +
    long * perToken(price.cacheWriteLong ?? price.cacheWrite ?? price.input);
  return {
    ...usage,
    cost: { input, output, cacheRead, cacheWrite, total: input + output + cacheRead + cacheWrite },
  };
}
