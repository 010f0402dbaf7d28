// The webhook route: an event from outside for one thread, behind the host's authorize like every
// route. It lands as a user message with source "event", waking an idle or resting thread.
import { eventMessageId, holdsMessage, wakeMessageOf } from "../../rules/wake-message.js";
import { noteWakeCause } from "../../telemetry/attach.js";
import { activeTraceparent } from "../../telemetry/wake-cause.js";
import { type HostRoute } from "../protocol.js";
import type { HostedThreadImpl } from "./hosted-thread.js";
import { idOf, jsonResponse, objectOf } from "./json.js";
import { AgentCallError } from "../../core/agent-handle.js";

/**
 * `POST /threads/:id/events` with `{ id, text, queue? }`: `id` is the sender's (a retry with it
 * answers `200 { duplicate: true }` and does nothing), `queue` is `"steer"` (default) or
 * `"followUp"`. An idle thread starts a run with the event (`202 { started: true }`); a running one
 * queues it (`202 { queued }`). An unknown thread is `404` (an event creates no thread).
 *
 * @example
 * ```ts
 * await fetch("/api/threads/t1/events", { method: "POST", headers, body: JSON.stringify({ id: "gh_81", text: "CI failed" }) });
 * ```
 */
export function eventRoute(): HostRoute {
  return {
    method: "POST",
    path: "/threads/:id/events",
    async handle(request, { id }, host) {
      const thread = (await host.thread(request, id)) as HostedThreadImpl;
      const body = objectOf(await host.readJson(request), "the body");
      const messageId = eventMessageId(idOf(body.id, "id"));
      if (typeof body.text !== "string" || body.text.trim() === "") {
        throw new AgentCallError(400, "bad_request", "text must be a non-empty string");
      }
      const queue = body.queue ?? "steer";
      if (queue !== "steer" && queue !== "followUp") {
        throw new AgentCallError(400, "bad_request", 'queue must be "steer" or "followUp"');
      }
      if (holdsMessage(thread.agent, messageId)) return jsonResponse({ duplicate: true, id: messageId });
      const message = wakeMessageOf({ id: messageId, text: body.text, source: "event" }, Date.now());
      // The woken run's trace links to the sender's (its traceparent header), as deliverEvent's does.
      const traceparent = request.headers.get("traceparent") ?? activeTraceparent();
      if (thread.agent.local) {
        noteWakeCause(thread.agent.local, messageId, { source: "event", id: body.id as string, traceparent });
      }
      if (thread.agent.state === "idle") {
        const refusal = await thread.agent.start(message, undefined);
        if (refusal === undefined) return jsonResponse({ started: true, id: messageId }, 202);
      }
      if (queue === "steer") await thread.agent.steer(message);
      else await thread.agent.followUp(message);
      return jsonResponse({ queued: queue, id: messageId }, 202);
    },
  };
}
