// The one contract every side of an agent speaks: the agent in this process, a durable session on
// Restate (a session client and a session id), a thread on the session host seen over HTTP. Whoever
// serves an agent (the host, a protocol adapter) takes an AgentHandle and knows nothing of where the
// agent runs; whoever consumes one (the page's remote store, a test) cannot tell them apart. One
// contract test suite runs against every implementation, so the copies cannot drift.
import type { Observable } from "rxjs";
import type { AgentEvent } from "./events.js";
import type { AgentMessage, UserMessage } from "./messages.js";
import type { Tool, ToolResult } from "./tool.js";

/**
 * One event of a run with its place in it: `seq` counts from 0 (`agent_start`) to `agent_end`.
 *
 * @example
 * ```ts
 * const first: SequencedEvent = { runId: "run-1", seq: 0, event: { type: "agent_start" } };
 * ```
 */
export interface SequencedEvent {
  runId: string;
  seq: number;
  event: AgentEvent;
}

/**
 * A tool call that waits for a decision (an approval) or for a result (a client-run tool).
 *
 * @example
 * ```ts
 * const call: PendingCall = { toolCallId: "call_1", toolName: "bash", args: { command: "ls" } };
 * ```
 */
export interface PendingCall {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/**
 * What a handle reports of its agent, read in one go.
 *
 * @example
 * ```ts
 * const { status, pendingApprovals } = await handle.status();
 * if (status === "waiting") console.log(pendingApprovals.map((call) => call.toolName));
 * ```
 */
export interface AgentStatus {
  /** `idle`: no run; `running`: a run works; `waiting`: a run waits for approvals or client results only. */
  status: "idle" | "running" | "waiting";
  /** The agent's machine state where it is known (e.g. `"running.executing"`), else `"idle"` or `"running"`. */
  state: string;
  /** The run in progress, or the last one; `undefined` before the first run. */
  runId: string | undefined;
  pendingApprovals: PendingCall[];
  pendingToolCalls: PendingCall[];
  /** Messages `steer` and `followUp` queued that no turn has taken yet. */
  queued: { steering: number; followUp: number };
}

/**
 * An answer to a call that waits: approve (with arguments a human corrected), deny, or a client-run
 * tool's result or error.
 *
 * @example
 * ```ts
 * const answers: CallAnswer[] = [
 *   { toolCallId: "call_1", approve: { args: { command: "ls -la" } } },
 *   { toolCallId: "call_2", deny: { reason: "not on main" } },
 * ];
 * ```
 */
export type CallAnswer =
  | { toolCallId: string; approve: { args?: unknown } }
  | { toolCallId: string; deny: { reason?: string } }
  | { toolCallId: string; result: string | ToolResult }
  | { toolCallId: string; reject: { reason: string } };

/**
 * Options of {@link AgentHandle.run}.
 *
 * @example
 * ```ts
 * await handle.run({ role: "user", content: "hi", timestamp: Date.now() }, { tools: [locateUser] });
 * ```
 */
export interface HandleRunOptions {
  /** Tools for this run only: client-run tools a frontend brings (`defineClientTool`). */
  tools?: readonly Tool[];
}

/**
 * An agent wherever it runs, behind one asynchronous contract. Every method that changes the
 * agent applies the same rules on every side (edited arguments against the tool's schema, a
 * client-run tool's result shape, the queue modes, one decision per call) and refuses with an
 * {@link AgentCallError} whose `code` says why, changing nothing.
 *
 * @example
 * ```ts
 * const { runId } = await handle.run(userMessage("list the files"));
 * handle.eventsSince(runId, 0).subscribe(({ seq, event }) => console.log(seq, event.type));
 * ```
 */
export interface AgentHandle {
  /** The agent's id (a thread id, a session id). */
  readonly id: string;
  status(): Promise<AgentStatus>;
  /** The transcript (the truth a client's resent history is checked against). */
  messages(): Promise<readonly AgentMessage[]>;
  /**
   * The events of run `runId` from `seq` (0 = its `agent_start`), then its live ones, completing
   * after its `agent_end`. Errors with an `AgentCallError` of code `events_unavailable` (carrying
   * nothing) when that run's events from `seq` are no longer kept: resynchronise from `messages()`.
   */
  eventsSince(runId: string, seq?: number): Observable<SequencedEvent>;
  /**
   * Starts a run with `message`; resolves with its id once its `agent_start` is published (follow it
   * with `eventsSince(runId, 0)`). Refused with code `busy` while a run is active.
   */
  run(message: UserMessage, options?: HandleRunOptions): Promise<{ runId: string }>;
  /** Queues a message the agent takes after the current turn (or at the next run's first check). */
  steer(message: string | UserMessage): Promise<void>;
  /** Queues a message the agent takes when it would otherwise stop. */
  followUp(message: string | UserMessage): Promise<void>;
  /**
   * Checks answers as `answer` will apply them, applying none: refuses with the error of the first
   * it would refuse. A request with several answers is taken whole or not at all.
   */
  check(answers: readonly CallAnswer[]): Promise<void>;
  /** Applies answers in order; the first refusal stops it (the answers before it are applied). */
  answer(answers: readonly CallAnswer[]): Promise<void>;
  /** Aborts the active run; whether one was active. */
  abort(): Promise<boolean>;
}

/**
 * Why a handle refused a call. The same codes on every side: in process, on Restate, over HTTP.
 *
 * @example
 * ```ts
 * const code: AgentCallErrorCode = "not_found";
 * ```
 */
export type AgentCallErrorCode =
  /** The input is malformed (a missing field, a wrong type). */
  | "bad_request"
  /** An answer the agent refuses: edited arguments fail the schema, a client result of the wrong shape. */
  | "refused"
  /** No such call waits (unknown, or already decided: only the first decision takes effect). */
  | "not_found"
  /** A run is active and the call needs none (a second `run`). */
  | "busy"
  /** The run's events from that seq are no longer kept. */
  | "events_unavailable"
  /** The request was not allowed (identity, origin, host). */
  | "forbidden"
  /** What serves the agent could not be reached or failed. */
  | "unavailable";

/**
 * A refusal or failure of an {@link AgentHandle} call: an HTTP status and a code from one union,
 * whichever side raised it (the host answers it as `{ error: { code, message } }` with `status`).
 *
 * @example
 * ```ts
 * try {
 *   await handle.answer([{ toolCallId: "call_9", approve: {} }]);
 * } catch (error) {
 *   if (error instanceof AgentCallError && error.code === "not_found") console.log("already decided");
 * }
 * ```
 */
export class AgentCallError extends Error {
  override name = "AgentCallError";
  constructor(
    readonly status: number,
    readonly code: AgentCallErrorCode | (string & {}),
    message: string,
  ) {
    super(message);
  }
}
