// A thread on the session host as an AgentHandle, over HTTP: the same contract as the agent in the
// page or a durable session, spoken through the host's routes (the agent-machine protocol's run and
// events streams, the side routes, the status route). Browser-safe: fetch and streams only.
import type { Subscriber } from "rxjs";
import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
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

/**
 * A frame of the agent-machine protocol (`data: {...}` of the host's event stream).
 *
 * @example
 * ```ts
 * const frame: AgentMachineFrame = { type: "event", seq: 0, event: { type: "agent_start" }, runId: "run-1" };
 * ```
 */
export type AgentMachineFrame =
  | { type: "open"; kind: "run" | "continuation" | "replay"; runId?: string; messages: AgentMessage[] }
  | { type: "event"; seq: number; event: AgentEvent; runId?: string }
  | {
      type: "close";
      ending:
        | { kind: "end"; messages: AgentMessage[] }
        | {
            kind: "quiescent";
            approvals: PendingApproval[];
            toolCalls: PendingApproval[];
            messages: AgentMessage[];
          }
        | { kind: "gone"; messages: AgentMessage[] };
    };

/**
 * What the handle reads from the host, in the order it reads it: each event of the thread's runs
 * once (`runId` is `undefined` for a run the host restored mid-way, which has no id), the transcript
 * and waiting calls each response opens and closes with (the host's truth), and a stream that broke.
 *
 * @example
 * ```ts
 * handle.updates$.subscribe((u) => u.type === "thread" && console.log(u.messages.length, "messages"));
 * ```
 */
export type RemoteUpdate =
  | { type: "event"; runId: string | undefined; seq: number; event: AgentEvent }
  | {
      type: "thread";
      messages: readonly AgentMessage[];
      /** At a response's close when the run waits for answers: the calls that wait. */
      waiting?: { approvals: PendingApproval[]; toolCalls: PendingApproval[] };
    }
  | { type: "broken"; error: Error };

/**
 * Makes the error a refusal is thrown as: `code` is the host's own.
 *
 * @example
 * ```ts
 * const keepHostCodes: RefusalMaker = (status, code, message) => new AgentCallError(status, code, message);
 * ```
 */
export type RefusalMaker = (status: number, code: string, message: string) => AgentCallError;

/**
 * A remote handle with what the page's store reads besides the contract.
 *
 * @example
 * ```ts
 * const handle: RemoteAgentHandle = openRemoteHandle({ url: "/api", threadId: "chat-1" }, keepHostCodes);
 * ```
 */
export interface RemoteAgentHandle extends AgentHandle {
  /** Everything the handle reads from the host's streams, in order (see {@link RemoteUpdate}). */
  readonly updates$: Observable<RemoteUpdate>;
}

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
 * handle reads (its run, its answers) and, for a run or a seq it has not read, from the host's
 * `GET …/events?runId=…&seq=…`; answers go on the side routes while a stream of the run is open
 * (its events keep coming there), else resume the run with a request of their own. Refusals are
 * {@link AgentCallError}s with the contract's codes (the host's own code is in the message).
 *
 * @example
 * ```ts
 * const handle = remoteAgentHandle({ url: "/api", threadId: "chat-1" });
 * const { runId } = await handle.run({ role: "user", content: "hi", timestamp: Date.now() });
 * handle.eventsSince(runId, 0).subscribe(({ event }) => console.log(event.type));
 * ```
 */
export function remoteAgentHandle(options: RemoteHandleOptions): AgentHandle {
  return new RemoteHandle(options, contractRefusal);
}

/**
 * The handle the page's remote store is built on: the same client, with its updates in reading
 * order and refusals made by `refusal` (the store keeps the host's codes).
 *
 * @example
 * ```ts
 * const handle = openRemoteHandle({ url: "/api", threadId: "chat-1" }, (s, code, m) => new AgentCallError(s, code, m));
 * handle.updates$.subscribe((update) => console.log(update.type));
 * ```
 */
export function openRemoteHandle(options: RemoteHandleOptions, refusal: RefusalMaker): RemoteAgentHandle {
  return new RemoteHandle(options, refusal);
}

/** The events of one run as this handle has read them (from seq `from` on), and who follows them. */
interface RunLog {
  runId: string;
  from: number;
  events: SequencedEvent[];
  ended: boolean;
  followers: Set<Subscriber<SequencedEvent>>;
}

const newLog = (runId: string, from: number): RunLog => ({
  runId,
  from,
  events: [],
  ended: false,
  followers: new Set(),
});

class RemoteHandle implements RemoteAgentHandle {
  private readonly base: string;
  private readonly doFetch: NonNullable<RemoteHandleOptions["fetch"]>;
  private readonly updates = new Subject<RemoteUpdate>();
  /** The thread's latest run as this handle has read it. */
  private log: RunLog | undefined;
  /** Streams of the thread's latest run being read now (a run's, an answer's, a reconnect). */
  private reading = 0;
  /** An answer went on a side route while a stream was open: what follows may come after it closes. */
  private answeredAside = false;
  /** A status read started in this tick, shared by `status()` and `messages()` asked together. */
  private sharedRead: Promise<ThreadStatusBody | undefined> | undefined;

  constructor(
    private readonly options: RemoteHandleOptions,
    private readonly refusal: RefusalMaker,
  ) {
    this.base = `${options.url.replace(/\/+$/, "")}/threads/${encodeURIComponent(options.threadId)}`;
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get id(): string {
    return this.options.threadId;
  }

  get updates$(): Observable<RemoteUpdate> {
    return this.updates.asObservable();
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
      let closed = false;
      let followed: { log: RunLog; follower: Subscriber<SequencedEvent> } | undefined;
      const serve = (log: RunLog) => {
        for (const item of log.events) if (item.seq >= seq) subscriber.next(item);
        if (log.ended) return subscriber.complete();
        const follower = skipping(subscriber, seq, log);
        log.followers.add(follower);
        followed = { log, follower };
        if (log === this.log) void this.followIfIdle(log);
      };
      const log = this.log;
      if (log?.runId === runId && log.from <= seq) serve(log);
      else {
        void this.replay(runId, seq).then(
          (found) => {
            if (closed) return;
            if (found) return serve(found);
            subscriber.error(
              new AgentCallError(
                410,
                "events_unavailable",
                `the events of run ${runId} from ${seq} are not kept`,
              ),
            );
          },
          (error: unknown) => subscriber.error(error),
        );
      }
      return () => {
        closed = true;
        followed?.log.followers.delete(followed.follower);
      };
    });
  }

  async run(message: UserMessage, runOptions?: HandleRunOptions): Promise<{ runId: string }> {
    if (runOptions?.tools?.length) {
      throw this.refusal(
        400,
        "bad_request",
        "a remote thread takes no run tools: give the host's agent its tools",
      );
    }
    const response = await this.request("POST", "/run", { message: this.wireMessage(message) }, true);
    return new Promise<{ runId: string }>((resolve, reject) => {
      let started = false;
      void this.read(response, (runId) => {
        started = true;
        resolve({ runId });
      }).then(() => {
        if (!started) reject(this.refusal(400, "bad_request", "the run did not start"));
      }, reject);
    });
  }

  async steer(message: string | UserMessage): Promise<void> {
    await this.request("POST", "/steer", this.wireMessage(message));
  }

  async followUp(message: string | UserMessage): Promise<void> {
    await this.request("POST", "/follow-up", this.wireMessage(message));
  }

  async check(answers: readonly CallAnswer[]): Promise<void> {
    this.checkResults(answers);
    await this.request("POST", "/check", this.wireAnswers(answers));
  }

  async answer(answers: readonly CallAnswer[]): Promise<void> {
    this.checkResults(answers);
    if (this.reading > 0 && this.log && !this.log.ended) {
      // A stream of the run is open (another call still runs): each answer on its side route, in
      // order, and the run's events keep coming on that stream.
      const wire = answers.map((answer) => sideRouteOf(answer));
      if (wire.some(([path]) => path === undefined)) {
        throw this.refusal(400, "bad_request", "each answer needs approve, deny, result or reject");
      }
      this.answeredAside = true;
      for (const [path, body] of wire) await this.request("POST", path!, body);
      return;
    }
    // The run route takes a request's answers whole or not at all and streams what follows.
    const response = await this.request("POST", "/run", this.wireAnswers(answers), true);
    void this.read(response).catch(() => undefined);
  }

  async abort(): Promise<boolean> {
    const response = await this.request("POST", "/abort", {});
    const { aborted } = (await response.json()) as { aborted: boolean };
    if (aborted && this.log && !this.log.ended) void this.followIfIdle(this.log);
    return aborted;
  }

  // --- reading the host's streams ---

  /**
   * Reads an agent-machine stream to its end: each event into the run's log (a dedicated `log`
   * for an older run's replay, else the latest run's), the transcripts it carries as updates;
   * `started` gets a new run's id.
   */
  private async read(response: Response, started?: (runId: string) => void, log?: RunLog): Promise<void> {
    if (!log) this.reading += 1;
    let runId = log?.runId;
    let ending: Extract<AgentMachineFrame, { type: "close" }>["ending"] | undefined;
    let events = 0;
    try {
      for await (const frame of sseFrames(response) as AsyncGenerator<AgentMachineFrame>) {
        if (frame.type === "open") {
          runId = frame.runId ?? runId;
          if (!log) this.updates.next({ type: "thread", messages: frame.messages });
        } else if (frame.type === "close") {
          ending = frame.ending;
          if (log) continue;
          const { messages } = ending;
          this.updates.next(
            ending.kind === "quiescent"
              ? {
                  type: "thread",
                  messages,
                  waiting: { approvals: ending.approvals, toolCalls: ending.toolCalls },
                }
              : { type: "thread", messages },
          );
        } else {
          const starts = frame.event.type === "agent_start" && !log;
          if (starts) runId = frame.runId ?? runId;
          this.record(runId, frame.seq, frame.event, log);
          events += 1;
          if (starts && runId !== undefined) started?.(runId);
        }
      }
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      if (!log && !this.followAfterCut(runId, events, failure))
        this.updates.next({ type: "broken", error: failure });
      throw error;
    } finally {
      if (!log) this.reading -= 1;
    }
    // Whether an answer went on a side route while this stream (or another still open) was read.
    const aside = this.answeredAside && !log;
    if (this.reading === 0) this.answeredAside = false;
    const latest = log ?? this.log;
    if (!latest || latest.ended || latest.runId !== runId) return;
    if (events === 0 && ending?.kind === "gone") {
      // The host has the run no longer (it answered a replay with nothing): its followers are told.
      const gone = new AgentCallError(410, "events_unavailable", `the events of run ${runId} are not kept`);
      for (const follower of [...latest.followers]) follower.error(gone);
      latest.followers.clear();
      return;
    }
    if (log) return;
    // The stream ended before the run did. Cut short (no close frame: a proxy's timeout, a dropped
    // connection): the run goes on on the host, so follow it. Quiescent: the run waits, and the
    // request that answers it streams the rest. Else (the host let go), or when an answer went on
    // a side route while it was open (the run moved on after it closed): follow it too.
    if (ending === undefined && this.followAfterCut(runId, events)) return;
    if (!aside && (ending?.kind === "quiescent" || latest.followers.size === 0)) return;
    void this.followIfIdle(latest);
  }

  /**
   * A stream of the latest run that ended or broke before the host closed it: when it carried
   * events (so following cannot spin on a host that answers nothing), follows the run from where
   * this handle is; if that fails, the page hears of `failure` (a broken stream). False when there
   * is nothing to follow.
   */
  private followAfterCut(runId: string | undefined, events: number, failure?: Error): boolean {
    const latest = this.log;
    if (events === 0 || !latest || latest.ended || latest.runId !== runId) return false;
    const broken = (error: unknown) =>
      this.updates.next({
        type: "broken",
        error: failure ?? (error instanceof Error ? error : new Error(String(error))),
      });
    // After this stream's own `reading` count is released (its `finally` runs first).
    queueMicrotask(() => {
      if (this.reading > 0 || latest.ended) return;
      this.replay(latest.runId, latest.from + latest.events.length).then((found) => {
        if (!found) broken(new Error("the run's events are no longer kept"));
      }, broken);
    });
    return true;
  }

  /** One event read: into `log` (or the latest run's, made for it), once, in order; each new one to the updates. */
  private record(runId: string | undefined, seq: number, event: AgentEvent, dedicated?: RunLog): void {
    if (runId === undefined) {
      // A run the host restored mid-way has no id and no log: its events pass through.
      this.updates.next({ type: "event", runId, seq, event });
      return;
    }
    if (!dedicated && (this.log === undefined || this.log.runId !== runId)) this.log = newLog(runId, seq);
    const log = dedicated ?? this.log!;
    if (log.runId !== runId || log.ended) return;
    if (log.events.length === 0) log.from = seq;
    if (seq !== log.from + log.events.length) return;
    const item = { runId, seq, event };
    log.events.push(item);
    if (event.type === "agent_end") log.ended = true;
    if (!dedicated) this.updates.next({ type: "event", runId, seq, event });
    for (const follower of [...log.followers]) {
      follower.next(item);
      if (log.ended) follower.complete();
    }
    if (log.ended) log.followers.clear();
  }

  /** Follows the latest run from where this handle is in it, when no stream of it is being read. */
  private async followIfIdle(log: RunLog): Promise<void> {
    if (this.reading > 0 || log.ended) return;
    await this.replay(log.runId, log.from + log.events.length).catch(() => undefined);
  }

  /**
   * Run `runId`'s events from `seq` as the host keeps them, read into a log (the rest in the
   * background): the latest run's, or a dedicated one for an older run; `undefined` when the host
   * keeps none (or the thread is unknown).
   */
  private async replay(runId: string, seq: number): Promise<RunLog | undefined> {
    const query = `?runId=${encodeURIComponent(runId)}&seq=${seq}`;
    const response = await this.request("GET", `/events${query}`);
    if (response.status === 204 || !response.body) return undefined;
    const latest = this.log;
    let dedicated: RunLog | undefined;
    if (latest === undefined || latest.ended || (latest.runId === runId && latest.from > seq)) {
      // This run becomes the latest the handle knows (its followers, if any, keep following it).
      const log = newLog(runId, seq);
      if (latest?.runId === runId) for (const follower of latest.followers) log.followers.add(follower);
      this.log = log;
    } else if (latest.runId !== runId) dedicated = newLog(runId, seq);
    void this.read(response, undefined, dedicated).catch(() => undefined);
    return dedicated ?? this.log;
  }

  // --- requests ---

  private threadBody(): Promise<ThreadStatusBody | undefined> {
    if (this.sharedRead) return this.sharedRead;
    const read = (async () => {
      const response = await this.doFetch(this.base, { headers: this.headers(false) }).catch(
        this.unreachable,
      );
      if (response.status === 404) return undefined; // the host makes the thread on its first run
      if (!response.ok) throw await this.refusalOf(response);
      return (await response.json()) as ThreadStatusBody;
    })();
    // Shared only by calls made together: a later call reads again (it may follow a change).
    this.sharedRead = read;
    queueMicrotask(() => {
      if (this.sharedRead === read) this.sharedRead = undefined;
    });
    return read;
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
    }).catch(this.unreachable);
    if (!response.ok) throw await this.refusalOf(response);
    return response;
  }

  private headers(json: boolean): Record<string, string> {
    const { headers } = this.options;
    return {
      ...(typeof headers === "function" ? headers() : headers),
      ...(json && { "content-type": "application/json" }),
    };
  }

  /** The host's refusal `{ error: { code, message } }` as the error this handle throws. */
  private async refusalOf(response: Response): Promise<AgentCallError> {
    let code = "http_error";
    let message = `${response.status} ${response.statusText}`;
    try {
      const body = (await response.json()) as { error?: { code?: string; message?: string } };
      code = body.error?.code ?? code;
      message = body.error?.message ?? message;
    } catch {}
    return this.refusal(response.status, code, message);
  }

  private readonly unreachable = (error: unknown): never => {
    throw this.refusal(
      503,
      "unavailable",
      `the host cannot be reached: ${error instanceof Error ? error.message : String(error)}`,
    );
  };

  /**
   * A client result's shape, checked here by the rule every side applies (the host's wire format
   * would refuse a malformed one as a bad request instead): the schemas of edited arguments are the
   * host's to check.
   */
  private checkResults(answers: readonly CallAnswer[]): void {
    if (!Array.isArray(answers)) throw this.refusal(400, "bad_request", "the answers must be an array");
    for (const answer of answers) {
      if (typeof answer !== "object" || answer === null || !("result" in answer)) continue;
      const checked = clientResultFor(answer.toolCallId, answer.result);
      if (typeof checked === "string") throw this.refusal(400, "refused", checked);
    }
  }

  /** A message as the host's routes take it: `{ content, id? }`. */
  private wireMessage(message: string | UserMessage): { content: UserMessage["content"]; id?: string } {
    if (typeof message === "string") return { content: message };
    if (typeof message !== "object" || message === null || message.role !== "user") {
      throw this.refusal(400, "bad_request", "the message must be text or a user message");
    }
    return { content: message.content, ...(message.id !== undefined && { id: message.id }) };
  }

  /** Answers as the host's run and check routes take them: `{ approvals, toolResults }`. */
  private wireAnswers(answers: readonly CallAnswer[]): { approvals: unknown[]; toolResults: unknown[] } {
    const approvals: unknown[] = [];
    const toolResults: unknown[] = [];
    for (const answer of answers) {
      const [path, body] = sideRouteOf(answer);
      if (path === undefined)
        throw this.refusal(400, "bad_request", "each answer needs approve, deny, result or reject");
      if (path === "/tool-result") toolResults.push(body);
      else approvals.push({ ...body, approved: path === "/approve" });
    }
    return { approvals, toolResults };
  }
}

/**
 * An answer as its side route takes it (`/approve`, `/deny`, `/tool-result` and the body), or no
 * path for one that is none of these (the host refuses it as a bad request).
 */
function sideRouteOf(
  answer: CallAnswer,
): [string, Record<string, unknown>] | [undefined, Record<string, unknown>] {
  const { toolCallId } = answer;
  if ("approve" in answer) {
    const { args } = answer.approve;
    return ["/approve", { toolCallId, ...(args !== undefined && { args }) }];
  }
  if ("deny" in answer) {
    const { reason } = answer.deny;
    return ["/deny", { toolCallId, ...(reason !== undefined && { reason }) }];
  }
  if ("result" in answer) return ["/tool-result", { toolCallId, result: answer.result }];
  if ("reject" in answer) return ["/tool-result", { toolCallId, error: answer.reject.reason }];
  return [undefined, { toolCallId }];
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

/** A refusal with the contract's code for the host's (the host's own stays in the message). */
function contractRefusal(status: number, code: string, message: string): AgentCallError {
  const contract = CONTRACT_CODES[code] ?? (code === "http_error" ? "unavailable" : code);
  return new AgentCallError(status, contract, contract === code ? message : `${message} (${code})`);
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
