import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import type { ContextConfig } from "../core/context-config.js";

export type {
  ContextConfig,
  Summarizer,
  SummaryAnswer,
  SummaryRequest,
  TokenCalibration,
} from "../core/context-config.js";

/**
 * A `ContextConfig` with every default filled in.
 *
 * @example
 * ```ts
 * const resolved: ResolvedContextConfig = resolveContextConfig({ maxContextTokens: 32_000 });
 * ```
 */
export type ResolvedContextConfig = Required<Omit<ContextConfig, "summarizer" | "systemPromptTokens">> &
  Pick<ContextConfig, "summarizer" | "systemPromptTokens">;

/**
 * The defaults `resolveContextConfig` fills in.
 *
 * @example
 * ```ts
 * CONTEXT_DEFAULTS.keepRecent; // 6
 * ```
 */
export const CONTEXT_DEFAULTS = {
  keepFirst: 1,
  keepRecent: 6,
  toolOutputMaxLines: 80,
  toolOutputMaxChars: 8_000,
  targetRatio: 0.6,
  summaryMaxTokens: 2_000,
} as const;

/** The keys of {@link ContextConfig}; any other is refused. */
const CONTEXT_CONFIG_KEYS: OptionKeys<ContextConfig> = {
  maxContextTokens: true,
  systemPromptTokens: true,
  keepFirst: true,
  keepRecent: true,
  toolOutputMaxLines: true,
  toolOutputMaxChars: true,
  targetRatio: true,
  summarizer: true,
  summaryMaxTokens: true,
};

function nonNegativeInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`ContextConfig.${name} must be a non-negative number, got ${value}`);
  }
  return Math.floor(value);
}

/**
 * Fills in the defaults of a `ContextConfig` and checks its numbers, throwing a `RangeError` that
 * names the bad field. Limits below what truncation can honour are raised to the smallest that work
 * (3 lines, 200 characters).
 *
 * @example
 * ```ts
 * resolveContextConfig({ maxContextTokens: 32_000 }).keepRecent; // 6
 * ```
 */
export function resolveContextConfig(config: ContextConfig): ResolvedContextConfig {
  if (!config || !Number.isFinite(config.maxContextTokens) || config.maxContextTokens <= 0) {
    throw new RangeError(
      `ContextConfig.maxContextTokens must be a positive number, got ${config?.maxContextTokens}`,
    );
  }
  checkOptionKeys("ContextConfig", config, CONTEXT_CONFIG_KEYS);
  const targetRatio = config.targetRatio ?? CONTEXT_DEFAULTS.targetRatio;
  if (!(targetRatio > 0 && targetRatio <= 1)) {
    throw new RangeError(`ContextConfig.targetRatio must be in (0, 1], got ${targetRatio}`);
  }
  return {
    maxContextTokens: Math.floor(config.maxContextTokens),
    systemPromptTokens:
      config.systemPromptTokens === undefined
        ? undefined
        : nonNegativeInteger(config.systemPromptTokens, 0, "systemPromptTokens"),
    keepFirst: nonNegativeInteger(config.keepFirst, CONTEXT_DEFAULTS.keepFirst, "keepFirst"),
    keepRecent: nonNegativeInteger(config.keepRecent, CONTEXT_DEFAULTS.keepRecent, "keepRecent"),
    toolOutputMaxLines: Math.max(
      3,
      nonNegativeInteger(
        config.toolOutputMaxLines,
        CONTEXT_DEFAULTS.toolOutputMaxLines,
        "toolOutputMaxLines",
      ),
    ),
    toolOutputMaxChars: Math.max(
      200,
      nonNegativeInteger(
        config.toolOutputMaxChars,
        CONTEXT_DEFAULTS.toolOutputMaxChars,
        "toolOutputMaxChars",
      ),
    ),
    targetRatio,
    summarizer: config.summarizer,
    summaryMaxTokens: Math.max(
      1,
      nonNegativeInteger(config.summaryMaxTokens, CONTEXT_DEFAULTS.summaryMaxTokens, "summaryMaxTokens"),
    ),
  };
}

/**
 * Options of `contextConfigForModel`: the tokens kept for the answer, and any other field.
 *
 * @example
 * ```ts
 * const options: ModelContextOptions = { reserveForOutput: 8_000, keepRecent: 10 };
 * ```
 */
export interface ModelContextOptions extends Omit<ContextConfig, "maxContextTokens"> {
  /** Tokens kept free for the model's answer (default: a fifth of the window, at most 16,384). */
  reserveForOutput?: number;
}

/**
 * Derives a `ContextConfig` from a model's context window: the window minus the tokens reserved
 * for the answer, with the other fields at their defaults unless given.
 *
 * @example
 * ```ts
 * const agent = createAgent({ provider, context: contextConfigForModel(200_000) });
 * // maxContextTokens: 183_616 (16,384 kept for the answer)
 * ```
 */
export function contextConfigForModel(
  contextWindow: number,
  options: ModelContextOptions = {},
): ContextConfig {
  if (!Number.isFinite(contextWindow) || contextWindow <= 0) {
    throw new RangeError(`contextWindow must be a positive number, got ${contextWindow}`);
  }
  const { maxContextTokens: _window, ...keys } = CONTEXT_CONFIG_KEYS;
  checkOptionKeys("contextConfigForModel", options, { ...keys, reserveForOutput: true });
  const { reserveForOutput, ...rest } = options;
  const reserve = reserveForOutput ?? Math.min(16_384, Math.floor(contextWindow / 5));
  if (!Number.isFinite(reserve) || reserve < 0 || reserve >= contextWindow) {
    throw new RangeError(`reserveForOutput must be in [0, ${contextWindow}), got ${reserve}`);
  }
  return { ...rest, maxContextTokens: Math.floor(contextWindow - reserve) };
}
