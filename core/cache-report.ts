import type { AgentMessage, Usage } from "./messages.js";

/** How a run (or a session) used the providers' prompt cache. */
export interface PromptCacheReport {
  /** Model calls that reported usage. */
  calls: number;
  /** Of them, the calls that read part of their prompt from the cache. */
  hits: number;
  /** Prompt tokens read from the cache, written to it, and written for the long lifetime. */
  readTokens: number;
  writeTokens: number;
  writeLongTokens: number;
  /** Share of all prompt tokens (input, cache reads and writes) that were read from the cache: 0 to 1. */
  hitRatio: number;
}

/**
 * The cache report of the assistant messages among `messages` (a run's, as `agent_end` carries
 * them, or a whole transcript); `undefined` when no call reported a cache read or write (the
 * provider has no cache, or reports none).
 *
 * @example
 * ```ts
 * const outcome = await agent.prompt("…");
 * promptCacheReport(outcome.messages); // { calls: 3, hits: 2, readTokens: 24000, …, hitRatio: 0.81 }
 * ```
 */
export function promptCacheReport(messages: readonly AgentMessage[]): PromptCacheReport | undefined {
  let calls = 0;
  let hits = 0;
  let prompt = 0;
  const report = { readTokens: 0, writeTokens: 0, writeLongTokens: 0 };
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    const usage = message.usage as Usage | undefined;
    if (!usage) continue;
    calls++;
    if (usage.cacheRead > 0) hits++;
    report.readTokens += usage.cacheRead;
    report.writeTokens += usage.cacheWrite;
    report.writeLongTokens += usage.cacheWriteLong ?? 0;
    prompt += usage.input + usage.cacheRead + usage.cacheWrite;
  }
  if (report.readTokens === 0 && report.writeTokens === 0) return undefined;
  return { calls, hits, ...report, hitRatio: prompt > 0 ? report.readTokens / prompt : 0 };
}
