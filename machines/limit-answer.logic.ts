import { estimateMessageTokens } from "../context/tokens.js";
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
export type LimitName = "maxTurns" | "maxTokens" | "maxDurationMs";

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
 *
 * @example
 * ```ts
 * limitVerdict({ maxTurns: 3 }, { turn: 3, usage }, () => 0);
 * // { limit: "maxTurns", action: "answer", text: "Max turns reached (3/3)" }
 * ```
 */
export function limitVerdict(
  limits: AgentLimits,
  run: { turn: number; usage: Usage },
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
  const used = countedTokens(run.usage);
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
