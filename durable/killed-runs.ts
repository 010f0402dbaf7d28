// A run Restate kills (a retry policy's `onMaxAttempts: "kill"`, or an operator's kill) runs none
// of the run's code: the session's state keeps the record of a running run. A status read that
// finds one asks the ingress whether its invocation is still going; an updates read (what polls
// make) asks only when the record has read the same for a while (durable/run-fates.ts).
import type { AgentEvent } from "../core/events.js";
import { emptyUsage } from "../core/messages.js";
import type { RunFates } from "./run-fates.js";
import type { RecordedEvents, SessionStatus, SessionUpdates } from "./session-types.js";

/** How Restate answered for a run's invocation: still going, or over with what it ended with. */
export type RunFate = { ended: false } | { ended: true; message: string };

/**
 * The status as it is, or, when it reads "running" but Restate says the run's invocation is over
 * and a second read still finds that run's record running, the run as ended: idle, no call
 * waiting, its last run ended with reason "error" and what Restate ended it with (`killed`). The
 * second read tells a killed run from one that ended as usual between the two reads (a run writes
 * its end before its invocation completes). `startedAt` and `endedAt` are 0: nothing recorded them.
 * `onKilled` hears of a run found so.
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
  onKilled?: (runId: string, message: string) => void,
): Promise<SessionStatus> {
  if (status.state !== "running") return status;
  const found = await fate(status.runId);
  if (!found.ended) return status;
  const again = await reread();
  if (again.state !== "running" || again.runId !== status.runId) return again;
  onKilled?.(again.runId, found.message);
  return endedStatus(again, found.message);
}

/**
 * A session's updates as {@link settledRun} reads its status, asking Restate only when `fates`
 * says a question is due (the record has read the same for a while): a run this client found
 * killed reads as ended at once, and its recorded events (when asked for) end with an `agent_end`
 * of reason "error", as a run that failed records them.
 *
 * @example
 * ```ts
 * const answer = await settledUpdates(await read(), request, "s-42", fates, (runId) => fateOf(ingress, runId), read);
 * ```
 */
export async function settledUpdates(
  answer: SessionUpdates,
  request: UpdatesRequest,
  sessionId: string,
  fates: RunFates,
  fate: (runId: string) => Promise<RunFate>,
  reread: () => Promise<SessionUpdates>,
): Promise<SessionUpdates> {
  const settled = (given: SessionUpdates): SessionUpdates => {
    const { status } = given;
    const killed = status.state === "running" ? fates.killed(status.runId) : undefined;
    const withStatus = killed === undefined ? given : { ...given, status: endedStatus(status, killed) };
    // Events of a killed run asked for beside another run's status (the next one started) end too.
    const events = withStatus.events;
    const eventsKilled = events && !events.ended ? fates.killed(events.runId) : undefined;
    return eventsKilled === undefined
      ? withStatus
      : { ...withStatus, events: endedEvents(events!, request.events?.since ?? 0, eventsKilled) };
  };
  const { status } = answer;
  // Known killed: no question. Else `due` keeps the cadence (and forgets a record not running).
  if (status.state === "running" && fates.killed(status.runId) !== undefined) return settled(answer);
  if (!fates.due(sessionId, status)) return settled(answer);
  const found = await fate(status.runId);
  if (!found.ended) return settled(answer);
  const again = await reread();
  if (again.status.state === "running" && again.status.runId === status.runId) {
    fates.noteKilled(status.runId, found.message);
  }
  return settled(again);
}

/**
 * Run `events.runId`'s recorded events, Restate having killed the run: ended as a failed run's
 * are, with its `agent_start` when it recorded none (killed before it began) and an `agent_end`
 * (reason "error", what Restate ended it with) at the seqs the next ones would have taken; those
 * from `since` on are included.
 *
 * @example
 * ```ts
 * const recorded = endedEvents(await events(), since, "killed");
 * ```
 */
export function endedEvents(events: RecordedEvents, since: number, message: string): RecordedEvents {
  if (events.ended) return events;
  const end: AgentEvent = {
    type: "agent_end",
    // What the run stored is in the transcript; nothing told which messages were its own.
    messages: [],
    reason: "error",
    usage: emptyUsage(),
    errorMessage: killedText(message),
  };
  const added: AgentEvent[] = events.next === 0 ? [{ type: "agent_start" }, end] : [end];
  const numbered = added.map((event, index) => ({ seq: events.next + index, event }));
  return {
    ...events,
    events: [...events.events, ...numbered.filter(({ seq }) => seq >= since)],
    next: events.next + added.length,
    ended: true,
  };
}

/**
 * Status `status` with its run ended by Restate: idle, no call waiting, its last run ended with
 * reason "error" and what Restate ended it with.
 *
 * @example
 * ```ts
 * endedStatus(status, "killed").lastRun?.errorMessage; // "The run was ended by Restate before it finished: killed"
 * ```
 */
export function endedStatus(status: SessionStatus, message: string): SessionStatus {
  return {
    ...status,
    state: "idle",
    pendingApprovals: [],
    pendingToolCalls: [],
    lastRun: {
      runId: status.runId,
      reason: "error",
      errorMessage: killedText(message),
      usage: emptyUsage(),
      startedAt: 0,
      endedAt: 0,
    },
  };
}

const killedText = (message: string) => `The run was ended by Restate before it finished: ${message}`;

/** What a session client's `updates()` is asked. */
export interface UpdatesRequest {
  from?: number;
  runId?: string;
  since?: number;
  events?: { runId: string; since?: number };
}

/**
 * What the ingress says of invocation `runId` (`/restate/invocation/{id}/output`): 470 while it
 * goes on; the invocation's own failure once it failed (an error whose source is `"invocation"`,
 * in the body or the `x-restate-error-source` header; a kill reads 409 `killed`). Anything else (a
 * success, the ingress's own refusal, a gateway's 5xx, no answer) is taken as still going: only
 * the invocation's failure says a run ended without ending its record, and a client remembers it.
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
    const { message, source } = JSON.parse(text) as { message?: unknown; source?: unknown };
    const ofInvocation =
      source === "invocation" || response.headers.get("x-restate-error-source") === "invocation";
    return ofInvocation && typeof message === "string" ? { ended: true, message } : { ended: false };
  } catch {
    return { ended: false };
  }
}
