// Which tool calls of a run are unfinished and which wait for an answer (an approval, a client's
// result), read from the run's events. Whoever reports a run as `waiting` (the in-process handle's
// status, the session host ending a response when the run is quiescent) asks this one tracker, so
// they cannot disagree: a call whose sub-agent waits counts as waiting at every depth.
import type { AgentEvent } from "../core/events.js";
import { PATH_SEPARATOR } from "./nested-calls.js";

/**
 * The calls of the run in progress, as its events tell them. Feed it every event of the agent
 * (`track`); `agent_start` begins a new run.
 *
 * @example
 * ```ts
 * const calls = createCallTracker();
 * agent.events$.subscribe((event) => calls.track(event));
 * // later: a run whose every unfinished call waits for the client is quiescent
 * if (calls.waiting.size > 0 && calls.unfinishedWait()) console.log("waiting for", [...calls.waiting]);
 * ```
 */
export function createCallTracker(): CallTracker {
  return new CallTracker();
}

/** See {@link createCallTracker}. */
export class CallTracker {
  /** Calls that started executing and have not ended (top-level ids). */
  readonly unfinished = new Set<string>();
  /**
   * Calls waiting for an approval or a client's result: top-level ids, and a sub-agent's calls by
   * their path (`"p1/r1/w1"`).
   */
  readonly waiting = new Set<string>();

  /** What `event` says of the run's calls. */
  track(event: AgentEvent): void {
    switch (event.type) {
      case "agent_start":
        this.unfinished.clear();
        this.waiting.clear();
        break;
      case "tool_execution_start":
        this.unfinished.add(event.toolCallId);
        break;
      case "approval_requested":
      case "tool_result_requested":
        this.waiting.add(event.toolCallId);
        break;
      case "approval_decided":
        this.waiting.delete(event.toolCallId);
        break;
      case "tool_execution_end":
        this.unfinished.delete(event.toolCallId);
        this.waiting.delete(event.toolCallId);
        // Whatever waited in its sub-agent is over with it.
        for (const id of this.waiting)
          if (id.startsWith(`${event.toolCallId}${PATH_SEPARATOR}`)) this.waiting.delete(id);
        break;
    }
  }

  /**
   * Call `id` waits for the client: itself, or a call of its sub-agent at any depth (a nested
   * call's id is the path of call ids), so a run whose only work is a nested approval is waiting.
   */
  waits(id: string): boolean {
    if (this.waiting.has(id)) return true;
    for (const waiting of this.waiting) if (waiting.startsWith(`${id}${PATH_SEPARATOR}`)) return true;
    return false;
  }

  /** Every unfinished call waits, itself or through its sub-agent (true when none is unfinished). */
  unfinishedWait(): boolean {
    for (const id of this.unfinished) if (!this.waits(id)) return false;
    return true;
  }
}
