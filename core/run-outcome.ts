import type { AgentEndReason, AgentEventOf } from "./events.js";
import type { AgentMessage, Usage } from "./messages.js";
import type { ProviderErrorKind } from "./provider.js";

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
export interface RunOutcome {
  /** Why the run ended: `"stop"` (the model answered), `"aborted"`, `"error"`, `"limit"`, `"rejected"`, `"loop"`. */
  reason: AgentEndReason;
  /** The messages this run added to the transcript (the user's prompt first, when it was given). */
  messages: AgentMessage[];
  /** The run's token use (and cost, when the model's price is known). */
  usage: Usage;
  /** What failed, with reason `"error"`. */
  errorMessage?: string;
  /** With reason `"error"` from the model: what failed, machine-readable (`"auth"`, `"rate_limit"`, …). */
  errorKind?: ProviderErrorKind;
  /** Why the input filters refused the prompt (reason `"rejected"`). */
  rejection?: string;
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
export function runOutcomeOf(end: AgentEventOf<"agent_end">, rejection?: string): RunOutcome {
  return {
    reason: end.reason,
    messages: end.messages,
    usage: end.usage,
    ...(end.errorMessage !== undefined && { errorMessage: end.errorMessage }),
    ...(end.errorKind !== undefined && { errorKind: end.errorKind }),
    ...(rejection !== undefined && { rejection }),
  };
}
