// The agents this process runs, by session: a sub-agent's waiting call (a nested approval or
// client-run call, `parentCall/childCall`) waits in memory inside the parent's journaled tool step,
// where no awakeable can be made (Restate allows no step inside a step), so the session's decision
// handlers answer it through the running agent, which routes it down by its path.
import type { ObjectSharedContext } from "@restatedev/restate-sdk";
import { TerminalError } from "@restatedev/restate-sdk";
import type { Agent } from "../agent/create-agent.js";
import { PATH_SEPARATOR } from "../agent/nested-calls.js";
import type { ApprovalBook } from "./session-state.js";

/** The agents this process runs now, one per session (a session runs one run at a time). */
export interface RunningAgents {
  /** Agent `agent` runs session `sessionId` here; returns the function that removes it. */
  add(sessionId: string, agent: Agent): () => void;
  get(sessionId: string): Agent | undefined;
}

/**
 * An empty set of running agents.
 *
 * @example
 * ```ts
 * const running = createRunningAgents();
 * const remove = running.add("s-1", agent);
 * try { await agent.prompt("go"); } finally { remove(); }
 * ```
 */
export function createRunningAgents(): RunningAgents {
  const agents = new Map<string, Agent>();
  return {
    add(sessionId, agent) {
      agents.set(sessionId, agent);
      return () => {
        if (agents.get(sessionId) === agent) agents.delete(sessionId);
      };
    },
    get: (sessionId) => agents.get(sessionId),
  };
}

/** What a nested answer did: applied, or refused (404 when the call does not wait, 400 for bad input). */
type NestedOutcome = { ok: true } | { ok: false; code: 400 | 404; message: string };

/**
 * Answers a sub-agent's waiting call of session `ctx.key` through the agent running it in this
 * process. `undefined` when `toolCallId` is no nested call waiting there (the caller then looks in
 * the session's books, and answers 404 as before). The answer is one journaled step of the handler,
 * so a retried handler does not apply it twice; a refusal (the call no longer waits, edited
 * arguments fail the child tool's schema) is a TerminalError with the call left waiting.
 *
 * @example
 * ```ts
 * const done = await answerNested(ctx, running, "approvals", "call_h/call_w", (a) => a.approve("call_h/call_w"));
 * if (done) return { toolCallId, decision: "approved" };
 * ```
 */
export async function answerNested(
  ctx: ObjectSharedContext,
  running: RunningAgents,
  kind: "approvals" | "clientCalls",
  toolCallId: string,
  act: ((agent: Agent) => void) | undefined,
): Promise<boolean> {
  if (!toolCallId.includes(PATH_SEPARATOR)) return false;
  // A call the session's own book holds (an id a model drew with a "/") is the top agent's.
  if (((await ctx.get<ApprovalBook>(kind)) ?? {})[toolCallId]) return false;
  const outcome = await ctx.run("nested answer", (): NestedOutcome | null => {
    const agent = running.get(ctx.key);
    const waiting = kind === "approvals" ? agent?.pendingApprovals() : agent?.pendingToolCalls();
    if (!agent || !waiting?.some((call) => call.toolCallId === toolCallId)) return null;
    try {
      act?.(agent);
      return { ok: true };
    } catch (error) {
      return {
        ok: false,
        code: error instanceof TypeError ? 400 : 404,
        message: error instanceof Error ? error.message : String(error),
      };
    }
  });
  if (!outcome) return false;
  if (!outcome.ok) throw new TerminalError(outcome.message, { errorCode: outcome.code });
  return true;
}
