// What woke a durable run, for its trace: a wake's message waits in the session's inbox with its
// cause beside it (`wakeCause`: the schedule, event or handle, and the causing span as a W3C
// `traceparent`), and the run that takes the message strips the cause and tells its traced agent,
// whose run span then links to the cause, as an agent in process does (telemetry/wake-cause.ts).
import type { AgentMessage } from "../core/messages.js";
import { noteWakeCause } from "../telemetry/attach.js";
import { spanContextOf, type WakeCause } from "../telemetry/wake-cause.js";

/** A queued message, with the cause of the wake that brought it (never shown to the agent). */
export type CausedMessage = AgentMessage & { wakeCause?: WakeCause };

/**
 * `message` with `cause` beside it, kept only as far as it is well formed: a `traceparent` that is
 * not one is dropped (the wake happens, without the link).
 *
 * @example
 * ```ts
 * withWakeCause(message, { source: "event", id: "gh_81", traceparent: request.headers.get("traceparent") });
 * ```
 */
export function withWakeCause<M extends AgentMessage>(message: M, cause: WakeCause | undefined): M {
  if (!cause || typeof cause.id !== "string") return message;
  const traceparent = spanContextOf(cause.traceparent) ? cause.traceparent : undefined;
  const kept: WakeCause = {
    source: cause.source,
    id: cause.id.slice(0, 200),
    ...(traceparent && { traceparent }),
  };
  return { ...message, wakeCause: kept };
}

/** The causes of one run's wakes: taken off the messages it gets, told to its agent. */
export interface RunCauses {
  /** `input` (a prompt, or what a check took) without causes; each cause is noted for the agent. */
  take<T>(input: T): T;
  /** The run's agent exists: the causes noted so far, and from now on, go to it. */
  attach(agent: object): void;
}

/**
 * The causes of one durable run's wakes.
 *
 * @example
 * ```ts
 * const causes = createRunCauses();
 * const input = parsePromptInput(causes.take(raw), now);
 * causes.attach(agent);
 * ```
 */
export function createRunCauses(): RunCauses {
  const pending: [string, WakeCause][] = [];
  let agent: object | undefined;
  const note = (id: string, cause: WakeCause) => {
    if (agent) noteWakeCause(agent, id, cause);
    else pending.push([id, cause]);
  };
  return {
    take<T>(input: T): T {
      if (!Array.isArray(input)) return input;
      if (!input.some((message) => (message as CausedMessage | null)?.wakeCause !== undefined)) return input;
      return input.map((message: CausedMessage) => {
        if (message?.wakeCause === undefined) return message;
        const { wakeCause, ...rest } = message;
        if (typeof rest.id === "string") note(rest.id, wakeCause);
        return rest;
      }) as T;
    },
    attach(created) {
      agent = created;
      for (const [id, cause] of pending.splice(0)) noteWakeCause(created, id, cause);
    },
  };
}
