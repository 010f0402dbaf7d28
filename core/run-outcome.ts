import type { AgentEndReason, AgentEventOf } from "./events.js";
import type { AgentMessage, Usage } from "./messages.js";
import type { ProviderErrorKind } from "./provider.js";
import { type PromptCacheReport, promptCacheReport } from "./cache-report.js";

/**
 * How a run ended, as `agent.prompt()` / `agent.continue()` resolve (whatever the outcome: a
 * failed run resolves too, with `reason: "error"`) and as the durable session client's
 * `prompt()` / `result()` answer (with the run's id besides). It is what the run's `agent_end`
 * event reported.
 *
 * @example
 * ```ts
 * const { reason, messages, usage, errorMessage } = await agent.prompt("Summarise the README");
 * if (reason === "error") console.error(errorMessage);
 * else console.log(messages.at(-1), `${usage.totalTokens} tokens`);
 * ```
 */
export interface RunOutcome<TOutput = unknown> {
  /** Why the run ended: `"stop"` (the model answered), `"aborted"`, `"error"`, `"limit"`, `"rejected"`, `"loop"`. */
  reason: AgentEndReason;
  /** The messages this run added to the transcript (the user's prompt first, when it was given). */
  messages: AgentMessage[];
  /**
   * The run's token use (and cost, when the model's price is known), its sub-agents' runs included
   * at every depth: what the whole tree used, as its `maxTokens` and cost limits count it.
   */
  usage: Usage;
  /** The run's own model calls' usage, without its sub-agents'; present when a sub-agent ran. */
  ownUsage?: Usage;
  /**
   * How the run used the prompt cache: calls that read from it, tokens read and written (see
   * `promptCacheReport`); absent when no call reported a cache read or write.
   */
  cache?: PromptCacheReport;
  /** What failed, with reason `"error"`. */
  errorMessage?: string;
  /** With reason `"error"` from the model: what failed, machine-readable (`"auth"`, `"rate_limit"`, …). */
  errorKind?: ProviderErrorKind;
  /**
   * With reason `"rejected"`: why an input filter refused the prompt, or an output filter the last
   * answer (which is then withheld: no `output`, the answer only in `rawOutput`).
   */
  rejection?: string;
  /**
   * The run's typed result, with an output schema (`createAgent({ output })`, `prompt(input, { output })`):
   * the validated object, present whenever the run ended with reason `"stop"`. A run whose model never
   * gave a valid object ends with reason `"error"` instead (never a silent `undefined`).
   */
  output?: TOutput;
  /** The output filters' warnings on the final answer. */
  outputWarnings?: string[];
  /** The model's last answer, when it was never valid output (reason `"error"`) or was rejected. */
  rawOutput?: string;
}

/**
 * The outcome a run's `agent_end` event reports; `rejection` is the reason of the input filter
 * that refused the prompt, when one did.
 *
 * @example
 * ```ts
 * agent.events$.subscribe((e) => e.type === "agent_end" && save(runOutcomeOf(e)));
 * ```
 */
export function runOutcomeOf<TOutput = unknown>(
  end: AgentEventOf<"agent_end">,
  rejection = end.rejection,
): RunOutcome<TOutput> {
  return {
    reason: end.reason,
    messages: end.messages,
    usage: end.usage,
    ...(end.ownUsage !== undefined && { ownUsage: end.ownUsage }),
    ...withCacheReport(end.messages),
    ...(end.errorMessage !== undefined && { errorMessage: end.errorMessage }),
    ...(end.errorKind !== undefined && { errorKind: end.errorKind }),
    ...(rejection !== undefined && { rejection }),
    ...("output" in end && { output: end.output as TOutput }),
    ...(end.outputWarnings !== undefined && { outputWarnings: end.outputWarnings }),
    ...(end.rawOutput !== undefined && { rawOutput: end.rawOutput }),
  };
}

function withCacheReport(messages: readonly AgentMessage[]): { cache?: PromptCacheReport } {
  const cache = promptCacheReport(messages);
  return cache ? { cache } : {};
}
