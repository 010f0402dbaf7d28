// A run Restate kills (a retry policy's `onMaxAttempts: "kill"`, or an operator's kill) runs none
// of the run's code: the session's state keeps the record of a running run. A status read that
// finds one asks the ingress whether its invocation is still going.
import { emptyUsage } from "../core/messages.js";
import type { SessionStatus } from "./session-types.js";

/** How Restate answered for a run's invocation: still going, or over with what it ended with. */
export type RunFate = { ended: false } | { ended: true; message: string };

/**
 * The status as it is, or, when it reads "running" but Restate says the run's invocation is over
 * and a second read still finds that run's record running, the run as ended: idle, no call
 * waiting, its last run ended with reason "error" and what Restate ended it with (`killed`). The
 * second read tells a killed run from one that ended as usual between the two reads (a run writes
 * its end before its invocation completes). `startedAt` and `endedAt` are 0: nothing recorded them.
 *
 * @example
 * ```ts
 * const status = await settledRun(await read(), (runId) => fateOf(url, runId), read);
 * ```
 */
export async function settledRun(
  status: SessionStatus,
  fate: (runId: string) => Promise<RunFate>,
  reread: () => Promise<SessionStatus>,
): Promise<SessionStatus> {
  if (status.state !== "running") return status;
  const found = await fate(status.runId);
  if (!found.ended) return status;
  const again = await reread();
  if (again.state !== "running" || again.runId !== status.runId) return again;
  return {
    ...again,
    state: "idle",
    pendingApprovals: [],
    pendingToolCalls: [],
    lastRun: {
      runId: again.runId,
      reason: "error",
      errorMessage: `The run was ended by Restate before it finished: ${found.message}`,
      usage: emptyUsage(),
      startedAt: 0,
      endedAt: 0,
    },
  };
}

/**
 * What the ingress says of invocation `runId` (`/restate/invocation/{id}/output`): 470 while it
 * goes on; a failure's message once it failed (a kill reads `killed`). Anything else (a success,
 * a gateway's refusal, no answer) is taken as still going: only Restate's own failure says a run
 * ended without ending its record.
 *
 * @example
 * ```ts
 * await fateOf({ url: "http://127.0.0.1:8080" }, "inv_1abc"); // { ended: true, message: "killed" }
 * ```
 */
export async function fateOf(
  ingress: { url: string; headers?: Record<string, string> },
  runId: string,
): Promise<RunFate> {
  try {
    const response = await fetch(`${ingress.url}/restate/invocation/${encodeURIComponent(runId)}/output`, {
      ...(ingress.headers && { headers: ingress.headers }),
    });
    const text = await response.text();
    if (response.status === 470 || response.ok) return { ended: false };
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === "string" ? { ended: true, message } : { ended: false };
  } catch {
    return { ended: false };
  }
}
