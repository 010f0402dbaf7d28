import { connect, HttpCallError, type Ingress, rpc } from "@restatedev/restate-sdk-clients";
import { AgentCallError, type AgentCallErrorCode } from "../core/agent-handle.js";
import { connectionCause } from "../core/error-text.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { PromptInput } from "../core/options.js";
import type { ToolResult } from "../core/tool.js";
import type { RunResult, SessionServiceNames } from "./session-types.js";
import { endedEvents, endedStatus, fateOf, settledRun, settledUpdates } from "./killed-runs.js";
import { createRunFates } from "./run-fates.js";
import { EventsUnavailableError } from "../agent/event-log.js";
import type { RecordedEvents, SessionStatus, SessionUpdates, TranscriptSlice } from "./session-types.js";

/** Options of {@link createSessionClient}. */
export interface SessionClientOptions {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** Headers for every call (e.g. an API gateway's authorization). */
  headers?: Record<string, string>;
  /** The names the services were created with, when not the defaults. */
  names?: SessionServiceNames;
}

/** A run started with {@link SessionClient.send}: wait for it with {@link SessionClient.result}. */
export interface RunHandle {
  sessionId: string;
  invocationId: string;
}

/** What a follower sees: messages as they are stored, and the session's status when it changes. */
export type SessionUpdate =
  | { type: "status"; status: SessionStatus }
  | {
      type: "message";
      /** The message's index in the transcript. */
      index: number;
      message: AgentMessage;
      /**
       * The run that stored it, and its place among that run's messages (0 is the run's first
       * input message): what `follow(id, { runId, since: seq + 1 })` resumes after. Absent for
       * messages from before the run, or when a compaction rewrote the transcript during it.
       */
      runId?: string;
      seq?: number;
    }
  /** A compaction rewrote earlier messages: drop what you hold, the messages follow again from 0. */
  | { type: "reset"; generation: number };

/** Options of {@link SessionClient.follow}. */
export interface FollowOptions {
  /** Ms between two polls while something changes. Default 500. */
  intervalMs?: number;
  /**
   * Polls that bring nothing new double the pause, up to this many ms; anything new brings it
   * back to `intervalMs`. Default 4 × `intervalMs`.
   */
  maxIntervalMs?: number;
  /**
   * Resume run `runId` (a `RunHandle.invocationId`, `RunResult.runId`, `status().runId`): its
   * messages from seq `since` on, then live, until the run ends. A run not started yet is waited
   * for; one that is neither the session's current nor its last run, or whose messages a compaction
   * rewrote, throws `EventsUnavailableError` carrying the transcript to resynchronise from.
   */
  runId?: string;
  /** With `runId`: the seq of the first message wanted (one past the last one seen). Default 0. */
  since?: number;
  /** Stops following. */
  signal?: AbortSignal;
  /**
   * Stops after the poll whose status satisfies this (its new messages are yielded first), e.g.
   * `(status) => status.lastRun?.runId === handle.invocationId` for the end of one run.
   */
  until?: (status: SessionStatus) => boolean;
  /**
   * How long polls may keep failing for a reason other than the request (a network error, a 5xx
   * while a Restate node fails over) before `follow` throws. Default 30 000 ms.
   */
  retryForMs?: number;
}

/** Talks to durable agent sessions from any process: through Restate's ingress, never the serving process. */
export interface SessionClient {
  /** Starts a run and resolves with its result when it ends. A prompt sent while a run is active waits for it. */
  prompt(sessionId: string, input: PromptInput, options?: { idempotencyKey?: string }): Promise<RunResult>;
  /** Starts a run without waiting for it. */
  send(sessionId: string, input: PromptInput, options?: { idempotencyKey?: string }): Promise<RunHandle>;
  /** Waits for a run started with `send`. */
  result(handle: RunHandle): Promise<RunResult>;
  /**
   * Whether a run started with `send` has ended (then `result` answers at once, with its result
   * or its refusal): one read of the ingress, no wait.
   */
  ended(handle: RunHandle): Promise<boolean>;
  /** Queues a message taken at the active run's next steering check (or the next run's first). */
  steer(sessionId: string, input: string | UserMessage): Promise<{ queued: number }>;
  /** Queues a message taken when the run would otherwise stop. */
  followUp(sessionId: string, input: string | UserMessage): Promise<{ queued: number }>;
  /**
   * Lets a pending call run; with `args`, with the arguments a human corrected (checked by the
   * tool's schema: 400 when refused, and the call keeps waiting). With `dryRun: true` it only
   * checks (404 when the call does not wait, 400 when the schema refuses `args`) and decides
   * nothing: how a client answering several calls at once checks them all before deciding any.
   */
  approve(
    sessionId: string,
    toolCallId: string,
    options?: { args?: unknown; dryRun?: boolean },
  ): Promise<void>;
  deny(sessionId: string, toolCallId: string, reason?: string): Promise<void>;
  /**
   * Answers a call of a client-run tool (`defineClientTool`, listed in `status().pendingToolCalls`)
   * with the client's result: text or a `ToolResult`. Decided once: a call already answered (by
   * another client, `rejectToolCall`, or its timeout) or unknown is refused with 404, a malformed
   * result with 400 (the call keeps waiting).
   */
  resolveToolCall(sessionId: string, toolCallId: string, result: string | ToolResult): Promise<void>;
  /** Answers a call of a client-run tool with an error the model reads; 404 as for `resolveToolCall`. */
  rejectToolCall(sessionId: string, toolCallId: string, reason: string): Promise<void>;
  /** Aborts the active run; `false` when none was active. */
  abort(sessionId: string): Promise<boolean>;
  transcript(sessionId: string): Promise<AgentMessage[]>;
  /** Messages from index `from` on, with the count and the generation. */
  messages(sessionId: string, from?: number): Promise<TranscriptSlice>;
  /**
   * The session's status. A run Restate killed (its record left running) reads as ended with
   * reason "error": each read that finds a run running asks the ingress about it.
   */
  status(sessionId: string): Promise<SessionStatus>;
  /**
   * The status and the messages from `from` (or run `runId`'s from its seq `since`), in one call;
   * with `events`, that run's recorded events from its seq `since` too. A run Restate killed reads
   * as ended, its events ending with an `agent_end` of reason "error", once its record has read the
   * same for 5 s in this client (the ingress is asked then, and at pauses doubling up to 30 s).
   */
  updates(
    sessionId: string,
    request?: { from?: number; runId?: string; since?: number; events?: { runId: string; since?: number } },
  ): Promise<SessionUpdates>;
  /**
   * The committed events run `runId` recorded (everything but deltas and tool updates), from seq
   * `since`: a 410 `SessionCallError` when the run is not the session's current or last one,
   * recorded none (an earlier version ran it), or dropped them past its bounds.
   */
  events(sessionId: string, request: { runId: string; since?: number }): Promise<RecordedEvents>;
  /**
   * Polls the session and yields its new messages and status changes, from any process, with one
   * call per poll and longer pauses while nothing changes. A session whose first run has not
   * started yet is waited for. With `runId` (and `since`), resumes that run's messages from a seq.
   */
  follow(sessionId: string, options?: FollowOptions): AsyncGenerator<SessionUpdate>;
}

/**
 * A client for durable agent sessions (`@restatedev/restate-sdk-clients` underneath). Errors carry
 * the service's message and HTTP status: 400 for bad input, 404 for an unknown session or call.
 *
 * @example
 * ```ts
 * const client = createSessionClient({ url: "http://127.0.0.1:8080" });
 * const run = await client.send("s-42", "Summarise the README");
 * const status = await client.status("s-42");
 * for (const approval of status.pendingApprovals) await client.approve("s-42", approval.toolCallId);
 * const { messages, reason } = await client.result(run);
 * ```
 */
export function createSessionClient(options: SessionClientOptions): SessionClient {
  const readable = <T>(promise: Promise<T>) => readableAt(options.url, promise);
  const ingress: Ingress = connect({
    url: options.url,
    ...(options.headers && { headers: options.headers }),
  });
  const session = options.names?.session ?? "AgentSession";
  const inbox = options.names?.inbox ?? "SessionInbox";

  // The first run of a session this client sent (session id → invocation id): `send()` returns
  // once Restate has the invocation, a moment before the run writes its record, and a read in that
  // moment must not answer "Unknown session".
  const starting = new Map<string, string>();
  // When to ask Restate about a run that keeps reading "running", and the runs found killed.
  const fates = createRunFates();
  const fate = (runId: string) => fateOf(options, runId);
  // Sessions with a `prompt()` of this client in flight (its invocation id comes with its answer).
  const prompting = new Map<string, number>();
  const readSession = async <T>(sessionId: string, read: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + FIRST_RUN_START_MS;
    for (;;) {
      try {
        const value = await read();
        starting.delete(sessionId);
        return value;
      } catch (error) {
        const runId = starting.get(sessionId);
        if ((runId === undefined && !prompting.has(sessionId)) || !isUnknownSession(error)) throw error;
        // Ended without a record (its input was refused), or not started in time: the answer stands.
        if (Date.now() > deadline || (runId !== undefined && (await runOutput(options, runId)) === "ended")) {
          starting.delete(sessionId);
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const prompt = async (sessionId: string, input: PromptInput, idempotencyKey?: string) => {
    prompting.set(sessionId, (prompting.get(sessionId) ?? 0) + 1);
    try {
      return await call<RunResult>(session, "prompt", sessionId, input, idempotencyKey);
    } finally {
      const left = prompting.get(sessionId)! - 1;
      if (left > 0) prompting.set(sessionId, left);
      else prompting.delete(sessionId);
    }
  };

  // Async so that an id refused before sending rejects like any other refusal, never throws.
  const call = async <O>(
    service: string,
    handler: string,
    key: string,
    parameter?: unknown,
    idempotencyKey?: string,
  ) =>
    readable(
      ingress.call<unknown, O>({
        service,
        handler,
        key: checkSessionId(key),
        parameter,
        opts: rpc.opts({ ...(idempotencyKey && { idempotencyKey }) }),
      }),
    );

  const client: SessionClient = {
    prompt: (sessionId, input, opts) => prompt(sessionId, input, opts?.idempotencyKey),
    async send(sessionId, input, opts) {
      const sent = await readable(
        ingress.send({
          service: session,
          handler: "prompt",
          key: checkSessionId(sessionId),
          parameter: input,
          opts: rpc.sendOpts({ ...(opts?.idempotencyKey && { idempotencyKey: opts.idempotencyKey }) }),
        }),
      );
      if (starting.size >= 1024) starting.delete(starting.keys().next().value as string);
      starting.set(sessionId, sent.invocationId);
      return { sessionId, invocationId: sent.invocationId };
    },
    result: (handle) =>
      readable(
        ingress.result<RunResult>({
          invocationId: handle.invocationId,
          status: "Accepted",
          attachable: true,
        }),
      ),
    ended: async (handle) => (await readable(runOutput(options, handle.invocationId))) === "ended",
    steer: (sessionId, input) => call(inbox, "steer", sessionId, input),
    followUp: (sessionId, input) => call(inbox, "followUp", sessionId, input),
    async approve(sessionId, toolCallId, options) {
      await call(session, "approve", sessionId, {
        toolCallId,
        ...(options?.args !== undefined && { args: options.args }),
        ...(options?.dryRun === true && { dryRun: true }),
      });
    },
    async deny(sessionId, toolCallId, reason) {
      await call(session, "deny", sessionId, { toolCallId, ...(reason !== undefined && { reason }) });
    },
    async resolveToolCall(sessionId, toolCallId, result) {
      await call(session, "resolveToolCall", sessionId, { toolCallId, result });
    },
    async rejectToolCall(sessionId, toolCallId, reason) {
      await call(session, "rejectToolCall", sessionId, { toolCallId, reason });
    },
    async abort(sessionId) {
      const { aborted } = await call<{ aborted: boolean }>(session, "abort", sessionId);
      return aborted;
    },
    transcript: (sessionId) => readSession(sessionId, () => call(session, "transcript", sessionId)),
    messages: (sessionId, from = 0) =>
      readSession(sessionId, () => call(session, "messages", sessionId, { from })),
    async status(sessionId) {
      const read = () => readSession(sessionId, () => call<SessionStatus>(session, "status", sessionId));
      // A run Restate killed left its record running: asked of Restate only while one reads so
      // (each time: a status read is a one-off; polls read `updates`), and once found, remembered.
      const status = await read();
      const killed = status.state === "running" ? fates.killed(status.runId) : undefined;
      if (killed !== undefined) return endedStatus(status, killed);
      return settledRun(status, fate, read, fates.noteKilled);
    },
    async updates(sessionId, request = {}) {
      const read = () =>
        readSession(sessionId, () => call<SessionUpdates>(session, "updates", sessionId, request));
      // Polls read this: Restate is asked only once a running record has read the same a while.
      return settledUpdates(await read(), request, sessionId, fates, fate, read);
    },
    async events(sessionId, request) {
      const recorded = await readSession(sessionId, () =>
        call<RecordedEvents>(session, "events", sessionId, request),
      );
      const killed = recorded.ended ? undefined : fates.killed(recorded.runId);
      return killed === undefined ? recorded : endedEvents(recorded, request.since ?? 0, killed);
    },
    follow: (sessionId, followOptions) =>
      followSession(client, sessionId, (runId) => runOutput(options, runId), followOptions),
  };
  return client;
}

/**
 * Refuses, before anything is sent, a session id the ingress cannot address: the id is a segment of
 * the ingress path, and "" (no segment) or "." / ".." (dot segments every URL parser resolves away,
 * encoded or not) would reach another path, which Restate answers with a bare "bad path". Any other
 * text works: slashes, spaces, unicode and long ids are encoded.
 *
 * @example
 * ```ts
 * checkSessionId("user-42/chat"); // "user-42/chat"
 * checkSessionId(".."); // throws a SessionCallError with status 400 that names the id
 * ```
 */
export function checkSessionId(sessionId: string): string {
  if (typeof sessionId !== "string") {
    throw new SessionCallError(400, `A session id must be text, got ${typeof sessionId}`);
  }
  if (sessionId === "" || sessionId === "." || sessionId === "..") {
    throw new SessionCallError(
      400,
      `Invalid session id ${JSON.stringify(sessionId)}: Restate's ingress cannot address it (an id must not be empty, "." or "..")`,
    );
  }
  return sessionId;
}

/** How long a read waits for the first run this client sent to write its record. */
const FIRST_RUN_START_MS = 2_000;

const isUnknownSession = (error: unknown) =>
  error instanceof SessionCallError && error.status === 404 && /Unknown session/.test(error.message);

/**
 * Errors from the ingress, with the service's own message first; a connection that could not be
 * made names the ingress address and the cause (fetch's own `TypeError: fetch failed` says neither).
 *
 * @example
 * ```ts
 * const status = await readableAt(url, ingress.call({ service: "AgentSession", handler: "status", key: "s-42" }));
 * ```
 */
export async function readableAt<T>(url: string, promise: Promise<T>): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    if (error instanceof HttpCallError) throw new SessionCallError(error.status, serviceMessage(error));
    const cause = connectionCause(error);
    if (cause) {
      throw new Error(
        `Cannot reach Restate's ingress at ${url}: ${cause.code}` +
          (cause.message === cause.code ? "" : ` (${cause.message})`) +
          (cause.code === "ECONNREFUSED"
            ? "; is restate-server running, and is this its ingress port (8080 by default, not the admin port 9070)?"
            : ""),
        { cause: error },
      );
    }
    throw error;
  }
}

/**
 * A call the session services refused: `status` 400 (bad input), 404 (unknown session or call),
 * 410 (events no longer kept), 5xx; `code` is the {@link AgentCallError} code of that status.
 *
 * @example
 * ```ts
 * try {
 *   await client.approve("s-42", "call_1");
 * } catch (error) {
 *   if (error instanceof SessionCallError && error.code === "not_found") console.log("already decided");
 * }
 * ```
 */
export class SessionCallError extends AgentCallError {
  override name = "SessionCallError";
  constructor(status: number, message: string) {
    super(status, codeOfStatus(status), message);
  }
}

/** The contract's code for a status the session services answered with. */
export function codeOfStatus(status: number): AgentCallErrorCode {
  if (status === 404) return "not_found";
  if (status === 409) return "busy";
  if (status === 410) return "events_unavailable";
  if (status === 401 || status === 403) return "forbidden";
  if (status >= 500) return "unavailable";
  return "bad_request";
}

function serviceMessage(error: HttpCallError): string {
  try {
    const body = JSON.parse(error.responseText) as { message?: string };
    if (body.message) return body.message;
  } catch {}
  return error.responseText || error.message;
}

/**
 * Whether run `runId` has ended, asked of the ingress (`/restate/invocation/{id}/output` answers
 * 470 while an invocation has not completed): a run followed before it started is waited for.
 */
async function runOutput(options: SessionClientOptions, runId: string): Promise<"pending" | "ended"> {
  const response = await fetch(`${options.url}/restate/invocation/${encodeURIComponent(runId)}/output`, {
    ...(options.headers && { headers: options.headers }),
  });
  await response.body?.cancel();
  return response.status === 470 ? "pending" : "ended";
}

async function* followSession(
  client: SessionClient,
  sessionId: string,
  runState: (runId: string) => Promise<"pending" | "ended">,
  options: FollowOptions = {},
): AsyncGenerator<SessionUpdate> {
  const intervalMs = options.intervalMs ?? 500;
  const maxIntervalMs = Math.max(intervalMs, options.maxIntervalMs ?? 4 * intervalMs);
  const retryForMs = options.retryForMs ?? 30_000;
  const { runId } = options;
  let resumeAt = runId === undefined ? undefined : (options.since ?? 0);
  let next = 0;
  let generation = -1;
  let lastStatus = "";
  let failingSince: number | undefined;
  let pauseMs = intervalMs;
  /** A poll; a transient failure (network, 5xx) is retried at the next interval for `retryForMs`. */
  const poll = async <T>(call: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        const answer = await call();
        failingSince = undefined;
        return answer;
      } catch (error) {
        const transient = !(error instanceof SessionCallError) || error.status >= 500;
        failingSince ??= Date.now();
        if (!transient || Date.now() - failingSince > retryForMs || options.signal?.aborted) throw error;
        await pause(intervalMs, options.signal);
      }
    }
  };
  /** The run asked for is not kept: the consumer starts again from the transcript. */
  const unavailable = async (error: SessionCallError) =>
    new EventsUnavailableError(
      error.message,
      runId!,
      resumeAt!,
      undefined,
      await poll(() => client.transcript(sessionId)),
    );
  while (!options.signal?.aborted) {
    const request = resumeAt === undefined ? { from: next } : { runId, since: resumeAt };
    const answer: SessionUpdates | undefined = await poll(() => client.updates(sessionId, request)).catch(
      async (error: unknown) => {
        if (!(error instanceof SessionCallError)) throw error;
        // A session whose first run has not started yet is unknown (404): keep waiting for it. (Any
        // other 404, e.g. services too old to have `updates`, is an error, not a wait.)
        if (error.status === 404 && error.message.includes(`Unknown session "${sessionId}"`))
          return undefined;
        if (error.status !== 410) throw error;
        // Another run is the session's current one: the run asked for may still be queued behind it.
        const current = await poll(() => client.status(sessionId));
        if (current.runId !== runId && (await runState(runId!)) === "pending") return undefined;
        throw await unavailable(error);
      },
    );
    if (!answer) {
      pauseMs = Math.min(pauseMs * 2, maxIntervalMs);
      await pause(pauseMs, options.signal);
      continue;
    }
    const { status } = answer;
    let news = false;
    if (generation !== -1 && status.generation !== generation) {
      // A compaction rewrote earlier messages: the slice read for the old numbering is dropped.
      generation = status.generation;
      next = 0;
      yield { type: "reset", generation: status.generation };
      continue;
    }
    generation = status.generation;
    resumeAt = undefined;
    for (const [offset, message] of answer.messages.entries()) {
      const index = answer.from + offset;
      const seq =
        answer.runStart !== undefined && index >= answer.runStart ? index - answer.runStart : undefined;
      yield { type: "message", index, message, ...(seq !== undefined && { runId: status.runId, seq }) };
      news = true;
    }
    next = answer.from + answer.messages.length;
    const key = JSON.stringify([
      status.state,
      status.turn,
      status.runId,
      status.pendingApprovals.map((p) => p.toolCallId),
      (status.pendingToolCalls ?? []).map((p) => p.toolCallId),
    ]);
    if (key !== lastStatus) {
      lastStatus = key;
      news = true;
      yield { type: "status", status };
    }
    if (options.until?.(status)) return;
    // Following one run: it has ended once the session is idle or has moved on to another run.
    if (runId !== undefined && (status.runId !== runId || status.state === "idle")) return;
    pauseMs = news ? intervalMs : Math.min(pauseMs * 2, maxIntervalMs);
    await pause(pauseMs, options.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
