import { CHARS_PER_TOKEN, estimateMessageTokens } from "../context/tokens.js";
import { RESERVE_CHARS_PER_TOKEN } from "../providers/call-cost.js";
import { PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import {
  type AgentMessage,
  type AssistantMessage,
  type CustomMessage,
  countedTokens,
  type Usage,
} from "../core/messages.js";
import type { AgentLimits } from "../core/options.js";

/** `customType` of the notice that asks the model for its answer at a limit. */
export const LIMIT_NOTICE_TYPE = "limit_notice";

/** Which limit a run met. */
export type LimitName = "maxTurns" | "maxTokens" | "maxDurationMs" | "maxCostUsd" | "maxSessionCostUsd";

/** What a budget in money needs at the turn gate: what was spent, and the next call's worst case. */
export interface RunSpend {
  /** USD the run has spent. */
  runUsd: number;
  /** USD the agent has spent over its life, this run included. */
  sessionUsd: number;
  /** The most the next call can cost (see `worstCaseCallUsd`); asked only when a cost limit is set. */
  nextCallUsd: () => number;
}

/** What the turn gate does about the limits. */
export interface LimitVerdict {
  limit: Exclude<LimitName, "maxDurationMs">;
  /** `answer`: one more model call, without tools, then the run ends; `stop`: it ends now. */
  action: "answer" | "stop";
  /** e.g. `Max turns reached (3/3)`: the stop notice's text, and the limit event's. */
  text: string;
}

/**
 * What the limits decide before another turn starts: nothing (`undefined`), one last call for an
 * answer, or stop. With `onLimit: "stop"` a limit stops the run as soon as it is reached. With
 * `"answer"` (the default):
 *
 * - `maxTurns`: once the run has made `maxTurns` model calls, one more call answers (it is the
 *   `maxTurns + 1`-th).
 * - `maxTokens`: the run answers as soon as the budget left cannot pay for two more calls of the
 *   current size (the turn it would run and the answer after it), while it can still pay for one;
 *   when not even one fits, it stops. `nextCallTokens` estimates one call (see
 *   {@link nextCallTokens}); it is asked only when `maxTokens` is set.
 * - `maxCostUsd` / `maxSessionCostUsd` (with `spend`): see {@link costVerdict}; a cost limit that
 *   says stop wins over the others, so no call is made that might cross the budget.
 *
 * @example
 * ```ts
 * limitVerdict({ maxTurns: 3 }, { turn: 3, usage }, () => 0);
 * // { limit: "maxTurns", action: "answer", text: "Max turns reached (3/3)" }
 * ```
 */
export function limitVerdict(
  limits: AgentLimits,
  run: { turn: number; usage: Usage; subAgentUsage?: Usage },
  nextCallTokens: () => number,
  spend?: RunSpend,
): LimitVerdict | undefined {
  const cost = spend && costVerdict(limits, spend);
  // A call the budget cannot pay is never made, whatever the other limits would allow.
  if (cost?.action === "stop") return cost;
  return tokenVerdict(limits, run, nextCallTokens) ?? cost;
}

/**
 * What the cost limits decide: stop when the next call's worst case does not fit in what is left
 * (per run or per session, whichever is less), answer when it fits once but not twice (with
 * `onLimit: "answer"`), else nothing.
 *
 * @example
 * ```ts
 * costVerdict({ maxCostUsd: 1 }, { runUsd: 0.95, sessionUsd: 0.95, nextCallUsd: () => 0.1 });
 * // { limit: "maxCostUsd", action: "stop", text: "Cost limit reached ($0.9500 of $1.0000, next call up to $0.1000)" }
 * ```
 */
export function costVerdict(limits: AgentLimits, spend: RunSpend): LimitVerdict | undefined {
  const runLeft = limits.maxCostUsd === undefined ? Infinity : limits.maxCostUsd - spend.runUsd;
  const sessionLeft =
    limits.maxSessionCostUsd === undefined ? Infinity : limits.maxSessionCostUsd - spend.sessionUsd;
  if (runLeft === Infinity && sessionLeft === Infinity) return undefined;
  const limit = runLeft <= sessionLeft ? "maxCostUsd" : "maxSessionCostUsd";
  const left = Math.min(runLeft, sessionLeft);
  const next = spend.nextCallUsd();
  const [spent, max] =
    limit === "maxCostUsd"
      ? [spend.runUsd, limits.maxCostUsd!]
      : [spend.sessionUsd, limits.maxSessionCostUsd!];
  const what = limit === "maxCostUsd" ? "Cost limit" : "Session cost limit";
  const amounts = `${usd(spent)} of ${usd(max)}, next call up to ${usd(next)}`;
  if (next > left) return { limit, action: "stop", text: `${what} reached (${amounts})` };
  if (limits.onLimit !== "stop" && 2 * next > left) {
    return { limit, action: "answer", text: `${what} nearly spent (${amounts})` };
  }
  return undefined;
}

function usd(amount: number): string {
  return `$${amount.toFixed(4)}`;
}

function tokenVerdict(
  limits: AgentLimits,
  run: { turn: number; usage: Usage; subAgentUsage?: Usage },
  nextCallTokens: () => number,
): LimitVerdict | undefined {
  const answers = limits.onLimit !== "stop";
  if (limits.maxTurns !== undefined && run.turn >= limits.maxTurns) {
    return {
      limit: "maxTurns",
      action: answers ? "answer" : "stop",
      text: `Max turns reached (${run.turn}/${limits.maxTurns})`,
    };
  }
  if (limits.maxTokens === undefined) return undefined;
  // The run's sub-agents' tokens count too: the budget is the tree's.
  const used = treeTokens(run);
  const max = limits.maxTokens;
  if (!answers) {
    return used >= max ? { limit: "maxTokens", action: "stop", text: tokenText(used, max) } : undefined;
  }
  const next = nextCallTokens();
  if (used >= max || used + next > max) {
    return { limit: "maxTokens", action: "stop", text: tokenText(used, max) };
  }
  if (used + 2 * next > max) {
    return {
      limit: "maxTokens",
      action: "answer",
      text: `Token budget nearly spent (${used}/${max}, next call ~${next})`,
    };
  }
  return undefined;
}

/**
 * The tokens a run counts against `maxTokens`: its own model calls' and its sub-agents' (their
 * whole trees'), input, output and both cache counts.
 *
 * @example
 * ```ts
 * treeTokens({ usage, subAgentUsage }); // e.g. 18_400
 * ```
 */
export function treeTokens(run: { usage: Usage; subAgentUsage?: Usage }): number {
  return countedTokens(run.usage) + (run.subAgentUsage ? countedTokens(run.subAgentUsage) : 0);
}

function tokenText(used: number, max: number): string {
  return `Token limit reached (${used}/${max})`;
}

/**
 * Tokens the next model call will likely count against `maxTokens`: the last call's prompt as the
 * provider reported it, plus its answer and everything added since (both now part of the prompt),
 * plus as much output again. Without a reported call it estimates the whole transcript. Cheap: it
 * walks back to the last assistant message only, and message estimates are cached.
 *
 * @example
 * ```ts
 * nextCallTokens(agent.messages, []); // e.g. 12_480
 * ```
 */
export function nextCallTokens(messages: readonly AgentMessage[], pending: readonly AgentMessage[]): number {
  let added = 0;
  for (const message of pending) added += estimateMessageTokens(message);
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant" && message.usage.input + message.usage.cacheRead > 0) {
      const { input, cacheRead, cacheWrite, output } = message.usage;
      return input + cacheRead + cacheWrite + 2 * output + added;
    }
    added += estimateMessageTokens(message);
  }
  return added;
}

/**
 * The prompt tokens the next call may send, for the budget's reservation: the last call's prompt
 * and answer as the provider counted them, plus what was added since estimated at
 * `RESERVE_CHARS_PER_TOKEN` (or, before any call, the system prompt and tools too), plus the
 * notice a limit may add.
 *
 * @example
 * ```ts
 * nextPromptTokens(agent.messages, [], 1_200); // e.g. 14_000
 * ```
 */
export function nextPromptTokens(
  messages: readonly AgentMessage[],
  pending: readonly AgentMessage[],
  fixedPromptTokens: number,
): number {
  const margin = CHARS_PER_TOKEN / RESERVE_CHARS_PER_TOKEN;
  let added = noticeTokens();
  for (const message of pending) added += estimateMessageTokens(message);
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "assistant" && message.usage.input + message.usage.cacheRead > 0) {
      const { input, cacheRead, cacheWrite, output } = message.usage;
      return input + cacheRead + cacheWrite + output + Math.ceil(added * margin);
    }
    added += estimateMessageTokens(message);
  }
  return fixedPromptTokens + Math.ceil(added * margin);
}

let limitNoticeTokens: number | undefined;
function noticeTokens(): number {
  return (limitNoticeTokens ??= estimateMessageTokens(
    limitNotice({ limit: "maxSessionCostUsd", action: "answer", text: "x".repeat(120) }, 0, "notice"),
  ));
}

/**
 * The message that asks the model for its answer: a custom message (the model sees it as a user
 * message; apps can tell it from the user's own), kept in the transcript so the answer that follows
 * makes sense when the conversation goes on.
 *
 * @example
 * ```ts
 * limitNotice({ limit: "maxTurns", action: "answer", text: "Max turns reached (3/3)" }).content;
 * // "[Max turns reached (3/3). No more tool calls: answer now …]"
 * ```
 */
export function limitNotice(
  verdict: LimitVerdict,
  timestamp = Date.now(),
  id = PROCESS_MESSAGE_IDS.next(),
): CustomMessage {
  return {
    role: "custom",
    customType: LIMIT_NOTICE_TYPE,
    content:
      `[${verdict.text}. No more tool calls can run: answer now, from what you have found so far. ` +
      "Give the best answer you can, and say plainly what is unfinished or uncertain.]",
    display: "model",
    details: { limit: verdict.limit },
    timestamp,
    id,
    source: "agent",
  };
}

/** What the model reads for a call it made when it was asked to answer without tools. */
export function notRunAtLimitText(toolName: string): string {
  return `Tool ${toolName} was not run: the run reached its limit and asked for an answer without tool calls`;
}

/** Whether the run's last turn gave the answer a limit asked for: text, and no failure or tool call. */
export function answeredAtLimit(message: AssistantMessage | undefined): boolean {
  if (!message || message.stopReason === "error" || message.stopReason === "aborted") return false;
  let text = false;
  for (const block of message.content) {
    if (block.type === "toolCall") return false;
    if (block.type === "text" && block.text.trim() !== "") text = true;
  }
  return text;
}
