// A durable session on Restate as a hosted thread's backend: the session follower of durable/, its
// refusals told as the host's errors. Thin on purpose: the host is moving to serve AgentHandles
// (core/agent-handle.ts), and a durable session's handle is durable/durable-handle.ts.
import { AgentCallError } from "../../core/agent-handle.js";
import type { SessionClient } from "../../durable/session-client.js";
import { createSessionFollower, unavailable as unavailableCall } from "../../durable/session-follower.js";
import { HostError } from "../protocol.js";
import type { ThreadBackend } from "./thread-backend.js";

/**
 * The thread backend of durable session `sessionId`, polling every `pollIntervalMs` while a run
 * goes on (not at all while the session is idle and nothing was asked of it).
 */
export function durableBackend(
  client: SessionClient,
  sessionId: string,
  pollIntervalMs: number,
): ThreadBackend {
  const follower = createSessionFollower(client, sessionId, pollIntervalMs);
  const told =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        throw hostError(error);
      }
    };
  return {
    local: undefined,
    get events$() {
      return follower.events$;
    },
    get messages() {
      return follower.messages;
    },
    get state() {
      return follower.state;
    },
    get runId() {
      return follower.runId;
    },
    get queued() {
      return follower.queued;
    },
    pendingApprovals: () => follower.pendingApprovals(),
    pendingToolCalls: () => follower.pendingToolCalls(),
    eventsSince: (runId, seq) => follower.eventsSince(runId, seq),
    start: told((message) => follower.start(message)),
    steer: told((message) => follower.steer(message)),
    followUp: told((message) => follower.followUp(message)),
    abort: told(() => follower.abort()),
    checkAnswers: told((approvals, toolResults) => follower.checkAnswers(approvals, toolResults)),
    approve: told((toolCallId, args) => follower.approve(toolCallId, args)),
    deny: told((toolCallId, reason) => follower.deny(toolCallId, reason)),
    resolveToolCall: told((toolCallId, result) => follower.resolveToolCall(toolCallId, result)),
    rejectToolCall: told((toolCallId, reason) => follower.rejectToolCall(toolCallId, reason)),
    refresh: told(() => follower.refresh()),
    persistedSnapshot: () => undefined,
    stop: () => follower.stop(),
  };
}

/** Restate's ingress did not answer: the host's 503 `durable_unavailable`, saying why. */
export function unavailable(error: unknown): HostError {
  return hostError(unavailableCall(error)) as HostError;
}

/** A refusal as the host has always told it: a call that does not wait is a 409 `refused`. */
function hostError(error: unknown): unknown {
  if (!(error instanceof AgentCallError)) return error;
  if (error.code === "not_found") return new HostError(409, "refused", error.message);
  return new HostError(error.status, error.code, error.message);
}
