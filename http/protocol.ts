// How a protocol plugs into the session host: it adds routes under the host's base path, reads its
// own request bodies into a ThreadInput, and hands the host that input and an encoder. The host
// checks the input against the server's transcript (the truth), applies it, and streams the
// response until the run ends or goes quiescent. ai-sdk-protocol.ts is one; AG-UI is another.
import type { PendingApproval } from "../agent/agent.js";
import { AgentCallError } from "../core/agent-handle.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import type { Tool } from "../tools/define-tool.js";
import type { StreamEncoder } from "./encoder.js";

/** An answer to a pending approval, from a client's request. */
export interface ApprovalAnswer {
  toolCallId: string;
  approved: boolean;
  /** Why it was denied (the model reads it). */
  reason?: string;
  /** Approve with the arguments a human corrected (checked by the tool's schema). */
  args?: unknown;
}

/** The client's answer to a call of a client-run tool (`defineClientTool`). */
export type ToolCallAnswer =
  { toolCallId: string; result: string | ToolResult } | { toolCallId: string; error: string };

/**
 * What one protocol request asks of a thread, read from its body by the protocol: a new user
 * message, or answers to what the quiescent run waits for (or, for a fresh run, both are absent and
 * the request is refused). The host never takes anything else from a client's resent history.
 */
export interface ThreadInput {
  /** A new user message (keep the client's `id`, so the transcript and the client agree). */
  message?: UserMessage;
  approvals?: ApprovalAnswer[];
  toolResults?: ToolCallAnswer[];
  /**
   * Tools for the run a new `message` starts (`agent.prompt(message, { tools })`): client-run
   * tools the request declares (AG-UI's `RunAgentInput.tools`, made with `defineClientTool`).
   */
  tools?: readonly Tool[];
}

/** What the host reports about a thread (`GET {base}/threads/{id}`). */
export interface ThreadStatus {
  threadId: string;
  /** `idle`, `running` (working), `waiting` (quiescent: waits for approvals or client results). */
  status: "idle" | "running" | "waiting";
  /** The agent's machine state, e.g. `"running.executing"`. */
  state: string;
  runId: string | undefined;
  pendingApprovals: PendingApproval[];
  pendingToolCalls: PendingApproval[];
  /**
   * Calls of the current turn that have finished while others still wait: their results enter the
   * transcript only when the turn's calls are all done, but a client has seen them.
   */
  finishedCalls: FinishedCall[];
  /** Messages steer and follow-up queued that no turn has taken yet. */
  queued: { steering: number; followUp: number };
}

/** A call that finished, before its result entered the transcript. */
export interface FinishedCall {
  toolCallId: string;
  toolName: string;
  result: ToolResult;
  isError: boolean;
}

/**
 * What a protocol route reads of a thread's agent: an `Agent` in this process, or a durable
 * session on Restate as the host last saw it (refreshed before each request is checked).
 *
 * @example
 * ```ts
 * const thread = await host.thread(request, threadId);
 * const waiting = thread.agent.pendingApprovals().map((p) => p.toolCallId);
 * ```
 */
export interface ThreadAgent {
  /** The transcript, the truth a client's resent history is checked against. */
  readonly messages: readonly AgentMessage[];
  /** `"idle"` when no run is active (an in-process agent gives its machine state, e.g. `"running.executing"`). */
  readonly state: string;
  readonly runId: string | undefined;
  pendingApprovals(): PendingApproval[];
  pendingToolCalls(): PendingApproval[];
}

/**
 * One thread as the host holds it: its agent (created, or woken from hibernation; or a durable
 * session) and the operations a protocol route needs.
 */
export interface HostedThread {
  readonly threadId: string;
  readonly agent: ThreadAgent;
  /**
   * Checks `input` against the agent (a new message while a run is active, an answer to a call
   * that is not pending, ...: a {@link AgentCallError}, nothing applied), then applies it and returns
   * the streaming response, encoded by `encoder`, that ends at `agent_end` or when the run is
   * quiescent. A dropped connection detaches; it never aborts the run.
   */
  respond(input: ThreadInput, encoder: StreamEncoder): Promise<Response>;
  /**
   * The response in progress replayed from its start, then live (a reconnect); `undefined` when
   * no response is in progress. With `from`: run `from.runId`'s events from `from.seq` instead
   * (whether or not a response is in progress; the run may have ended), as the agent keeps them;
   * `undefined` when it no longer does.
   */
  reconnect(encoder: StreamEncoder, from?: { runId: string; seq: number }): Response | undefined;
  status(): ThreadStatus;
}

/** What a protocol route gets from the host. */
export interface HostApi {
  /**
   * Runs the app's `authorize` hook for `threadId` (before anything is read or stored), then gives
   * the thread: created when `create` is true and it does not exist. Throws {@link AgentCallError}
   * (403 refused, 404 unknown thread).
   */
  thread(request: Request, threadId: string, options?: { create?: boolean }): Promise<HostedThread>;
  /** Reads the request's JSON body within the host's size limit; a {@link AgentCallError} 400/413 otherwise. */
  readJson(request: Request): Promise<unknown>;
}

/**
 * A route a protocol adds under the host's base path. `path` has literal segments and `:name`
 * parameters, e.g. `"/chat/:id/stream"`.
 *
 * @example
 * ```ts
 * const ping: HostRoute = { method: "GET", path: "/ping", handle: async () => new Response("pong") };
 * ```
 */
export interface HostRoute {
  method: "GET" | "POST";
  path: string;
  handle(request: Request, params: Record<string, string>, host: HostApi): Promise<Response>;
}

/** A set of routes speaking one protocol (`aiSdkProtocol()`, an AG-UI protocol, ...). */
export interface HostProtocol {
  readonly name: string;
  readonly routes: readonly HostRoute[];
}

/**
 * A refusal the host answers with a 4xx JSON body `{ error: { code, message } }`; routes throw it
 * for bad input. Nothing is stored or applied before it is thrown.
 *
 * @deprecated Kept for one release: throw and catch {@link AgentCallError}, the one error type of
 * every side of an agent. `instanceof HostError` is true of every `AgentCallError`, so code that
 * catches it keeps working.
 *
 * @example
 * ```ts
 * throw new HostError(400, "bad_request", "body.messages must be an array"); // now: new AgentCallError(...)
 * ```
 */
export class HostError extends AgentCallError {
  override name = "HostError";
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof AgentCallError;
  }
}
