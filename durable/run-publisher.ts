import type { ObjectContext } from "@restatedev/restate-sdk";
import type { Subject } from "rxjs";
import type { AgentEvent } from "../core/events.js";
import type { EventReplayOptions } from "../core/options.js";
import type { LiveRun } from "./live-runs.js";
import { createRunEventRecorder, type RunEventRecorder } from "./run-events.js";

/** An event of a session's run, as the serving process publishes it. */
export interface SessionEvent {
  sessionId: string;
  /** The invocation id of the run (`prompt`) that published it. */
  runId: string;
  event: AgentEvent;
}

/** Where one run's events go. See {@link createRunPublisher}. */
export interface RunPublisher {
  /** Records `event` (if committed), and publishes it to `events$` and to the run's live followers. */
  publish(event: AgentEvent): void;
  /**
   * The events recorded since the last take as one batch, for the run's next slot
   * (durable/run-slots.ts); `undefined` when none were (or the run records none).
   */
  take(): ReturnType<RunEventRecorder["take"]>;
}

/** What {@link createRunPublisher} needs to know of the run. */
export interface RunPublisherOptions {
  sessionId: string;
  runId: string;
  /** The first seqs of the last run's event batches (they go now: a session serves its current or last run's). */
  previous: readonly number[];
  /** The agent's `eventReplay`: `false` records nothing. */
  eventReplay: EventReplayOptions | false | undefined;
  /** Every event of every run this process serves. */
  events: Subject<SessionEvent>;
  /** The run's attempt in this process, which its live channel streams. */
  liveRun: LiveRun;
}

/**
 * The events of one durable run: each recorded in Restate state (numbered per run, bounded as in
 * process, taken in batches into the run's slot before it waits), published on the
 * service's `events$`, and handed to the live channel with its seq (none for a live-only delta).
 *
 * @example
 * ```ts
 * const publisher = createRunPublisher(ctx, { sessionId, runId, previous, eventReplay, events, liveRun });
 * agent.events$.subscribe((event) => publisher.publish(event));
 * const batch = publisher.take(); // before the run waits: into its next slot
 * ```
 */
export function createRunPublisher(ctx: ObjectContext, options: RunPublisherOptions): RunPublisher {
  const { sessionId, runId, previous, eventReplay, events, liveRun } = options;
  const recorder = eventReplay === false ? undefined : createRunEventRecorder(ctx, previous, eventReplay);
  // Not recording this run still clears the last run's events.
  if (!recorder && previous.length) createRunEventRecorder(ctx, previous, undefined);
  return {
    publish(event) {
      const recorded = recorder?.record(event);
      // Every event of every run passes here: nothing is made for a `events$` nobody subscribed to.
      if (events.observed) events.next({ sessionId, runId, event });
      if (!recorded?.length) liveRun.publish(event, undefined);
      else for (const committed of recorded) liveRun.publish(committed.event, committed.seq);
    },
    take() {
      return recorder?.take();
    },
  };
}
