import type { AgentEndReason } from "../core/events.js";
import { PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import {
  type AgentMessage,
  type AssistantMessage,
  emptyUsage,
  type ToolCall,
  type ToolResultMessage,
  type Usage,
  type UserMessage,
} from "../core/messages.js";
import type { ProviderErrorKind } from "../providers/provider.js";
import type { AgentLimits, InputFilter, PromptInput, QueueMode } from "../core/options.js";
import type { LoopState } from "./loop-detection.logic.js";
import type { OutputSpec } from "../core/output.js";
import type { AnswerCheck } from "./output.logic.js";
import { notRunAtLimitText, treeTokens } from "./limit-answer.logic.js";
import { abortedText, truncatedCallText } from "./tool-execution.logic.js";
import { messagesFrom } from "./transcript.js";

const EMPTY: readonly never[] = Object.freeze([]);

/**
 * One shared, frozen empty list, for context fields that are empty most of the time (queues, the
 * turn's results): an idle agent holds no empty array of its own. The machine never changes a list
 * in place (each update makes a new one), and the freeze makes sure of it.
 *
 * @example
 * ```ts
 * const context = { pending: noItems<AgentMessage>(), steeringQueue: noItems<AgentMessage>() };
 * ```
 */
export function noItems<T>(): T[] {
  return EMPTY as unknown as T[];
}

/** What one run (prompt or continue, to its `agent_end`) has done so far. */
export interface RunState {
  /** Model calls made. */
  turn: number;
  usage: Usage;
  /**
   * USD the run's sub-agents spent (their results' `details.usage`), counted against a cost
   * limit; set only by an agent with one.
   */
  subAgentUsd?: number;
  /**
   * What the run's sub-agents used, their whole trees (their results' `details.treeUsage`): counted
   * against `maxTokens` and added to the run's reported usage; absent until a sub-agent's result.
   */
  subAgentUsage?: Usage;
  /** USD the run's compaction summaries cost (their `summaryUsage`), likewise. */
  summaryUsd?: number;
  /**
   * Where this run's messages begin in the transcript. What `agent_end` and `prompt()` report is
   * `rewritten` followed by the transcript from here: computed once, when the run ends.
   */
  firstMessage: number;
  /** This run's messages that a compaction rewrote in the transcript, as they were (usually none). */
  rewritten: AgentMessage[];
  endReason?: AgentEndReason;
  errorMessage?: string;
  /** Why a limit stopped the run, e.g. `Max turns reached (2/2)`. */
  limitText?: string;
  turnMessage?: AssistantMessage;
  /** Tool results of the current turn, in call order. */
  turnResults: ToolResultMessage[];
  executionSpawned: boolean;
  needsCompaction: boolean;
  forceCompaction: boolean;
  overflowRetried: boolean;
  /** Retries of this turn after a context overflow (absent in snapshots of older releases: 0). */
  overflowRetries?: number;
  /** The provider's words of this turn's last context overflow, for the error if retrying cannot help. */
  overflowError?: string;
  /** What failed, when the run ends with a model error (`agent_end.errorKind`). */
  errorKind?: ProviderErrorKind;
  /** Loop detection's memory of this run's calls (absent until the first result). */
  loop?: LoopState;
  /** A limit was reached and this turn asks the model for its answer, without tools. */
  answeringLimit: boolean;
  /** The run's output schema (absent: the run answers in text). */
  output?: OutputSpec;
  /** What the output checks found in the run's last final answer (with an output schema or filters). */
  answer?: AnswerCheck;
  /** Answers sent back to the model in this run: invalid ones (`repairs`), rejected ones (`rejections`). */
  outputRetries?: { repairs: number; rejections: number };
}

/** A fresh run whose messages will begin at `firstMessage` in the transcript (with its output schema). */
export function newRun(firstMessage = 0, output?: OutputSpec): RunState {
  return {
    turn: 0,
    usage: emptyUsage(),
    firstMessage,
    rewritten: noItems(),
    turnResults: noItems(),
    executionSpawned: false,
    needsCompaction: false,
    forceCompaction: false,
    overflowRetried: false,
    answeringLimit: false,
    // Only when set: the initial context's shape (and so the snapshot version) stays as it was.
    ...(output && { output }),
  };
}

/**
 * The run as a new turn opens: the turn counted, its per-turn fields reset, with every field of
 * {@link RunState} present (absent ones `undefined`), in one order.
 *
 * Why every field: each update of the run copies it with a spread (`{ ...run, turnMessage }`).
 * V8 copies an object quickly when every copy site sees the same shape, but the run's optional
 * fields, appearing at different updates in different orders, gave it a dozen shapes, and each
 * spread of those went the slow way (about 0.4 µs, several times a turn). Made whole here once a
 * turn, the run keeps one shape for the rest of it. (Fields that are `undefined` vanish in JSON,
 * so persisted snapshots are unchanged.)
 *
 * @example
 * ```ts
 * openedRun(newRun()); // { turn: 1, ..., turnMessage: undefined, turnResults: [], ... }
 * ```
 */
export function openedRun(run: RunState): RunState {
  const next: { [K in keyof Required<RunState>]: RunState[K] } = {
    turn: run.turn + 1,
    usage: run.usage,
    subAgentUsd: run.subAgentUsd,
    subAgentUsage: run.subAgentUsage,
    summaryUsd: run.summaryUsd,
    firstMessage: run.firstMessage,
    rewritten: run.rewritten,
    endReason: run.endReason,
    errorMessage: run.errorMessage,
    limitText: run.limitText,
    turnMessage: undefined,
    turnResults: noItems(),
    executionSpawned: false,
    needsCompaction: false,
    forceCompaction: false,
    overflowRetried: false,
    overflowRetries: 0,
    overflowError: run.overflowError,
    errorKind: run.errorKind,
    loop: run.loop,
    answeringLimit: run.answeringLimit,
    output: run.output,
    // The checks of a final answer belong to its turn.
    answer: undefined,
    outputRetries: run.outputRetries,
  };
  return next;
}

/** The messages a run added, in order, with the originals of any a compaction rewrote. */
export function runMessages(
  messages: readonly AgentMessage[],
  run: Pick<RunState, "firstMessage" | "rewritten">,
): AgentMessage[] {
  const added = messagesFrom(messages, run.firstMessage);
  return run.rewritten.length ? [...run.rewritten, ...added] : added;
}

/**
 * Takes the messages a turn consumes from a queue: the first one, or all of them.
 *
 * @example
 * ```ts
 * takeFromQueue([a, b], "one-at-a-time"); // { taken: [a], rest: [b] }
 * ```
 */
export function takeFromQueue<T>(queue: readonly T[], mode: QueueMode): { taken: T[]; rest: T[] } {
  if (mode === "all") return { taken: [...queue], rest: [] };
  return { taken: queue.slice(0, 1), rest: queue.slice(1) };
}

/**
 * The limit that stops the run before another turn, as the notice text, or `undefined`.
 * `maxTurns` counts model calls; `maxTokens` counts input, output and both cache counts.
 */
export function limitReached(
  limits: AgentLimits,
  run: Pick<RunState, "turn" | "usage" | "subAgentUsage">,
): string | undefined {
  if (limits.maxTurns !== undefined && run.turn >= limits.maxTurns) {
    return `Max turns reached (${run.turn}/${limits.maxTurns})`;
  }
  if (limits.maxTokens !== undefined) {
    const used = treeTokens(run);
    if (used >= limits.maxTokens) return `Token limit reached (${used}/${limits.maxTokens})`;
  }
  return undefined;
}

/** The text of the notice for a run that ran out of time. */
export function durationLimitText(maxDurationMs: number): string {
  return `Time limit reached (${maxDurationMs} ms)`;
}

/** The assistant message that closes a run stopped by a limit. It is not a turn. */
export function stopNotice(
  limitText: string,
  timestamp = Date.now(),
  id = PROCESS_MESSAGE_IDS.next(),
): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text: `[Agent stopped: ${limitText}]` }],
    stopReason: "stop",
    usage: emptyUsage(),
    timestamp,
    id,
  };
}

/** An assistant message with no content, for a turn that ended before the model answered. */
export function emptyAssistant(
  stopReason: "aborted" | "error",
  errorMessage: string,
  timestamp = Date.now(),
  id = PROCESS_MESSAGE_IDS.next(),
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    stopReason,
    usage: emptyUsage(),
    errorMessage,
    timestamp,
    id,
  };
}

/** What closes an answer that was stopped mid-way (an abort), so the model reads it as cut off. */
export const INTERRUPTED_MARK = "[interrupted]";

/**
 * An answer aborted after some of its text arrived, with {@link INTERRUPTED_MARK} after that text
 * (a text block of its own): the words a user saw stay in the transcript, and the model, reading
 * them in the next request, knows they were cut off rather than its whole answer. Any other
 * message is returned as it is.
 *
 * @example
 * ```ts
 * markInterrupted(aborted).content.at(-1); // { type: "text", text: "\n\n[interrupted]" }
 * ```
 */
export function markInterrupted(message: AssistantMessage): AssistantMessage {
  if (message.stopReason !== "aborted") return message;
  const said = message.content.some((block) => block.type === "text" && block.text.trim() !== "");
  if (!said) return message;
  return { ...message, content: [...message.content, { type: "text", text: `\n\n${INTERRUPTED_MARK}` }] };
}

/** The tool calls of a message that must run (failed or aborted messages keep only completed ones). */
export function callsOf(message: AssistantMessage | undefined): ToolCall[] {
  if (!message) return [];
  return message.content.filter((c): c is ToolCall => c.type === "toolCall");
}

/**
 * Whether an answer stopped at the output limit: its tool calls may be unfinished, so none runs.
 *
 * @example
 * ```ts
 * isTruncated(turnMessage); // true for stopReason "length"
 * ```
 */
export function isTruncated(message: AssistantMessage | undefined): boolean {
  return message?.stopReason === "length";
}

/**
 * The error text of each call of a message that will not run: the limit's (an answer a limit asked
 * for), the abort's (a failed or aborted message, a run that is ending), or the truncation's.
 *
 * @example
 * ```ts
 * unranCallText({ answeringLimit: false, endReason: undefined }, truncatedAnswer)("bash"); // "Not run: your answer was cut off …"
 * ```
 */
export function unranCallText(
  run: Pick<RunState, "answeringLimit" | "endReason">,
  message: AssistantMessage,
): (toolName: string) => string {
  if (run.answeringLimit) return notRunAtLimitText;
  if (run.endReason !== undefined || message.stopReason === "error" || message.stopReason === "aborted")
    return abortedText;
  return isTruncated(message) ? truncatedCallText : abortedText;
}

/**
 * Whether a message asks for a tool call (`callsOf(message).length > 0`, without the list).
 *
 * @example
 * ```ts
 * hasCalls(turnMessage); // true when the model asked for a tool
 * ```
 */
export function hasCalls(message: AssistantMessage | undefined): boolean {
  if (!message) return false;
  for (const block of message.content) if (block.type === "toolCall") return true;
  return false;
}

/**
 * Gives every tool call of a message an id unique in the message, so each call can have its own
 * actor and its own result. Providers almost never repeat ids; when one does, the later call gets
 * a suffix.
 */
export function ensureUniqueToolCallIds(message: AssistantMessage): AssistantMessage {
  const seen = new Set<string>();
  let changed = false;
  const content = message.content.map((block) => {
    if (block.type !== "toolCall") return block;
    let id = block.id || "call";
    for (let n = 2; seen.has(id); n++) id = `${block.id || "call"}#${n}`;
    seen.add(id);
    if (id === block.id) return block;
    changed = true;
    return { ...block, id };
  });
  return changed ? { ...message, content } : message;
}

/** Turns what `prompt()` accepts into transcript messages. */
export function toMessages(input: PromptInput, timestamp = Date.now()): AgentMessage[] {
  if (typeof input === "string") return [{ role: "user", content: input, timestamp }];
  return Array.isArray(input) ? [...input] : [input];
}

/** The outcome of running the input filters over some messages. */
export type Screening = { ok: true; messages: AgentMessage[] } | { ok: false; reason: string };

/**
 * Runs the input filters over every user message, in order: the first reject wins (a throwing
 * filter rejects with its message); warnings are appended to the message as `[Warning: …]`.
 */
export function screenInput(filters: readonly InputFilter[], messages: readonly AgentMessage[]): Screening {
  if (filters.length === 0) return { ok: true, messages: [...messages] };
  const out: AgentMessage[] = [];
  for (const message of messages) {
    if (message.role !== "user") {
      out.push(message);
      continue;
    }
    const text = userText(message);
    const warnings: string[] = [];
    for (const filter of filters) {
      let verdict: ReturnType<InputFilter>;
      try {
        verdict = filter(text);
      } catch (error) {
        return { ok: false, reason: error instanceof Error ? error.message : String(error) };
      }
      if ("reject" in verdict) return { ok: false, reason: verdict.reject };
      if ("warn" in verdict) warnings.push(verdict.warn);
    }
    out.push(warnings.length ? withWarnings(message, warnings) : message);
  }
  return { ok: true, messages: out };
}

function userText(message: UserMessage): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
}

function withWarnings(message: UserMessage, warnings: string[]): UserMessage {
  const note = warnings.map((w) => `[Warning: ${w}]`).join("\n");
  if (typeof message.content === "string") return { ...message, content: `${message.content}\n\n${note}` };
  return { ...message, content: [...message.content, { type: "text", text: note }] };
}
