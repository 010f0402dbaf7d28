// A durable session on Restate, followed from another process (the session host, a durable handle).
// The service records its runs' committed events in Restate (durable/run-events.ts); the process
// running a run streams them live with its deltas (durable/live-runs.ts, served by serveAgents). The
// follower passes on the committed events as recorded and the deltas between them, each once: a
// delta is known by the committed event it follows and its index after it, so a run resumed in
// another process (which streams its step again) adds only what was not passed on yet. Without a
// live channel (none given, or unreachable) it passes on the committed events alone.
import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
import type { PendingApproval } from "../agent/agent.js";
import { EventsUnavailableError, type SequencedEvent } from "../agent/event-log.js";
import { AgentCallError } from "../core/agent-handle.js";
import { containObservable } from "../core/contained-observable.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import { clientResultOf } from "../tools/client-result.js";
import { createLiveDecoder } from "./live-wire.js";
import type { RunHandle, SessionClient } from "./session-client.js";
import type { RecordedEvents, SessionStatus, SessionUpdates } from "./session-types.js";

/** Events kept for a reconnect, per run. */
const MAX_BUFFERED_EVENTS = 20_000;
/** Ms between reads while a run this follower started has not published its `agent_start` yet. */
const START_POLL_MS = 10;
/**
 * How long after the send a follower with live channels waits for one to stream the run before it
 * reads Restate for the run's start (a process serving no live channel, or one not given).
 */
const START_LIVE_GRACE_MS = 50;
/** How long after a run is seen starting its live channel is looked for every START_POLL_MS. */
const LIVE_START_MS = 2_000;
/** How long after the send a run not begun is first asked whether it ended (then at doubling pauses). */
const START_END_CHECK_MS = 100;
/** How long a started run may take to publish its `agent_start`. */
const START_TIMEOUT_MS = 30_000;
/**
 * How long an answer to a call this follower saw announced is sent again while the session answers
 * 404 (the state holds the call a moment after the service publishes its ask), and the first pause.
 */
const ANNOUNCED_RETRY_MS = 2_000;
const ANNOUNCED_FIRST_PAUSE_MS = 25;

/**
 * A follower of durable session `sessionId`, reading it every `pollIntervalMs` while a run goes on
 * (not at all while the session is idle and nothing was asked of it), and the live channels `live`
 * (serveAgents' `liveUrl` of each process serving the sessions). Internal: the durable handle and
 * the session host's backend are built on it.
 *
 * @example
 * ```ts
 * const follower = createSessionFollower(client, "s-42", 100, [server.liveUrl]);
 * follower.events$.subscribe((event) => console.log(event.type));
 * ```
 */
export function createSessionFollower(
  client: SessionClient,
  sessionId: string,
  pollIntervalMs: number,
  live: readonly string[] = [],
): SessionFollower {
  return new SessionFollower(client, sessionId, pollIntervalMs, live);
}

/** See {@link createSessionFollower}. */
export class SessionFollower {
  private readonly subject = new Subject<AgentEvent>();
  private readonly liveEvents = new Subject<SequencedEvent>();
  private stored: AgentMessage[] = [];
  private generation = -1;
  private status: SessionStatus | undefined;
  private currentRun: string | undefined;
  private active = false;
  /** The run's messages that ended but are not in the stored transcript yet, by id. */
  private runMessages: AgentMessage[] = [];
  /** The prompt sent, until the run publishes it. */
  private prompted: UserMessage | undefined;
  private buffer: SequencedEvent[] = [];
  private seq = -1;
  /** The seq of the next committed event of the current run. */
  private committedNext = 0;
  /** The index of the next live event after committed event `committedNext - 1`. */
  private liveIndex = 0;
  /**
   * What was passed on live of each model answer (by message id): its text and thinking so far
   * (and how much of them the recorded blocks have covered), its calls opened and closed. The
   * recorded events of that answer pass on only what the live ones did not.
   */
  private readonly liveParts = new Map<string, LiveParts>();
  /** The current run's events are known (recorded); else its waiting calls are the status's. */
  private eventsKnown = false;
  private readonly waitingApprovals = new Map<string, PendingApproval>();
  private readonly waitingResults = new Map<string, PendingApproval>();
  private readonly decided = new Set<string>();
  /** Tool calls of the run that started executing and have not ended. */
  private readonly executing = new Set<string>();
  private readonly queue: { steering: AgentMessage[]; followUp: AgentMessage[] } = {
    steering: [],
    followUp: [],
  };
  private ticking: Promise<void> = Promise.resolve();
  private following = false;
  private stopped = false;
  private failing = false;
  private liveConnection: AbortController | undefined;
  /** Live streams open now (a process serves the current run to this follower). */
  private liveOpen = 0;
  /** When the live channel last passed an event of the current run on. */
  private liveAt = 0;
  /** The view is known current in this turn of the event loop: see {@link viewIsCurrent}. */
  private viewCurrent = false;
  private viewMarks = 0;
  /** How many times this follower asked something of the session that changes it. */
  private changes = 0;
  /** The run whose agent_end this follower passed on last. */
  private ended: string | undefined;
  /** The current run's events told every change to the transcript (no compaction, every message has an id). */
  private runWhole = true;
  private started: (() => void) | undefined;
  /** Answers being applied, and the events held back meanwhile (see `answering`). */
  private answers = 0;
  private held: AgentEvent[] = [];

  constructor(
    private readonly client: SessionClient,
    private readonly sessionId: string,
    private readonly pollIntervalMs: number,
    private readonly live: readonly string[],
  ) {}

  // --- what a consumer reads ---

  get events$(): Observable<AgentEvent> {
    return containObservable(this.subject, "handle.events$");
  }

  /** Restate's transcript, with the messages of the run in progress not stored yet. */
  get messages(): readonly AgentMessage[] {
    const ids = new Set(this.stored.map((m) => m.id));
    const extra = this.runMessages.filter((m) => !ids.has(m.id));
    if (this.prompted && !ids.has(this.prompted.id) && !extra.some((m) => m.id === this.prompted?.id)) {
      extra.unshift(this.prompted);
    }
    return extra.length ? [...this.stored, ...extra] : this.stored;
  }

  /** The run messages the events told of that no read has shown yet. */
  private unread(): AgentMessage[] {
    const ids = new Set(this.stored.map((m) => m.id));
    return this.runMessages.filter((m) => !ids.has(m.id));
  }

  /** `idle`, `running`, or `running.executing` while a tool call of the run executes (as its events say). */
  get state(): string {
    if (!this.active) return "idle";
    return this.executing.size > 0 ? "running.executing" : "running";
  }

  get runId(): string | undefined {
    return this.currentRun;
  }

  get queued() {
    return { steering: this.queue.steering.slice(), followUp: this.queue.followUp.slice() };
  }

  pendingApprovals(): PendingApproval[] {
    if (this.eventsKnown) return [...this.waitingApprovals.values()];
    if (!this.active) return [];
    return (this.status?.pendingApprovals ?? []).filter((p) => !this.decided.has(p.toolCallId));
  }

  pendingToolCalls(): PendingApproval[] {
    if (this.eventsKnown) return [...this.waitingResults.values()];
    if (!this.active) return [];
    return (this.status?.pendingToolCalls ?? []).filter((p) => !this.decided.has(p.toolCallId));
  }

  eventsSince(runId: string, seq: number): Observable<SequencedEvent> {
    const oldest = this.buffer[0]?.seq;
    if (runId !== this.currentRun || oldest === undefined || seq < oldest) {
      throw new EventsUnavailableError(
        `the events of run ${runId} from ${seq} are not kept by this follower`,
        runId,
        seq,
        runId === this.currentRun ? oldest : undefined,
        this.messages,
      );
    }
    return new Observable<SequencedEvent>((subscriber) => {
      for (const item of this.buffer) {
        if (item.seq < seq) continue;
        subscriber.next(item);
        if (item.event.type === "agent_end") {
          subscriber.complete();
          return undefined;
        }
      }
      const subscription = this.liveEvents.subscribe((item) => {
        if (item.runId !== runId) return;
        subscriber.next(item);
        if (item.event.type === "agent_end") subscriber.complete();
      });
      return () => subscription.unsubscribe();
    });
  }

  // --- what a consumer asks ---

  /** Starts a run; resolves once its `agent_start` is passed on (`undefined`), or with why it did not start. */
  async start(given: UserMessage): Promise<AgentCallError | undefined> {
    // The prompt gets an id here when the client gave none, so its stored copy is known as it.
    const message = withId(given, "prompt");
    this.changing();
    let handle;
    try {
      handle = await this.call(() =>
        this.client.send(this.sessionId, message, {
          ...(message.id !== undefined && { idempotencyKey: `${this.sessionId}/${message.id}` }),
        }),
      );
    } catch (error) {
      return error instanceof AgentCallError ? error : unavailable(error);
    }
    this.prompted = { ...message, source: "prompt" };
    const begun = new Promise<void>((resolve) => (this.started = resolve));
    const before = { runId: this.currentRun, active: this.active };
    this.beginRun(handle.invocationId);
    // A run the service refuses before it begins (its input, an agent that cannot be made) ends
    // with no agent_start: asked of Restate at doubling pauses, so its reason comes back at once.
    let endCheckAt = Date.now() + START_END_CHECK_MS;
    let endCheckPause = START_END_CHECK_MS;
    const deadline = Date.now() + START_TIMEOUT_MS;
    // Read often until the run has begun: its agent_start is what the caller waits for. With live
    // channels, reads wait until none has streamed the run for a while after the send: its
    // agent_start comes from there, and a read beside the run's start only slows it down.
    let begunYet = false;
    void begun.then(() => (begunYet = true));
    const pause = () => Promise.race([begun, new Promise((resolve) => setTimeout(resolve, START_POLL_MS))]);
    const readFrom = this.live.length ? Date.now() + START_LIVE_GRACE_MS : 0;
    while (!begunYet && !this.stopped && Date.now() < deadline) {
      // The live channel may bring it before the read answers.
      if (this.liveOpen === 0 && Date.now() >= readFrom)
        await Promise.race([this.tick().catch(() => undefined), begun]);
      if (begunYet) break;
      if (Date.now() >= endCheckAt) {
        const refused = await this.refusedStart(handle);
        if (refused !== undefined && !begunYet) {
          this.prompted = undefined;
          this.started = undefined;
          this.currentRun = before.runId;
          this.active = before.active;
          if (this.active) this.follow();
          return refused;
        }
        endCheckPause *= 2;
        endCheckAt = Date.now() + endCheckPause;
      }
      await pause();
    }
    this.follow();
    return begunYet ? undefined : new AgentCallError(503, "unavailable", "the run did not start");
  }

  /** The service's refusal of run `handle` when it ended before it began; otherwise nothing. */
  private async refusedStart(handle: RunHandle): Promise<AgentCallError | undefined> {
    if (!(await this.client.ended(handle).catch(() => false))) return undefined;
    return this.call(() => this.client.result(handle)).then(
      () => undefined,
      (error: unknown) =>
        error instanceof AgentCallError
          ? error
          : new AgentCallError(
              (error as { status?: number }).status ?? 503,
              "unavailable",
              `the run was refused: ${messageOf(error)}`,
            ),
    );
  }

  async steer(given: UserMessage): Promise<void> {
    const message = withId(given, "steer");
    this.changing();
    await this.call(() => this.client.steer(this.sessionId, message));
    this.queue.steering.push(message);
  }

  async followUp(given: UserMessage): Promise<void> {
    const message = withId(given, "follow-up");
    this.changing();
    await this.call(() => this.client.followUp(this.sessionId, message));
    this.queue.followUp.push(message);
  }

  async abort(): Promise<boolean> {
    this.changing();
    const ended = this.ended;
    if (ended !== undefined && ended === this.currentRun && !this.active) {
      // The run this follower followed has ended (its agent_end came, maybe from the live channel
      // a moment before its invocation finishes): aborted only if another run began since, not the
      // invocation that is writing what the run left.
      const status = await this.call(() => this.client.status(this.sessionId));
      if (status.runId === ended) return false;
    }
    return this.call(() => this.client.abort(this.sessionId));
  }

  async checkAnswers(
    approvals: readonly { toolCallId: string; approved: boolean; args?: unknown }[],
    toolResults: readonly ({ toolCallId: string; result: unknown } | { toolCallId: string; error: string })[],
  ): Promise<void> {
    // A client-run tool's result is checked here, as the service checks it; edited arguments by
    // the service (the tools' schemas live there), which decides nothing on a dry run.
    for (const answer of toolResults) {
      if (!("result" in answer)) continue;
      const checked = clientResultOf(answer.result);
      if (typeof checked === "string") {
        throw new AgentCallError(
          400,
          "refused",
          `resolveToolCall("${answer.toolCallId}"): ${checked}. The call still waits for its result.`,
        );
      }
    }
    for (const answer of approvals) {
      if (!answer.approved || answer.args === undefined) continue;
      await this.callAnnounced(answer.toolCallId, this.waitingApprovals, () =>
        this.client.approve(this.sessionId, answer.toolCallId, { args: answer.args, dryRun: true }),
      );
    }
  }

  approve(toolCallId: string, args: unknown): Promise<void> {
    return this.answering(async () => {
      await this.callAnnounced(toolCallId, this.waitingApprovals, () =>
        this.client.approve(this.sessionId, toolCallId, args === undefined ? undefined : { args }),
      );
      await this.taken(toolCallId, "approval_decided");
    });
  }

  deny(toolCallId: string, reason: string | undefined): Promise<void> {
    return this.answering(async () => {
      await this.callAnnounced(toolCallId, this.waitingApprovals, () =>
        this.client.deny(this.sessionId, toolCallId, reason),
      );
      await this.taken(toolCallId, "approval_decided");
    });
  }

  resolveToolCall(toolCallId: string, result: string | ToolResult): Promise<void> {
    return this.answering(async () => {
      await this.callAnnounced(toolCallId, this.waitingResults, () =>
        this.client.resolveToolCall(this.sessionId, toolCallId, result),
      );
      await this.taken(toolCallId, "tool_execution_end");
    });
  }

  rejectToolCall(toolCallId: string, reason: string): Promise<void> {
    return this.answering(async () => {
      await this.callAnnounced(toolCallId, this.waitingResults, () =>
        this.client.rejectToolCall(this.sessionId, toolCallId, reason),
      );
      await this.taken(toolCallId, "tool_execution_end");
    });
  }

  /**
   * Applies one answer, holding back the run's events meanwhile: a consumer applying several
   * answers in a row (the host, one request's approvals) sees what they caused once it is done,
   * as it would in process, rather than the run moving on after the first while the next is on
   * its way (it would take the run for quiescent, the next call still waiting). Released a
   * macrotask after the last answer, so the consumer's next answer, sent right away, is held too.
   */
  private async answering(apply: () => Promise<void>): Promise<void> {
    this.changing();
    this.answers++;
    try {
      await apply();
    } finally {
      this.answers--;
      setImmediate(() => this.release());
    }
  }

  private release(): void {
    if (this.answers > 0 || this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (const event of held) this.publish(event);
  }

  /** Passes an event on, or holds it while an answer is being applied. */
  private pass(event: AgentEvent): void {
    if (this.answers > 0 || this.held.length > 0) this.held.push(event);
    else this.publish(event);
  }

  refresh(): Promise<void> {
    return this.tick();
  }

  /**
   * Whether the view (status, transcript, waiting calls) is known current: in this turn of the
   * event loop (no I/O or timer since) a read answered that began after this follower last changed
   * the session, or the run it followed ended with every change to the transcript in its events.
   * A read now would tell nothing more (what another client does meanwhile, a read just made
   * misses as well).
   */
  viewIsCurrent(): boolean {
    return this.viewCurrent;
  }

  private markCurrent(): void {
    const mark = ++this.viewMarks;
    this.viewCurrent = true;
    setImmediate(() => {
      if (this.viewMarks === mark) this.viewCurrent = false;
    });
  }

  /** This follower asks something that changes the session: the view is no longer known current. */
  private changing(): void {
    this.changes += 1;
    this.viewCurrent = false;
  }

  stop(): void {
    this.stopped = true;
    this.liveConnection?.abort();
  }

  // --- reading Restate ---

  /** One read, after any other in progress (reads never overlap). */
  private tick(): Promise<void> {
    const next = this.ticking.then(() => this.poll());
    this.ticking = next.catch(() => undefined);
    return next;
  }

  private async poll(): Promise<void> {
    const changes = this.changes;
    const current = () => {
      if (this.changes === changes) this.markCurrent();
    };
    let answer: SessionUpdates;
    const request = () => ({
      from: this.stored.length,
      ...(this.active &&
        this.currentRun !== undefined && { events: { runId: this.currentRun, since: this.committedNext } }),
    });
    try {
      answer = await this.client.updates(this.sessionId, request());
      if (this.generation !== -1 && answer.status.generation !== this.generation) {
        // A compaction rewrote the transcript: read it whole (what it replaced is not announced).
        this.stored = [];
        answer = await this.client.updates(this.sessionId, request());
      }
    } catch (error) {
      // A session that never ran: nothing to show yet (its first run may be on its way).
      if ((error as { status?: number }).status === 404) return current();
      throw unavailable(error);
    }
    this.failing = false;
    this.apply(answer);
    // A run found going (woken, or started by another client): its events so far, in this read too.
    if (this.active && !answer.events && answer.eventsUnavailable === undefined) {
      this.apply(
        await this.client.updates(this.sessionId, request()).catch((error: unknown) => {
          throw unavailable(error);
        }),
      );
    }
    current();
  }

  /** Reads while a run goes on, until it ends (or the follower stops). */
  private follow(): void {
    if (this.following || this.stopped) return;
    this.following = true;
    void (async () => {
      while (this.active && !this.stopped) {
        await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
        if (this.liveCarries()) continue;
        try {
          await this.tick();
        } catch (error) {
          // Restate unreachable for a while (a restart): keep reading, say so once.
          if (!this.failing) console.error(`agent-machine: reading session ${this.sessionId} failed`, error);
          this.failing = true;
        }
      }
      this.following = false;
    })();
  }

  /**
   * The live channel brings the run's committed events as they are recorded (it passed one on
   * within the poll interval): a read of Restate would bring nothing new, so none is made. Quiet
   * for a poll interval (a run waiting, a process gone, a gap in what it keeps), reads resume.
   */
  private liveCarries(): boolean {
    return this.eventsKnown && this.liveOpen > 0 && Date.now() - this.liveAt < this.pollIntervalMs;
  }

  private apply(answer: SessionUpdates): void {
    const { status } = answer;
    const first = this.generation === -1;
    this.generation = status.generation;
    this.status = status;
    this.stored = [...this.stored.slice(0, answer.from), ...answer.messages];
    if (this.runMessages.length) this.runMessages = this.unread();
    if (first && !this.active) {
      this.currentRun = status.runId;
      // Woken now: a run in progress is followed from its first event.
      if (status.state === "running") this.beginRun(status.runId);
    } else if (!this.active && status.state === "running" && status.runId !== this.currentRun) {
      // A run another client started.
      this.beginRun(status.runId);
    }
    const recorded = answer.events;
    if (this.active && recorded && recorded.runId === this.currentRun) {
      this.eventsKnown = true;
      this.onRecorded(recorded);
    } else if (this.active && answer.eventsUnavailable !== undefined && status.runId === this.currentRun) {
      // A run that recorded no events (an earlier version ran it) or dropped them: its waiting
      // calls are the status's, and it ends when the status says so.
      this.eventsKnown = false;
      if (status.state === "idle") this.active = false;
    }
  }

  // --- passing events on ---

  private beginRun(runId: string): void {
    this.liveConnection?.abort();
    this.currentRun = runId;
    this.active = true;
    this.eventsKnown = false;
    this.committedNext = 0;
    this.liveIndex = 0;
    this.seq = -1;
    this.buffer = [];
    // The last run's messages no read has shown yet stay in the view (its end may have been the
    // last thing known of it), unless its transcript was rewritten.
    this.runMessages = this.runWhole ? this.unread() : [];
    this.liveParts.clear();
    this.held = [];
    this.waitingApprovals.clear();
    this.waitingResults.clear();
    this.decided.clear();
    this.executing.clear();
    this.runWhole = true;
    this.follow();
    if (this.live.length) this.connectLive(runId);
  }

  private onRecorded(recorded: RecordedEvents): void {
    for (const { seq, event } of recorded.events) this.onCommitted(seq, event);
  }

  /** A committed event: passed on once, in seq order. */
  private onCommitted(seq: number, event: AgentEvent): boolean {
    if (!this.active || seq !== this.committedNext) return false;
    this.committedNext = seq + 1;
    this.liveIndex = 0;
    const shown = this.notShownLive(event);
    if (shown) this.pass(shown);
    return true;
  }

  /** A recorded event less what the live events of its message showed already; `undefined` for nothing. */
  private notShownLive(event: AgentEvent): AgentEvent | undefined {
    if (event.type !== "message_start" && event.type !== "message_update" && event.type !== "message_end") {
      return event;
    }
    const parts = event.message.id === undefined ? undefined : this.liveParts.get(event.message.id);
    if (!parts) return event;
    if (event.type === "message_start") return undefined;
    if (event.type === "message_end") {
      this.liveParts.delete(event.message.id!);
      return event;
    }
    if (event.kind === "text_delta" || event.kind === "thinking_delta") {
      const kind = event.kind === "text_delta" ? "text" : "thinking";
      const covered = Math.min(parts[kind].length - parts.covered[kind], event.delta.length);
      parts.covered[kind] += covered;
      const rest = event.delta.slice(covered);
      return rest ? { ...event, delta: rest } : undefined;
    }
    return "toolCallId" in event && parts.calls.has(`${event.kind}:${event.toolCallId}`) ? undefined : event;
  }

  /**
   * A committed event from the live channel: passed on as one read from Restate is. The run
   * records its events (this one has a seq), so its waiting calls are known from them.
   */
  private onLiveCommitted(runId: string, seq: number, event: AgentEvent): void {
    if (this.currentRun !== runId || !this.onCommitted(seq, event)) return;
    this.eventsKnown = true;
    this.liveAt = Date.now();
  }

  /** A live event (a delta, a tool update): passed on once, right after the committed event it follows. */
  private onLive(after: number, index: number, event: AgentEvent): void {
    if (!this.active || after !== this.committedNext - 1 || index < this.liveIndex) return;
    this.liveIndex = index + 1;
    this.liveAt = Date.now();
    if (
      event.type === "message_start" &&
      event.message.role === "assistant" &&
      event.message.id !== undefined
    ) {
      // A second attempt of the answer (a resumed run) starts it again: what was shown stays shown.
      if (this.liveParts.has(event.message.id)) return;
      this.liveParts.set(event.message.id, {
        text: "",
        thinking: "",
        covered: { text: 0, thinking: 0 },
        calls: new Set(),
      });
    } else if (event.type === "message_update" && event.message.id !== undefined) {
      const parts = this.liveParts.get(event.message.id);
      if (parts && (event.kind === "text_delta" || event.kind === "thinking_delta")) {
        parts[event.kind === "text_delta" ? "text" : "thinking"] += event.delta;
      } else if (parts && "toolCallId" in event) {
        parts.calls.add(`${event.kind}:${event.toolCallId}`);
      }
    }
    this.pass(event);
  }

  /** What an event says of the run's state: its messages, its waiting calls, its end. */
  private track(event: AgentEvent): void {
    switch (event.type) {
      case "agent_start":
        this.started?.();
        this.started = undefined;
        return;
      case "message_end":
        if (event.message.id === undefined) this.runWhole = false;
        else {
          this.runMessages = [...this.runMessages.filter((m) => m.id !== event.message.id), event.message];
          for (const kind of ["steering", "followUp"] as const) {
            this.queue[kind] = this.queue[kind].filter((m) => m.id !== event.message.id);
          }
        }
        if (event.message.role === "user" && event.message.id === this.prompted?.id)
          this.prompted = undefined;
        return;
      case "approval_requested":
        this.waitingApprovals.set(event.toolCallId, event);
        return;
      case "tool_result_requested":
        this.waitingResults.set(event.toolCallId, event);
        return;
      case "approval_decided":
        this.waitingApprovals.delete(event.toolCallId);
        return;
      case "tool_execution_start":
        this.executing.add(event.toolCallId);
        return;
      case "tool_execution_end":
        this.executing.delete(event.toolCallId);
        this.waitingApprovals.delete(event.toolCallId);
        this.waitingResults.delete(event.toolCallId);
        return;
      case "compaction":
      case "handoff":
        // The transcript was rewritten: only a read tells how.
        this.runWhole = false;
        return;
      case "agent_end":
        // Every committed event of the run passed on: the view is as a read now would find it.
        if (this.eventsKnown && this.runWhole) this.markCurrent();
        this.ended = this.currentRun;
        this.active = false;
        this.executing.clear();
        this.prompted = undefined;
        this.waitingApprovals.clear();
        this.waitingResults.clear();
        this.liveConnection?.abort();
        return;
      default:
    }
  }

  private publish(event: AgentEvent): void {
    this.seq += 1;
    const item: SequencedEvent = { runId: this.currentRun!, seq: this.seq, event };
    this.buffer.push(item);
    if (this.buffer.length > MAX_BUFFERED_EVENTS) this.buffer.shift();
    this.track(event);
    this.subject.next(event);
    this.liveEvents.next(item);
  }

  /**
   * A decision this follower made, taken by the run: resolves once the run's event for it (`type`,
   * for `toolCallId`) is passed on, as an agent in process publishes it before its call returns (a
   * consumer that sees the call still waiting after its answer would take the run for quiescent).
   */
  private async taken(toolCallId: string, type: "approval_decided" | "tool_execution_end"): Promise<void> {
    this.decided.add(toolCallId);
    if (!this.eventsKnown) return;
    const seen = () =>
      [...this.held, ...this.buffer.map((item) => item.event)].some(
        (event) => event.type === type && "toolCallId" in event && event.toolCallId === toolCallId,
      );
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (this.active && !this.stopped && !seen() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
      if (!seen()) await this.tick().catch(() => undefined);
    }
  }

  // --- the live channel ---

  /**
   * Follows run `runId` on the live channels, from the committed event passed on last; whichever
   * process serves the run answers (the others answer 404). Tries again every poll interval while
   * the run goes on and no channel serves it (a run resumed in another process is found there).
   */
  private connectLive(runId: string): void {
    const connection = new AbortController();
    this.liveConnection = connection;
    const since = Date.now();
    void (async () => {
      while (!connection.signal.aborted && this.active && this.currentRun === runId && !this.stopped) {
        const streams = this.live.map((url) => this.readLive(url, runId, connection.signal));
        const served = await Promise.all(streams);
        if (connection.signal.aborted || !this.active) return;
        // Tried again soon while the run may be starting (its process opens it a moment after the
        // send), then every poll interval (a run resumed elsewhere after a crash).
        const retryMs = Date.now() - since < LIVE_START_MS ? START_POLL_MS : this.pollIntervalMs;
        if (!served.some(Boolean)) await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    })();
  }

  /** Reads one live channel until it ends; whether it served the run. */
  private async readLive(url: string, runId: string, signal: AbortSignal): Promise<boolean> {
    let response: Response;
    try {
      response = await fetch(
        `${url}/runs/${encodeURIComponent(this.sessionId)}/${encodeURIComponent(runId)}?since=${this.committedNext}`,
        { signal },
      );
    } catch {
      return false;
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      return false;
    }
    const decoder = new TextDecoder();
    const decode = createLiveDecoder();
    let text = "";
    this.liveOpen += 1;
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = text.indexOf("\n\n")) !== -1) {
          const frame = text.slice(0, end);
          text = text.slice(end + 2);
          if (!frame.startsWith("data: ")) continue;
          const entry = decode(frame.slice(6));
          if ("seq" in entry) this.onLiveCommitted(runId, entry.seq, entry.event);
          else this.onLive(entry.after, entry.index, entry.event);
        }
      }
    } catch {
      // The serving process went away mid-run: Restate resumes the run, maybe elsewhere.
    } finally {
      this.liveOpen -= 1;
    }
    return true;
  }

  /** A call through the session client; what Restate refuses becomes the contract's error. */
  /**
   * Sends an answer to call `toolCallId`, sending it again on a 404 for a while (backing off, up to
   * ANNOUNCED_RETRY_MS) when an event this follower passed on announced the call and none since
   * said it was taken (`waiting` holds it): the service publishes a call's ask (on the live channel
   * at once) a moment before the session's state holds the waiting call, as Restate makes a run's
   * writes visible when its journal commits; an answer sent in that moment is not a wrong one. A
   * call never announced is refused at once.
   */
  private async callAnnounced<T>(
    toolCallId: string,
    waiting: ReadonlyMap<string, unknown>,
    run: () => Promise<T>,
  ): Promise<T> {
    const deadline = Date.now() + ANNOUNCED_RETRY_MS;
    for (let pause = ANNOUNCED_FIRST_PAUSE_MS; ; pause *= 2) {
      try {
        return await this.call(run);
      } catch (error) {
        const announced = waiting.has(toolCallId) && !this.stopped;
        if (!(error instanceof AgentCallError) || error.status !== 404 || !announced) throw error;
        if (Date.now() + pause > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  private async call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status !== undefined && status >= 400 && status < 500) {
        throw status === 404
          ? new AgentCallError(404, "not_found", messageOf(error))
          : new AgentCallError(400, "refused", messageOf(error));
      }
      throw error;
    }
  }
}

/** What the live events of one model answer showed. */
interface LiveParts {
  text: string;
  thinking: string;
  covered: { text: number; thinking: number };
  calls: Set<string>;
}

/**
 * Restate's ingress did not answer (or answered with a server error): a 503 the client may retry,
 * saying why, instead of a generic 500.
 */
export function unavailable(error: unknown): AgentCallError {
  return new AgentCallError(
    503,
    "durable_unavailable",
    `the durable sessions cannot be reached: ${messageOf(error)}`,
  );
}

/** The message with an id (`<kind>-<uuid>` when it had none), so its stored copy is known as it. */
function withId(message: UserMessage, kind: string): UserMessage & { id: string } {
  return { ...message, id: message.id ?? `${kind}-${crypto.randomUUID()}` };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
