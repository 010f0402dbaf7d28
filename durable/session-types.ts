// The shapes the durable sessions answer with, apart from the modules that serve them: the session
// client and the session host's declarations use them, and an app that never installs Restate's SDK
// (a page, a host without durable threads) still type-checks them with `skipLibCheck: false`.
import type { AgentEndReason, AgentEvent } from "../core/events.js";
import type { AgentMessage, Usage } from "../core/messages.js";
import type { RunOutcome } from "../core/run-outcome.js";

/**
 * What `AgentSession.prompt` answers when its run ends (whatever the outcome): the run's
 * {@link RunOutcome}, the same shape a local `agent.prompt()` resolves with, and its id.
 */
export interface RunResult extends RunOutcome {
  runId: string;
}

/** The service names (change them to serve several kinds of agent from one Restate cluster). */
export interface SessionServiceNames {
  /** Default `"AgentSession"`. */
  session?: string;
  /** Default `"SessionInbox"`. */
  inbox?: string;
  /** The sessions' schedules and events from outside. Default `"SessionWakes"`. */
  wakes?: string;
}

/** How the last finished run ended. */
export interface LastRun {
  runId: string;
  reason: AgentEndReason;
  errorMessage?: string;
  /** The run's typed result, with an output schema (journaled with the final message). */
  output?: unknown;
  usage: Usage;
  startedAt: number;
  endedAt: number;
}

/** What `AgentSession.status` answers. */
export interface SessionStatus {
  sessionId: string;
  state: "idle" | "running";
  /** The invocation id of the active run, or of the last one. */
  runId: string;
  /** Turns the active run has started (the last run's, when idle). */
  turn: number;
  messageCount: number;
  /** Bumped when a compaction rewrote earlier messages: a follower reads the transcript again. */
  generation: number;
  /**
   * Calls waiting for approval, at every depth: a sub-agent's is named by its `path` (the call ids
   * from the run's agent down to it), joined by "/" in its `toolCallId`.
   */
  pendingApprovals: { toolCallId: string; toolName: string; args: unknown; path?: string[] }[];
  /** Calls of client-run tools waiting for the client's result (`resolveToolCall` / `rejectToolCall`), likewise. */
  pendingToolCalls: { toolCallId: string; toolName: string; args: unknown; path?: string[] }[];
  lastRun?: LastRun;
}

/** A slice of the transcript, as `AgentSession.messages` answers it. */
export interface TranscriptSlice {
  generation: number;
  count: number;
  /** Messages `from` … `count - 1`. */
  from: number;
  messages: AgentMessage[];
}

/** What `AgentSession.updates` answers: the status and the new messages, in one read. */
export interface SessionUpdates {
  status: SessionStatus;
  /**
   * Where the messages of run `status.runId` start in the transcript (its message seq 0), while no
   * compaction has rewritten the transcript since the run started; absent otherwise.
   */
  runStart?: number;
  /** Messages `from` … `status.messageCount - 1`. */
  from: number;
  messages: AgentMessage[];
  /** With `events: { runId, since }` in the request: that run's recorded events from `since`. */
  events?: RecordedEvents;
  /** Why the events asked for are not kept (the run is not the current or last one, or recorded none). */
  eventsUnavailable?: string;
}

/** What `AgentSession.events` answers: run `runId`'s recorded events from `since`. */
export interface RecordedEvents {
  runId: string;
  /** The recorded events from `since` on, each with its seq (0 = `agent_start`). */
  events: { seq: number; event: AgentEvent }[];
  /** The seq the next recorded event will get. */
  next: number;
  /** The run has ended: every event it records is recorded. */
  ended: boolean;
}
