/**
 * A pending handle of a tool that answers later, as the store keeps it (JSON-safe, in the same
 * store as the schedules): enough to run the work again after a restart, time it out, and tell the
 * agent which call the result answers.
 *
 * @example
 * ```ts
 * const pending = (await store.load()).filter((record) => record.kind === "laterResult");
 * ```
 */
export interface LaterResultRecord {
  kind: "laterResult";
  /** The handle: `later_<random>`, also the id of the message that brings the result. */
  id: string;
  agentId: string;
  toolName: string;
  /** The call that started the work (it was answered at once with the handle). */
  toolCallId: string;
  /** The call's validated arguments: the work runs again with them after a restart. */
  args: unknown;
  /** When the work started (epoch ms). */
  startedAt: number;
  /** When the agent is told the work timed out (epoch ms); absent: never. */
  deadline?: number;
  /**
   * `running`: the work runs in this process (after a restart, it runs again). `awaiting`: the
   * work handed the job on and the result comes through `laterResults.complete()`.
   */
  phase: "running" | "awaiting";
  /** The `execute_tool` span of the call (W3C `traceparent`): the run the result wakes links to it. */
  traceparent?: string;
}
