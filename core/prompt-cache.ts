// Which prompt cache lifetime each model call asks for. Providers keep a prompt prefix for a short
// while (Anthropic and Bedrock 5 minutes, OpenAI 5 to 10); a run that waits longer between two
// calls (an approval, a client-run tool, the idle time a hibernating agent sleeps through) pays
// the whole prefix again as a cache write, unless the call before the wait asked for the longer
// lifetime (Anthropic and Bedrock 1 hour, at a dearer write; OpenAI 24 hours).
import type { OptionKeys } from "./option-keys.js";
import type { CacheRetention } from "./provider.js";
import type { Tool } from "./tool.js";

/**
 * A wait that may follow a model call: `approval` (a call the answer makes needs `agent.approve`),
 * `clientTool` (a call the client runs), `idle` (the answer ends the run and the agent waits for
 * its next input: a user, a hibernation, a scheduled wake).
 */
export type CachePause = "approval" | "clientTool" | "idle";

/** What the policy is told of one model call (see {@link PromptCacheOptions}'s `retention`). */
export interface CacheRetentionCall {
  /** The waits that may follow this call, from the tools it offers and the agent's options. */
  pauses: readonly CachePause[];
  /** The longest of `expectedPauseMs` over `pauses` (0 when none may follow). */
  expectedPauseMs: number;
}

/** `createAgent({ promptCache })`: when the agent asks providers to keep its prompt cached longer. */
export interface PromptCacheOptions {
  /**
   * `"auto"` (default): the longer lifetime when the pause expected after the call is longer than
   * the short lifetime ({@link SHORT_CACHE_TTL_MS}); `"short"`: never; `"long"`: always; or your
   * own function of the call.
   */
  retention?: "auto" | CacheRetention | ((call: CacheRetentionCall) => CacheRetention);
  /**
   * How long the agent expects each kind of wait to last, in ms. Defaults: `approval` 10 minutes,
   * `clientTool` 1 minute, `idle` 0 (how long people take to write again is the app's to know: a
   * chat answered within minutes pays the long lifetime's dearer writes for nothing; hibernation
   * is a memory policy and says nothing about it).
   */
  expectedPauseMs?: Partial<Record<CachePause, number>>;
}

/** The keys of {@link PromptCacheOptions}. */
export const PROMPT_CACHE_KEYS: OptionKeys<PromptCacheOptions> = { retention: true, expectedPauseMs: true };

/** The providers' short cache lifetime (Anthropic's and Bedrock's default, OpenAI's least): 5 minutes. */
export const SHORT_CACHE_TTL_MS = 5 * 60_000;

const PAUSES: readonly CachePause[] = ["approval", "clientTool", "idle"];

/** Chooses the cache lifetime of a call from the tools it offers (see {@link createCacheRetention}). */
export type CacheRetentionPolicy = (tools: ReadonlyMap<string, Tool>, answerOnly: boolean) => CacheRetention;

/**
 * The agent's cache lifetime policy. A call may be followed by an approval wait when a tool it
 * offers has `needsApproval` or the agent has a permission checker (which may ask), by a client
 * wait when a tool is client-run, and always by the idle wait (its answer may end the run). A call
 * that must answer without tools (`answerOnly`) is followed only by the idle wait.
 *
 * @example
 * ```ts
 * const retention = createCacheRetention({ expectedPauseMs: { idle: 30 * 60_000 } });
 * retention(new Map(), false); // "long": the app expects its users back after 30 minutes
 * ```
 */
export function createCacheRetention(
  options: PromptCacheOptions = {},
  agent: { permissions?: unknown; hibernate?: "whenIdle" | "manual" } = {},
): CacheRetentionPolicy {
  const retention = options.retention ?? "auto";
  if (retention === "short" || retention === "long") return () => retention;
  const expected: Record<CachePause, number> = {
    approval: 10 * 60_000,
    clientTool: 60_000,
    idle: 0,
    ...options.expectedPauseMs,
  };
  const choose =
    retention === "auto"
      ? (call: CacheRetentionCall): CacheRetention =>
          call.expectedPauseMs > SHORT_CACHE_TTL_MS ? "long" : "short"
      : retention;
  // The answer depends only on the tool map: agents keep one map per run, so it is worked out once.
  let last: { tools: ReadonlyMap<string, Tool>; answerOnly: boolean; value: CacheRetention } | undefined;
  return (tools, answerOnly) => {
    if (last && last.tools === tools && last.answerOnly === answerOnly) return last.value;
    const pauses = answerOnly ? ["idle" as const] : pausesAfter(tools, agent.permissions !== undefined);
    const expectedPauseMs = Math.max(0, ...pauses.map((pause) => expected[pause]));
    const value = choose({ pauses, expectedPauseMs });
    if (value !== "short" && value !== "long") {
      throw new TypeError(`promptCache.retention returned ${JSON.stringify(value)}, not "short" or "long"`);
    }
    last = { tools, answerOnly, value };
    return value;
  };
}

/**
 * The waits that may follow a call offering `tools`.
 *
 * @example
 * ```ts
 * pausesAfter(new Map([["deploy", deployTool]]), false); // ["approval", "idle"] when deploy needs approval
 * ```
 */
export function pausesAfter(tools: ReadonlyMap<string, Tool>, hasPermissions: boolean): CachePause[] {
  let approval = hasPermissions;
  let clientTool = false;
  for (const tool of tools.values()) {
    if (tool.needsApproval) approval = true;
    if (tool.external) clientTool = true;
  }
  return PAUSES.filter((pause) => pause === "idle" || (pause === "approval" ? approval : clientTool));
}
