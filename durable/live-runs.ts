// The runs this process is serving, as they happen: every event of each (committed ones with their
// recorded seq, live ones with the seq of the committed event they follow and an index), for the
// live channel `serveAgents` exposes. A follower reads committed events from Restate and takes the
// deltas from here, so a durable thread's text streams token by token without a delta journaled.
import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
import type { AgentEvent } from "../core/events.js";

/**
 * One event of a run this process serves: committed (`seq`, as recorded in Restate), or live only
 * (a delta, a tool update): `after` is the seq of the committed event it follows, `index` counts the
 * live events since that one (from 0). A run resumed in another attempt publishes its replayed
 * committed events again, with the same seqs, and counts its live events from 0 again.
 */
export type LiveEntry =
  { seq: number; event: AgentEvent } | { after: number; index: number; event: AgentEvent };

/** Entries kept per run for a follower that connects late (committed ones are in Restate anyway). */
const MAX_ENTRIES = 20_000;
/** How long an ended run stays readable, so a follower that connects just after its end finds it. */
const ENDED_KEPT_MS = 30_000;

/**
 * `event` as it is when published. A model's answer is built in place (one message object, its
 * open block appended to per delta), and its `message_start` and updates carry that object: kept
 * as is, an entry read later (a follower that connects late, a reconnect) would show the message
 * as it is by then — a `message_start` with the whole answer — not as it was. The copy is shallow
 * per block (texts are strings), so a delta costs the answer's block count, not its length.
 *
 * @example
 * ```ts
 * asPublished({ type: "message_start", message }).message !== message; // true, for an assistant's
 * ```
 */
export function asPublished(event: AgentEvent): AgentEvent {
  if (
    (event.type !== "message_start" && event.type !== "message_update") ||
    event.message.role !== "assistant"
  )
    return event;
  const message = event.message;
  return {
    ...event,
    message: {
      ...message,
      content: message.content.map((block) => ({ ...block })),
      usage: { ...message.usage },
    },
  };
}

/** One attempt of one run in this process. */
export interface LiveRun {
  publish(event: AgentEvent, seq: number | undefined): void;
  /** The attempt is over (the run ended, or the attempt failed): followers are completed. */
  close(): void;
}

/** The registry of runs this process serves. See {@link createLiveRuns}. */
export interface LiveRuns {
  /** A new attempt of run `runId` of `sessionId` starts here (replacing an earlier one). */
  open(sessionId: string, runId: string): LiveRun;
  /**
   * The run's entries after committed seq `since - 1` (the live ones after it, the committed ones
   * from `since`), then live ones until the attempt closes; `undefined` when this process does not
   * serve the run.
   */
  follow(sessionId: string, runId: string, since: number): Observable<LiveEntry> | undefined;
}

interface Attempt {
  entries: LiveEntry[];
  subject: Subject<LiveEntry>;
  closed: boolean;
  lastSeq: number;
  index: number;
}

/**
 * The runs this process serves, by session and run.
 *
 * @example
 * ```ts
 * const live = createLiveRuns();
 * const run = live.open("s-1", "inv_1");
 * run.publish({ type: "agent_start" }, 0);
 * live.follow("s-1", "inv_1", 0)?.subscribe((entry) => console.log(entry));
 * ```
 */
export function createLiveRuns(): LiveRuns {
  const runs = new Map<string, Attempt>();
  const keyOf = (sessionId: string, runId: string) => `${sessionId}\u0000${runId}`;
  return {
    open(sessionId, runId) {
      const key = keyOf(sessionId, runId);
      runs.get(key)?.subject.complete();
      const attempt: Attempt = { entries: [], subject: new Subject(), closed: false, lastSeq: -1, index: 0 };
      runs.set(key, attempt);
      return {
        publish(given, seq) {
          if (attempt.closed) return;
          const event = asPublished(given);
          let entry: LiveEntry;
          if (seq === undefined) {
            entry = { after: attempt.lastSeq, index: attempt.index++, event };
          } else {
            entry = { seq, event };
            attempt.lastSeq = seq;
            attempt.index = 0;
          }
          attempt.entries.push(entry);
          if (attempt.entries.length > MAX_ENTRIES) attempt.entries.shift();
          attempt.subject.next(entry);
        },
        close() {
          if (attempt.closed) return;
          attempt.closed = true;
          attempt.subject.complete();
          setTimeout(() => {
            if (runs.get(key) === attempt) runs.delete(key);
          }, ENDED_KEPT_MS).unref();
        },
      };
    },
    follow(sessionId, runId, since) {
      const attempt = runs.get(keyOf(sessionId, runId));
      if (!attempt) return undefined;
      const wanted = (entry: LiveEntry) => ("seq" in entry ? entry.seq >= since : entry.after >= since - 1);
      return new Observable<LiveEntry>((subscriber) => {
        for (const entry of attempt.entries) if (wanted(entry)) subscriber.next(entry);
        if (attempt.closed) {
          subscriber.complete();
          return undefined;
        }
        const subscription = attempt.subject.subscribe(subscriber);
        return () => subscription.unsubscribe();
      });
    },
  };
}
