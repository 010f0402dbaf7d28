// A thread on the session host as an AgentHandle, over HTTP: the same contract as the agent in the
// page or a durable session, spoken through the host's routes (the agent-machine protocol's run and
// events streams, the side routes, the status route). Browser-safe: fetch and streams only.
import { Observable, type Subscriber } from "rxjs";
import type { PendingApproval } from "../agent/agent.js";
import {
  AgentCallError,
  type AgentCallErrorCode,
  type AgentHandle,
  type AgentStatus,
  type CallAnswer,
  type HandleRunOptions,
  type SequencedEvent,
} from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import { clientResultFor } from "../tools/call-answers.js";

/**
 * Where the thread is and how to reach it.
 *
 * @example
 * ```ts
 * const options: RemoteHandleOptions = { url: "/api", threadId: "chat-1", headers: () => ({ authorization: token() }) };
 * ```
 */
export interface RemoteHandleOptions {
  /** The host's base URL (its `basePath`), e.g. `"/api"` or `"http://127.0.0.1:3000/api"`. */
  url: string;
  /** The thread's id: the host makes its agent on the first run. */
  threadId: string;
  /** Headers for every request (your authentication), or a function that makes them each time. */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** The `fetch` to use (default: the global one); a host's `handle` fits too, in a test. */
  fetch?: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

/** What `GET {url}/threads/{id}` answers. */
interface ThreadStatusBody {
  status: AgentStatus["status"];
  state: string;
  runId?: string;
  pendingApprovals: PendingApproval[];
  pendingToolCalls: PendingApproval[];
  queued?: { steering: number; followUp: number };
  messages: AgentMessage[];
}

type Frame =
  | { type: "open"; kind: string; runId?: string }
  | { type: "event"; seq: number; event: AgentEvent; runId?: string }
  | { type: "close" };

const IDLE: AgentStatus = {
  status: "idle",
  state: "idle",
  runId: undefined,
  pendingApprovals: [],
  pendingToolCalls: [],
  queued: { steering: 0, followUp: 0 },
};

/**
 * A thread of the session host (`createSessionHost` from `agent-machine/http`, with
 * `agentMachineProtocol()` among its protocols) behind the {@link AgentHandle} contract. `run`
 * resolves once the host streams the run's `agent_start`; the run's events come from the streams the
 * handle reads (its run, its answers) and, for a run it did not start, from the host's reconnect
 * route; refusals are {@link AgentCallError}s with the contract's codes (the host's own code is in
 * the message).
 *
 * @example
 * ```ts
 * const handle = remoteAgentHandle({ url: "/api", threadId: "chat-1" });
 * const { runId } = await handle.run({ role: "user", content: "hi", timestamp: Date.now() });
 * handle.eventsSince(runId, 0).subscribe(({ event }) => console.log(event.type));
 * ```
 */
export function remoteAgentHandle(options: RemoteHandleOptions): AgentHandle {
  return new RemoteHandle(options);
}

/** The events of one run as this handle has read them, and who follows them. */
interface RunLog {
  runId: string;
  events: SequencedEvent[];
  ended: boolean;
  followers: Set<Subscriber<SequencedEvent>>;
}

class RemoteHandle implements AgentHandle {
  private readonly base: string;
  private readonly doFetch: NonNullable<RemoteHandleOptions["fetch"]>;
  private log: RunLog | undefined;
  /** Streams being read now (a run's, an answer's, a reconnect). */
  private reading = 0;

  constructor(private readonly options: RemoteHandleOptions) {
    this.base = `${options.url.replace(/\/+$/, "")}/threads/${encodeURIComponent(options.threadId)}`;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get id(): string {
    return this.options.threadId;
  }

  async status(): Promise<AgentStatus> {
    const body = await this.threadBody();
    if (!body) return IDLE;
    return {
      status: body.status,
      state: body.state,
      runId: body.runId,
      pendingApprovals: body.pendingApprovals,
      pendingToolCalls: body.pendingToolCalls,
      queued: body.queued ?? { steering: 0, followUp: 0 },
    };
  }

  async messages(): Promise<readonly AgentMessage[]> {
    return (await this.threadBody())?.messages ?? [];
  }

  eventsSince(runId: string, seq = 0): Observable<SequencedEvent> {
    return new Observable<SequencedEvent>((subscriber) => {
      const log = this.log;
      if (log?.runId === runId && (log.events[0]?.seq ?? 0) <= seq) {
        for (const item of log.events) if (item.seq >= seq) subscriber.next(item);
        if (log.ended) {
          subscriber.complete();
          return undefined;
        }
        const follower = skipping(subscriber, seq, log);
        log.followers.add(follower);
        void this.followIfIdle(runId);
        return () => log.followers.delete(follower);
      }
      // A run this handle has not read: the host's response in progress, replayed from its start.
      let closed = false;
      void this.reconnect(runId, seq).then(
        (found) => {
          if (closed) return;
          if (!found) {
            subscriber.error(
              new AgentCallError(
                410,
                "events_unavailable",
                `the events of run ${runId} from ${seq} are not kept`,
              ),
            );
            return;
          }
          const follower = skipping(subscriber, seq, found);
          for (const item of found.events) if (item.seq >= seq) subscriber.next(item);
          if (found.ended) subscriber.complete();
          else found.followers.add(follower);
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        closed = true;
      };
    });
  }

  async run(message: UserMessage, runOptions?: HandleRunOptions): Promise<{ runId: string }> {
    if (runOptions?.tools?.length) {
      throw new AgentCallError(
        400,
        "bad_request",
        "a remote thread takes no run tools: give the host's agent its tools",
      );
    }
    const response = await this.request("POST", "/run", { message: wireMessage(message) }, true);
    return new Promise<{ runId: string }>((resolve, reject) => {
      let started = false;
      void this.read(response, (runId) => {
        started = true;
        resolve({ runId });
      }).then(() => {
        if (!started) reject(new AgentCallError(400, "bad_request", "the run did not start"));
      }, reject);
    });
  }

  async steer(message: string | UserMessage): Promise<void> {
    await this.request("POST", "/steer", wireMessage(message));
  }

  async followUp(message: string | UserMessage): Promise<void> {
    await this.request("POST", "/follow-up", wireMessage(message));
  }

  async check(answers: readonly CallAnswer[]): Promise<void> {
    checkResults(answers);
    await this.request("POST", "/check", wireAnswers(answers));
  }

  async answer(answers: readonly CallAnswer[]): Promise<void> {
    checkResults(answers);
    // The run route takes a request's answers whole or not at all and streams what follows.
    const response = await this.request("POST", "/run", wireAnswers(answers), true);
    void this.read(response).catch(() => undefined);
  }

  async abort(): Promise<boolean> {
    const response = await this.request("POST", "/abort", {});
    const { aborted } = (await response.json()) as { aborted: boolean };
    if (aborted && this.log && !this.log.ended) void this.followIfIdle(this.log.runId);
    return aborted;
  }

  // --- reading the host's streams ---

  /** Reads an agent-machine stream to its end into the run's log; `started` gets a run's id. */
  private async read(response: Response, started?: (runId: string) => void): Promise<void> {
    this.reading += 1;
    try {
      let runId: string | undefined;
      for await (const frame of sseFrames(response) as AsyncGenerator<Frame>) {
        if (frame.type === "open") runId = frame.runId ?? runId;
        if (frame.type !== "event") continue;
        if (frame.event.type === "agent_start") {
          runId = frame.runId ?? runId;
          if (runId === undefined) continue;
          this.log = { runId, events: [], ended: false, followers: new Set() };
          started?.(runId);
        }
        if (runId !== undefined) this.record({ runId, seq: frame.seq, event: frame.event });
      }
    } finally {
      this.reading -= 1;
    }
    const log = this.log;
    // The response ended before the run did (it waits for answers, or a side route moved it on):
    // what follows comes on the next stream the handle reads.
    if (log && !log.ended && log.followers.size > 0) void this.followIfIdle(log.runId);
  }

  private record(item: SequencedEvent): void {
    const log = this.log;
    if (!log || log.runId !== item.runId || log.ended) return;
    const next = (log.events.at(-1)?.seq ?? -1) + 1;
    if (item.seq !== next) return;
    log.events.push(item);
    if (item.event.type === "agent_end") log.ended = true;
    for (const follower of [...log.followers]) {
      follower.next(item);
      if (log.ended) follower.complete();
    }
    if (log.ended) log.followers.clear();
  }

  /** Follows the run through the host's reconnect route when no stream of it is being read. */
  private async followIfIdle(runId: string): Promise<void> {
    if (this.reading > 0) return;
    await this.reconnect(runId, 0).catch(() => undefined);
  }

  /**
   * The host's response in progress for `runId`, read into the log (the rest in the background);
   * `undefined` when there is none, or it starts after `seq` and the log has nothing before it.
   */
  private async reconnect(runId: string, seq: number): Promise<RunLog | undefined> {
    const response = await this.request("GET", "/events");
    const known = () => (this.log?.runId === runId ? this.log : undefined);
    if (response.status === 204 || !response.body) return known();
    const frames = sseFrames(response) as AsyncGenerator<Frame>;
    const stop = () => void frames.return(undefined).catch(() => undefined);
    const open = (await frames.next()).value as Frame | undefined;
    if (open?.type !== "open" || open.runId !== runId) {
      stop();
      return known();
    }
    this.log = known() ?? { runId, events: [], ended: false, followers: new Set() };
    const log = this.log;
    // The first event says where the host's response starts: a seq before it is gone unless read.
    let first: Frame | undefined;
    for (;;) {
      const next = await frames.next();
      if (next.done) break;
      if ((next.value as Frame).type === "event") {
        first = next.value as Frame;
        break;
      }
    }
    if (first?.type === "event") {
      const kept = log.events.length > 0 && log.events[0]!.seq <= seq;
      if (first.seq > seq && !kept) {
        stop();
        return undefined;
      }
      this.record({ runId, seq: first.seq, event: first.event });
      this.reading += 1;
      void (async () => {
        try {
          for await (const frame of frames) {
            if (frame.type === "event") this.record({ runId, seq: frame.seq, event: frame.event });
          }
        } finally {
          this.reading -= 1;
        }
      })().catch(() => undefined);
    }
    return log;
  }

  // --- requests ---

  private async threadBody(): Promise<ThreadStatusBody | undefined> {
    const response = await this.doFetch(this.base, { headers: this.headers(false) }).catch(unreachable);
    if (response.status === 404) return undefined; // the host makes the thread on its first run
    if (!response.ok) throw await refusalOf(response);
    return (await response.json()) as ThreadStatusBody;
  }

  private async request(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    stream = false,
  ): Promise<Response> {
    const response = await this.doFetch(`${this.base}${path}`, {
      method,
      headers: { ...this.headers(body !== undefined), ...(stream && { accept: "text/event-stream" }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    }).catch(unreachable);
    if (!response.ok) throw await refusalOf(response);
    return response;
  }

  private headers(json: boolean): Record<string, string> {
    const { headers } = this.options;
    return {
      ...(typeof headers === "function" ? headers() : headers),
      ...(json && { "content-type": "application/json" }),
    };
  }
}

/** A follower that takes only events from `seq` (a log's live events after those it was given). */
function skipping(
  subscriber: Subscriber<SequencedEvent>,
  seq: number,
  log: RunLog,
): Subscriber<SequencedEvent> {
  const after = Math.max(seq, (log.events.at(-1)?.seq ?? -1) + 1);
  return {
    next: (item: SequencedEvent) => {
      if (item.seq >= after) subscriber.next(item);
    },
    complete: () => subscriber.complete(),
    error: (error: unknown) => subscriber.error(error),
  } as Subscriber<SequencedEvent>;
}

/**
 * A client result's shape, checked here by the rule every side applies (the host's wire format
 * would refuse a malformed one as a bad request instead): the schemas of edited arguments are the
 * host's to check.
 */
function checkResults(answers: readonly CallAnswer[]): void {
  if (!Array.isArray(answers)) throw new AgentCallError(400, "bad_request", "the answers must be an array");
  for (const answer of answers) {
    if (typeof answer !== "object" || answer === null || !("result" in answer)) continue;
    const checked = clientResultFor(answer.toolCallId, answer.result);
    if (typeof checked === "string") throw new AgentCallError(400, "refused", checked);
  }
}

/** A message as the host's routes take it: `{ content, id? }`. */
function wireMessage(message: string | UserMessage): { content: UserMessage["content"]; id?: string } {
  if (typeof message === "string") return { content: message };
  if (typeof message !== "object" || message === null || message.role !== "user") {
    throw new AgentCallError(400, "bad_request", "the message must be text or a user message");
  }
  return { content: message.content, ...(message.id !== undefined && { id: message.id }) };
}

/** Answers as the host's run and check routes take them: `{ approvals, toolResults }`. */
function wireAnswers(answers: readonly CallAnswer[]): { approvals: unknown[]; toolResults: unknown[] } {
  const approvals: unknown[] = [];
  const toolResults: unknown[] = [];
  for (const answer of answers) {
    if ("approve" in answer) {
      const { args } = answer.approve;
      approvals.push({ toolCallId: answer.toolCallId, approved: true, ...(args !== undefined && { args }) });
    } else if ("deny" in answer) {
      const { reason } = answer.deny;
      approvals.push({
        toolCallId: answer.toolCallId,
        approved: false,
        ...(reason !== undefined && { reason }),
      });
    } else if ("result" in answer) toolResults.push({ toolCallId: answer.toolCallId, result: answer.result });
    else if ("reject" in answer)
      toolResults.push({ toolCallId: answer.toolCallId, error: answer.reject.reason });
    else throw new AgentCallError(400, "bad_request", "each answer needs approve, deny, result or reject");
  }
  return { approvals, toolResults };
}

/** The host's codes as the contract's (the host's own stays in the message). */
const CONTRACT_CODES: Record<string, AgentCallErrorCode> = {
  run_active: "busy",
  not_pending: "not_found",
  unknown_call: "not_found",
  unknown_thread: "not_found",
  no_input: "bad_request",
  run_refused: "bad_request",
  duplicate_message: "bad_request",
  payload_too_large: "bad_request",
  unsupported_media_type: "bad_request",
  method_not_allowed: "bad_request",
  cross_site: "forbidden",
  not_loopback: "forbidden",
  durable_unavailable: "unavailable",
  internal_error: "unavailable",
};

/** The host's refusal `{ error: { code, message } }` as an AgentCallError with the contract's code. */
export async function refusalOf(response: Response): Promise<AgentCallError> {
  let code = "unavailable";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {}
  const contract = CONTRACT_CODES[code] ?? code;
  return new AgentCallError(response.status, contract, contract === code ? message : `${message} (${code})`);
}

function unreachable(error: unknown): never {
  throw new AgentCallError(
    503,
    "unavailable",
    `the host cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/** The JSON of each `data:` frame of a server-sent-events response. */
export async function* sseFrames(response: Response): AsyncGenerator<unknown> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).replace(/^ /, ""))
          .join("\n");
        if (data) yield JSON.parse(data);
      }
    }
  } finally {
    reader.releaseLock();
  }
}
