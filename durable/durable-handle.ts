// A durable session on Restate (a session client and a session id) as an AgentHandle: the one
// contract the in-process agent and the session host speak too (core/agent-handle.ts).
import type { Observable } from "rxjs";
import { from } from "rxjs/internal/observable/from";
import { switchMap } from "rxjs/internal/operators/switchMap";
import { EventsUnavailableError } from "../agent/event-log.js";
import {
  AgentCallError,
  type AgentHandle,
  type AgentStatus,
  type CallAnswer,
  type PendingCall,
  type SequencedEvent,
} from "../core/agent-handle.js";
import type { UserMessage } from "../core/messages.js";
import type { SessionClient } from "./session-client.js";
import { createSessionFollower, type SessionFollower } from "./session-follower.js";

/** Options of {@link durableHandle}. */
export interface DurableHandleOptions {
  /**
   * Ms between two reads of the session while a run goes on (none while a live channel brings the
   * run's events). Default 100.
   */
  pollIntervalMs?: number;
  /**
   * The live channels of the processes serving the sessions (`serveAgents`' `server.liveUrl`):
   * a run's text arrives from there token by token. Without them (or while none answers), the
   * handle passes on the committed events read from Restate alone.
   */
  live?: readonly string[];
}

/**
 * Durable session `sessionId` as an {@link AgentHandle}: what the session host serves and what the
 * contract tests drive, the same as an agent in this process. A run's tools are the service's
 * (`HandleRunOptions.tools` does not apply: a durable run's tools are fixed so its journal replays).
 *
 * @example
 * ```ts
 * const handle = durableHandle(createSessionClient({ url: "http://127.0.0.1:8080" }), "session-42");
 * const { runId } = await handle.run({ role: "user", content: "hi", timestamp: Date.now() });
 * handle.eventsSince(runId, 0).subscribe(({ seq, event }) => console.log(seq, event.type));
 * ```
 */
export function durableHandle(
  client: SessionClient,
  sessionId: string,
  options: DurableHandleOptions = {},
): AgentHandle {
  return handleOf(
    createSessionFollower(client, sessionId, options.pollIntervalMs ?? 100, options.live ?? []),
    sessionId,
  );
}

/** The handle of a follower (the session host's durable threads share theirs). */
export function handleOf(follower: SessionFollower, sessionId: string): AgentHandle {
  const readNow = async () => {
    try {
      await follower.refresh();
    } catch (error) {
      if (error instanceof AgentCallError) throw error;
      throw new AgentCallError(503, "unavailable", messageOf(error));
    }
  };
  // Callers in one tick share one read, begun after all of them (fresh for each): the host asks
  // for status and messages together, which would otherwise be two round trips to Restate.
  let next: Promise<void> | undefined;
  const refresh = (): Promise<void> =>
    (next ??= Promise.resolve().then(() => {
      next = undefined;
      return readNow();
    }));
  // A view known current in this turn of the event loop is as good as a read (`viewIsCurrent`): the
  // host reads the thread to check a request, then starts the run; a run's end brings the view up
  // to date, and the host reads it then.
  const read = (): Promise<void> | undefined => (follower.viewIsCurrent() ? undefined : refresh());
  const pending = () => ({
    approvals: follower.pendingApprovals().map(callOf),
    toolCalls: follower.pendingToolCalls().map(callOf),
  });
  /** Refuses an answer to a call that does not wait (unknown, or decided already). */
  const requireWaiting = (answer: CallAnswer) => {
    const waiting = "approve" in answer || "deny" in answer ? pending().approvals : pending().toolCalls;
    if (!waiting.some((call) => call.toolCallId === answer.toolCallId)) {
      throw new AgentCallError(
        404,
        "not_found",
        `No call "${answer.toolCallId}" waits for ${"approve" in answer || "deny" in answer ? "a decision" : "a client result"} in session "${sessionId}": it is unknown or already answered`,
      );
    }
  };
  return {
    id: sessionId,
    async status(): Promise<AgentStatus> {
      await read();
      const { approvals, toolCalls } = pending();
      const running = follower.state !== "idle";
      const queued = follower.queued;
      return {
        // A durable run's other tools are not seen from here: a run with calls waiting reads as waiting.
        status: !running ? "idle" : approvals.length + toolCalls.length > 0 ? "waiting" : "running",
        state: follower.state,
        runId: follower.runId,
        pendingApprovals: approvals,
        pendingToolCalls: toolCalls,
        queued: { steering: queued.steering.length, followUp: queued.followUp.length },
      };
    },
    async messages() {
      await read();
      return follower.messages;
    },
    eventsSince(runId: string, seq = 0): Observable<SequencedEvent> {
      // A run this follower follows already (one it started, or read): its events are at hand.
      const known = follower.runId === runId && follower.state !== "idle";
      return from(known ? Promise.resolve() : refresh()).pipe(
        switchMap(() => {
          try {
            return follower.eventsSince(runId, seq);
          } catch (error) {
            if (!(error instanceof EventsUnavailableError)) throw error;
            throw new AgentCallError(410, "events_unavailable", error.message);
          }
        }),
      );
    },
    async run(message: UserMessage) {
      await read();
      if (follower.state !== "idle") {
        throw new AgentCallError(409, "busy", `Session "${sessionId}" has a run in progress`);
      }
      const refused = await follower.start(message);
      if (refused !== undefined) throw refused;
      return { runId: follower.runId! };
    },
    steer: (message) => follower.steer(userMessage(message)),
    followUp: (message) => follower.followUp(userMessage(message)),
    async check(answers) {
      await refresh();
      for (const answer of answers) requireWaiting(answer);
      await follower.checkAnswers(
        answers.flatMap((a) =>
          "approve" in a ? [{ toolCallId: a.toolCallId, approved: true, args: a.approve.args }] : [],
        ),
        answers.flatMap((a) => ("result" in a ? [{ toolCallId: a.toolCallId, result: a.result }] : [])),
      );
    },
    async answer(answers) {
      await refresh();
      for (const answer of answers) {
        if ("approve" in answer) await follower.approve(answer.toolCallId, answer.approve.args);
        else if ("deny" in answer) await follower.deny(answer.toolCallId, answer.deny.reason);
        else if ("result" in answer) await follower.resolveToolCall(answer.toolCallId, answer.result);
        else await follower.rejectToolCall(answer.toolCallId, answer.reject.reason);
      }
    },
    abort: () => follower.abort(),
  };
}

function callOf(call: { toolCallId: string; toolName: string; args: unknown }): PendingCall {
  return { toolCallId: call.toolCallId, toolName: call.toolName, args: call.args };
}

function userMessage(message: string | UserMessage): UserMessage {
  return typeof message === "string" ? { role: "user", content: message, timestamp: Date.now() } : message;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
