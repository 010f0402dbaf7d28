// What of a transcript crosses to another agent (a handoff's target, a sub-agent): the option's
// type. Applying it is the agent floor's (agent/context-filter.ts): a summary is a model call.
import type { AgentMessage } from "./messages.js";

/**
 * What of the transcript crosses: `"all"` (the whole transcript), `{ lastTurns: n }` (the last `n`
 * turns, a turn starting at a user message), `"summary"` (one user message summarising it, written
 * by the model), or a function returning the messages to keep (a subset of those it is given, in any
 * order, and messages of its own: those without an id the transcript knows are added).
 *
 * @example
 * ```ts
 * const filter: ContextFilter = { lastTurns: 2 };
 * const custom: ContextFilter = (messages) => messages.filter((m) => m.role !== "custom");
 * ```
 */
export type ContextFilter =
  | "all"
  | "summary"
  | { lastTurns: number }
  | ((
      messages: readonly AgentMessage[],
      signal: AbortSignal,
    ) => readonly AgentMessage[] | Promise<readonly AgentMessage[]>);
