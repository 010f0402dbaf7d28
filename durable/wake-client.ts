import { connect, type Ingress } from "@restatedev/restate-sdk-clients";
import type { LaterResultRecord } from "../rules/later-record.js";
import { activeTraceparent } from "../telemetry/wake-cause.js";
import type { NewSchedule } from "../rules/schedule-record.js";
import type { SessionClientOptions } from "./session-client.js";
import { checkSessionId, readableAt } from "./session-client.js";
import type { DurableSchedule } from "./session-wakes.js";
import type { DurableEventInput, DurableLaterResultInput } from "./wake-session.js";

/**
 * Wakes durable sessions from any process, through Restate's ingress: their schedules (delayed
 * calls kept in Restate) and events from outside. Errors are `SessionCallError`s: 400 for a
 * schedule or event that cannot be made, 404 for an unknown schedule, or an event for a session
 * that never ran.
 */
export interface WakeClient {
  /**
   * Makes a schedule for `sessionId` (a cron in a time zone, `every` ms, or once `at` a time). The
   * runs it wakes link to `traceparent` (default: the span active when this is called).
   */
  schedule(sessionId: string, input: NewSchedule & { traceparent?: string }): Promise<DurableSchedule>;
  /** The session's schedules, with their next slot, runs and skipped slots. */
  list(sessionId: string): Promise<DurableSchedule[]>;
  /** Stops a schedule firing until `resume`; slots that pass meanwhile are not run. */
  pause(sessionId: string, id: string): Promise<DurableSchedule>;
  /** Fires again from the next slot. */
  resume(sessionId: string, id: string): Promise<DurableSchedule>;
  /** Removes a schedule; `false` when there was none with that id. */
  cancel(sessionId: string, id: string): Promise<boolean>;
  /**
   * Delivers an event: a user message with `source: "event"` and id `event_<id>` that wakes the
   * session (an active run takes it from its steering or follow-up queue). `"duplicate"` for an
   * id the session took already.
   */
  deliverEvent(sessionId: string, event: DurableEventInput): Promise<"delivered" | "duplicate">;
  /**
   * Delivers the result of work one of the session's tools started and answered with a handle
   * (the job system's webhook calls this): a follow-up with `source: "laterResult"` whose id is
   * the handle, waking the session. `"duplicate"` for a handle the session took already;
   * `"cancelled"` / `"timedOut"` for a handle of a `defineLaterTool` tool that was cancelled or
   * timed out (a no-op). `isError: true` says the work failed.
   */
  deliverLaterResult(
    sessionId: string,
    result: DurableLaterResultInput & { isError?: boolean },
  ): Promise<"delivered" | "duplicate" | "cancelled" | "timedOut">;
  /**
   * Cancels a pending handle of one of the session's `defineLaterTool` tools: its work is
   * stopped, a result after it is a no-op, and a notice waits in the session's steering queue for
   * its next turn. `false` when the handle was not pending.
   */
  cancelLater(sessionId: string, handle: string, reason?: string): Promise<boolean>;
  /** The pending handles of the session's `defineLaterTool` tools (tool, arguments, start, deadline). */
  laterHandles(sessionId: string): Promise<LaterResultRecord[]>;
}

/**
 * A client for the schedules and events of durable sessions (the `SessionWakes` object that
 * `createAgentServices` serves beside each session, and its inbox's `event`).
 *
 * @example
 * ```ts
 * const wakes = createWakeClient({ url: "http://127.0.0.1:8080" });
 * await wakes.schedule("s-42", { cron: "0 9 * * 1-5", timeZone: "Europe/Paris", message: "Morning report" });
 * await wakes.deliverEvent("s-42", { id: "gh_delivery_81", text: "CI failed on main" }); // "delivered"
 * ```
 */
export function createWakeClient(options: SessionClientOptions): WakeClient {
  const ingress: Ingress = connect({
    url: options.url,
    ...(options.headers && { headers: options.headers }),
  });
  const service = options.names?.wakes ?? "SessionWakes";
  const inbox = options.names?.inbox ?? "SessionInbox";
  // Async so that an id refused before sending rejects like any other refusal, never throws.
  const call = async <O>(handler: string, key: string, parameter: unknown, target = service) =>
    readableAt(
      options.url,
      ingress.call<unknown, O>({ service: target, handler, key: checkSessionId(key), parameter }),
    );
  return {
    // The runs a schedule or an event wakes link to the span active here, unless the input names one.
    schedule: (sessionId, input) => call("schedule", sessionId, withTraceparent(input)),
    list: (sessionId) => call("list", sessionId, null),
    pause: (sessionId, id) => call("pause", sessionId, { id }),
    resume: (sessionId, id) => call("resume", sessionId, { id }),
    cancel: (sessionId, id) => call("cancel", sessionId, { id }),
    deliverEvent: (sessionId, event) => call("event", sessionId, withTraceparent(event), inbox),
    deliverLaterResult: (sessionId, result) => call("laterResult", sessionId, result),
    cancelLater: (sessionId, handle, reason) =>
      call("laterCancel", sessionId, { handle, ...(reason !== undefined && { reason }) }),
    laterHandles: (sessionId) => call("laterHandles", sessionId, null),
  };
}

/** `input` with the active span's `traceparent`, unless it names one (or nothing is traced). */
function withTraceparent<T extends object>(input: T): T {
  if (input === null || typeof input !== "object" || "traceparent" in input) return input;
  const traceparent = activeTraceparent();
  return traceparent === undefined ? input : { ...input, traceparent };
}
