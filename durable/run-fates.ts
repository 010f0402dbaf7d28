// When a session client asks Restate whether a run that reads "running" is still going. A killed
// run's record never changes again; a healthy run's changes as it goes (its turns, messages, calls).
// So a poll asks only once the record has read the same for a while, and less often the longer it
// stays so: a healthy long tool call or model answer costs a handful of requests, not one a poll.
// What was found killed is remembered: an ended invocation stays ended, so later reads of its
// still-running record are corrected without asking again.
import type { SessionStatus } from "./session-types.js";

/** A run record unchanged this long is worth asking Restate about. */
export const QUIET_MS = 5_000;
/** The pause between two questions about one unchanged record doubles up to this. */
export const MAX_QUIET_MS = 30_000;
/** Sessions (and killed runs) remembered; the oldest are forgotten past it. */
const MAX_REMEMBERED = 4_096;

/** Options of {@link createRunFates}. */
export interface RunFatesOptions {
  /** Ms a running record must read the same before the first question. Default {@link QUIET_MS}. */
  quietMs?: number;
  /** The longest pause between two questions while it still reads the same. Default {@link MAX_QUIET_MS}. */
  maxQuietMs?: number;
}

/** What one session client knows of its sessions' running records and of the runs Restate killed. */
export interface RunFates {
  /**
   * Whether to ask Restate now about the run `status` reads (at `now`): only a record that reads
   * "running" and has read the same since `quietMs` ago (then `2 × quietMs` after that question,
   * doubling up to `maxQuietMs`). A record that changed starts the wait again; one not running is
   * forgotten.
   */
  due(sessionId: string, status: SessionStatus, now?: number): boolean;
  /** What Restate ended run `runId` with, when this client found it killed. */
  killed(runId: string): string | undefined;
  /** Run `runId` was found killed (its invocation over, its record still running). */
  noteKilled(runId: string, message: string): void;
}

/**
 * The cadence of a client's questions about runs that read "running" (see {@link RunFates.due}),
 * and its memory of the runs found killed.
 *
 * @example
 * ```ts
 * const fates = createRunFates();
 * if (fates.due("s-42", status)) {
 *   const fate = await fateOf({ url }, status.runId);
 *   if (fate.ended) fates.noteKilled(status.runId, fate.message);
 * }
 * ```
 */
export function createRunFates(options: RunFatesOptions = {}): RunFates {
  const quietMs = options.quietMs ?? QUIET_MS;
  const maxQuietMs = Math.max(quietMs, options.maxQuietMs ?? MAX_QUIET_MS);
  const watched = new Map<string, { record: string; askAt: number; pauseMs: number }>();
  const killedRuns = new Map<string, string>();
  return {
    due(sessionId, status, now = Date.now()) {
      if (status.state !== "running") {
        watched.delete(sessionId);
        return false;
      }
      const record = recordOf(status);
      const seen = watched.get(sessionId);
      if (seen?.record !== record) {
        remember(watched, sessionId, { record, askAt: now + quietMs, pauseMs: quietMs });
        return false;
      }
      if (now < seen.askAt) return false;
      seen.pauseMs = Math.min(seen.pauseMs * 2, maxQuietMs);
      seen.askAt = now + seen.pauseMs;
      return true;
    },
    killed: (runId) => killedRuns.get(runId),
    noteKilled: (runId, message) => remember(killedRuns, runId, message),
  };
}

/** What of a status changes while a run goes on. */
function recordOf(status: SessionStatus): string {
  return JSON.stringify([
    status.runId,
    status.turn,
    status.messageCount,
    status.generation,
    status.pendingApprovals.map((call) => call.toolCallId),
    (status.pendingToolCalls ?? []).map((call) => call.toolCallId),
  ]);
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value as string);
}
