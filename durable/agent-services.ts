// The durable service's composition point: it resolves the options once and assembles the
// service's virtual objects from their own files (durable/inbox-object.ts, durable/session-object.ts,
// with a run's body in durable/session-run.ts and its events in durable/run-publisher.ts). A new
// object or handler is built in its own file and added here.
import type * as restate from "@restatedev/restate-sdk";
import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
import type { AgentOptions } from "../core/options.js";
import { containObservable } from "../core/contained-observable.js";
import { createInboxObject } from "./inbox-object.js";
import { createLiveRuns, type LiveRuns } from "./live-runs.js";
import { ensurePromiseWithResolvers } from "./polyfill.js";
import type { SessionEvent } from "./run-publisher.js";
import { createSessionObject } from "./session-object.js";
import { createSessionOptions } from "./session-options.js";
import { createSessionRun } from "./session-run.js";
import { createSessionWakes, type DurableScheduleLimits } from "./session-wakes.js";
import type { LastRun, SessionStatus, SessionUpdates, TranscriptSlice } from "./session-state.js";
import type { SessionServiceNames } from "./session-types.js";

export type { RunResult, SessionServiceNames } from "./session-types.js";
export type { SessionEvent } from "./run-publisher.js";
export type { LastRun, SessionStatus, SessionUpdates, TranscriptSlice };

/** Restate's retry policy for the sessions' invocations (how soon a crashed run resumes). */
export type SessionRetryPolicy = restate.RetryPolicy;

/** Options of {@link createAgentServices}. */
export interface AgentServicesOptions {
  /**
   * The agent each session runs: the options `createAgent` takes, or a function of the session id
   * that returns them. `messages` seeds a new session's transcript; `snapshot` and `parentActor` do
   * not apply (a session's state lives in Restate); `eagerToolExecution` is off (a journaled model
   * call is one step, its tool calls start after it).
   */
  agent: AgentOptions | ((sessionId: string) => AgentOptions);
  names?: SessionServiceNames;
  /** Restate's retries of a failed invocation attempt (a crashed service, a lost connection). */
  retryPolicy?: SessionRetryPolicy;
  /** Ms without journal activity before Restate asks a run to suspend (server default: 1 min). */
  inactivityTimeout?: number;
  /**
   * Ms after that request before Restate aborts the attempt and retries it (server default:
   * 10 min). A tool call or model call longer than both is cut off and run again: raise it for
   * long tools. Default here: 1 hour.
   */
  abortTimeout?: number;
  /** When a durable schedule's slot counts as missed, and the default missed-run policy. */
  schedules?: DurableScheduleLimits;
}

/** The three Restate virtual objects that serve agent sessions, and the events of their runs. */
export interface AgentServices {
  /** `AgentSession` (key = session id): prompt, transcript, messages, status, approve, deny, abort. */
  readonly session: restate.VirtualObjectDefinition<string, unknown>;
  /** `SessionInbox` (same key): steer, followUp, pending (and the run's drain / requeue). */
  readonly inbox: restate.VirtualObjectDefinition<string, unknown>;
  /** `SessionWakes` (same key): the session's schedules (docs/wake.md). */
  readonly wakes: restate.VirtualObjectDefinition<string, unknown>;
  /** All three, for `createEndpointHandler({ services })` or `serveAgents`. */
  readonly services: restate.VirtualObjectDefinition<string, unknown>[];
  readonly names: Required<SessionServiceNames>;
  /** Every event of every run this process serves (a resumed run publishes its replayed part again). */
  readonly events$: Observable<SessionEvent>;
  /** The runs this process serves, as they happen: what `serveAgents`' live channel streams. */
  readonly live: LiveRuns;
}

const DEFAULT_ABORT_TIMEOUT_MS = 60 * 60 * 1000;

/**
 * Serves agents as Restate services, from the same options `createAgent` takes. Each session is a
 * virtual object keyed by its id: `prompt` is one invocation per run, whose model calls, tool calls,
 * approvals, checks and time are journaled, so the run survives the process that serves it.
 * Register the services with a Restate server (see `serveAgents`), then talk to them with
 * `createSessionClient`. docs/durable.md has the whole story.
 *
 * @example
 * ```ts
 * const services = createAgentServices({ agent: { provider, tools, systemPrompt } });
 * const server = await serveAgents({ services, port: 9080 });
 * services.events$.subscribe(({ sessionId, event }) => console.log(sessionId, event.type));
 * ```
 */
export function createAgentServices(options: AgentServicesOptions): AgentServices {
  ensurePromiseWithResolvers();
  const names = {
    session: options.names?.session ?? "AgentSession",
    inbox: options.names?.inbox ?? "SessionInbox",
    wakes: options.names?.wakes ?? "SessionWakes",
  };
  if (new Set(Object.values(names)).size !== 3)
    throw new Error("The session, inbox and wakes services need three different names");
  // Static options are checked here, so a bad configuration fails at start, not in the first run.
  const sessionOptions = createSessionOptions(options.agent);
  const events = new Subject<SessionEvent>();
  const live = createLiveRuns();
  const serviceOptions: restate.ObjectOptions = {
    ...(options.retryPolicy && { retryPolicy: options.retryPolicy }),
    ...(options.inactivityTimeout !== undefined && { inactivityTimeout: options.inactivityTimeout }),
    abortTimeout: options.abortTimeout ?? DEFAULT_ABORT_TIMEOUT_MS,
  };

  const inbox = createInboxObject({
    name: names.inbox,
    session: names.session,
    serviceOptions,
    options: sessionOptions,
  });
  const run = createSessionRun({ inbox, options: sessionOptions, events, live, wakes: names.wakes });
  const session = createSessionObject({
    name: names.session,
    serviceOptions,
    inbox,
    options: sessionOptions,
    run,
  });

  const wakes = createSessionWakes({
    ...names,
    name: names.wakes,
    limits: options.schedules,
    options: sessionOptions,
    serviceOptions,
  }) as unknown as restate.VirtualObjectDefinition<string, unknown>;

  return {
    session,
    inbox,
    wakes,
    services: [session, inbox, wakes],
    names,
    events$: containObservable(events, "services.events$"),
    live,
  };
}
