// What of a transcript crosses to another agent: on a handoff (the new agent's view) and into a
// sub-agent (the child's first messages). The filter only ever keeps whole turns, so what crosses is a
// valid transcript: every tool call in it still has its result.
import { summarizerFromProvider } from "../context/summarizer.js";
import type { AgentMessage } from "../core/messages.js";
import type { Provider } from "../core/provider.js";
import type { ContextFilter } from "../core/context-filter.js";

export type { ContextFilter } from "../core/context-filter.js";

/** What a filter let through: the ids it removed and the messages it added (a summary), in order. */
export interface FilteredContext {
  /** The messages that cross, in order. */
  messages: AgentMessage[];
  /** Ids of the messages the filter removed. */
  removedIds: string[];
  /** Messages the filter wrote (a summary): they come first. */
  added: AgentMessage[];
}

/**
 * Checks a context filter option; throws a `TypeError` naming `where` when it is not one.
 *
 * @example
 * ```ts
 * checkContextFilter("defineHandoff context", { lastTurns: 0 }); // throws: lastTurns must be ≥ 1
 * ```
 */
export function checkContextFilter(
  where: string,
  filter: unknown,
): asserts filter is ContextFilter | undefined {
  if (filter === undefined || filter === "all" || filter === "summary" || typeof filter === "function")
    return;
  if (filter !== null && typeof filter === "object" && Object.keys(filter).join() === "lastTurns") {
    const n = (filter as { lastTurns: unknown }).lastTurns;
    if (typeof n === "number" && Number.isInteger(n) && n >= 1) return;
    throw new TypeError(`${where}: lastTurns must be a whole number ≥ 1, got ${String(n)}`);
  }
  throw new TypeError(
    `${where}: must be "all", "summary", { lastTurns: n } or a function of the messages, got ${JSON.stringify(filter) ?? typeof filter}`,
  );
}

/**
 * The last `n` turns of a transcript: from the `n`-th user message from the end (the whole
 * transcript when it has fewer). Cutting only at user messages keeps every call with its result.
 *
 * @example
 * ```ts
 * lastTurns(messages, 1); // the last user message and everything after it
 * ```
 */
export function lastTurns(messages: readonly AgentMessage[], n: number): AgentMessage[] {
  let seen = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user" && ++seen === n) return messages.slice(i);
  }
  return [...messages];
}

/**
 * Applies a context filter to a (complete) transcript: what crosses, and what it removed and added.
 * `"summary"` asks `provider` for the summary. A function's answer is checked: it must be an array
 * of messages, and what it keeps must still answer every call it keeps.
 *
 * @example
 * ```ts
 * const { messages, removedIds } = await filterContext({ lastTurns: 1 }, transcript, { provider, signal });
 * ```
 */
export async function filterContext(
  filter: ContextFilter | undefined,
  transcript: readonly AgentMessage[],
  { provider, signal }: { provider: Provider; signal: AbortSignal },
): Promise<FilteredContext> {
  let kept: readonly AgentMessage[];
  if (filter === undefined || filter === "all") kept = transcript;
  else if (filter === "summary")
    kept = transcript.length === 0 ? [] : [await summaryOf(transcript, provider, signal)];
  else if (typeof filter === "function") kept = await filter(transcript, signal);
  else kept = lastTurns(transcript, filter.lastTurns);
  if (!Array.isArray(kept)) throw new TypeError("the context filter must return an array of messages");
  const known = new Set(transcript.map((m) => m.id));
  const keptIds = new Set(kept.filter((m) => m.id !== undefined && known.has(m.id)).map((m) => m.id));
  const added = kept.filter((m) => m.id === undefined || !known.has(m.id));
  // Kept messages stay in their order, after what the filter wrote.
  const messages = [...added, ...transcript.filter((m) => keptIds.has(m.id))];
  checkCallsAnswered(messages);
  return { messages, removedIds: transcript.filter((m) => !keptIds.has(m.id)).map((m) => m.id!), added };
}

/** One user message with the model's summary of the transcript. */
async function summaryOf(
  transcript: readonly AgentMessage[],
  provider: Provider,
  signal: AbortSignal,
): Promise<AgentMessage> {
  const answer = await summarizerFromProvider(provider)(
    { messages: [...transcript], maxTokens: 1000 },
    signal,
  );
  const text = typeof answer === "string" ? answer : answer.text;
  return { role: "user", content: `Summary of the conversation so far:\n${text}`, timestamp: Date.now() };
}

/** Throws when the messages keep a call without its result, or a result without its call. */
function checkCallsAnswered(messages: readonly AgentMessage[]): void {
  const calls = new Set<string>();
  const results = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant")
      for (const part of m.content) if (part.type === "toolCall") calls.add(part.id);
    if (m.role === "toolResult") results.add(m.toolCallId);
  }
  for (const id of calls) {
    if (!results.has(id)) throw new Error(`the context filter kept tool call "${id}" without its result`);
  }
  for (const id of results) {
    if (!calls.has(id))
      throw new Error(`the context filter kept the result of tool call "${id}" without the call`);
  }
}
