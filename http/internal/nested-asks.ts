// Answers to calls waiting in sub-agents, after a restart. A thread restored from its store runs a
// sub-agent call that was in flight anew (the sub-agent is not in the parent's snapshot), and its
// child asks for the same approval again moments later, under the same path id. The client's
// answer, sent to the restarted host, names that id before it is asked again: the host waits for
// the ask instead of refusing the answer as unknown.
import type { ThreadBackend } from "./thread-backend.js";

/** How long an answer waits for its nested call to be asked again (a model call of the child). */
export const NESTED_ASK_WAIT_MS = 30_000;
const POLL_MS = 20;

/**
 * Resolves once none of `ids` names a nested call that its thread has not asked yet while the
 * sub-agent call it runs under (the id's first segment) is still unanswered in the transcript;
 * or when the run rests, or after `maxMs`. Answers to calls asked already never wait.
 *
 * @example
 * ```ts
 * await untilNestedAsked(agent, askedHere, ["p1/r1/w1"]); // then check and apply the answer
 * ```
 */
export async function untilNestedAsked(
  agent: ThreadBackend,
  asked: ReadonlySet<string>,
  ids: readonly string[],
  maxMs = NESTED_ASK_WAIT_MS,
): Promise<void> {
  const missing = () =>
    agent.state !== "idle" &&
    ids.some((id) => id.includes("/") && !asked.has(id) && !isPending(agent, id) && runsUnder(agent, id));
  // Polled: a restored run's events may not reach the thread (its log began before the restart),
  // and what the thread knows of pending calls is the view it last read.
  const until = Date.now() + maxMs;
  while (missing() && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    await agent.refresh().catch(() => undefined);
  }
}

function isPending(agent: ThreadBackend, id: string): boolean {
  return (
    agent.pendingApprovals().some((p) => p.toolCallId === id) ||
    agent.pendingToolCalls().some((p) => p.toolCallId === id)
  );
}

/** The id's top call is in the transcript, without a result yet: its sub-agent may ask again. */
function runsUnder(agent: ThreadBackend, id: string): boolean {
  const top = id.slice(0, id.indexOf("/"));
  let called = false;
  for (const m of agent.messages) {
    if (m.role === "toolResult" && m.toolCallId === top) return false;
    if (m.role === "assistant" && m.content.some((c) => c.type === "toolCall" && c.id === top)) called = true;
  }
  return called;
}
