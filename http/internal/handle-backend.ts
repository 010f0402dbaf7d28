// Any AgentHandle as what a hosted thread drives: the thread needs to read its agent synchronously
// (a protocol checks a request against the transcript, the quiescence detector reads the waiting
// calls), a handle answers asynchronously. This keeps the handle's status and transcript as last
// read, reads them again before each request is checked and before the moments a response needs
// them (a run's end, the thread going quiescent, the event after a compaction), and follows each
// run from seq 0 with `eventsSince`, publishing its events in order. The host knows nothing else of
// where the agent runs.
import type { Subscription } from "rxjs";
import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
import type { Agent } from "../../agent/agent.js";
import type {
  AgentHandle,
  AgentStatus,
  CallAnswer,
  PendingCall,
  SequencedEvent,
} from "../../core/agent-handle.js";
import { AgentCallError } from "../../core/agent-handle.js";
import { containObservable } from "../../core/contained-observable.js";
import type { AgentEvent, AgentEventOf } from "../../core/events.js";
import type { AgentMessage, UserMessage } from "../../core/messages.js";
import type { Tool } from "../../core/tool.js";
import type { ApprovalAnswer, ToolCallAnswer } from "../protocol.js";
import type { ThreadBackend } from "./thread-backend.js";

const IDLE: AgentStatus = {
  status: "idle",
  state: "idle",
  runId: undefined,
  pendingApprovals: [],
  pendingToolCalls: [],
  queued: { steering: 0, followUp: 0 },
};

/**
 * The thread backend of `handle`. `local` is the agent in this process behind it, when the host
 * made it (its snapshot is what a `ThreadStore` keeps; `host.agent(threadId)` returns it).
 */
export function handleBackend(handle: AgentHandle, local?: Agent): ThreadBackend {
  return new HandleBackend(handle, local);
}

class HandleBackend implements ThreadBackend {
  private readonly subject = new Subject<AgentEvent>();
  private status: AgentStatus = IDLE;
  private transcript: readonly AgentMessage[] = [];
  /** The run followed, the subscription to its events and the next seq expected. */
  private following: { runId: string; subscription?: Subscription; next: number } | undefined;
  /** Events received and not yet published: one waits while the view is read again. */
  private readonly inbox: InboxItem[] = [];
  private draining = false;
  /** A compaction passed: the transcript is read again before the next event goes out. */
  private stale = false;
  /** What this host queued on a handle that reports only counts: for its duplicate checks. */
  private readonly sent = { steering: [] as AgentMessage[], followUp: [] as AgentMessage[] };
  private stopped = false;
  /** The last run that ended: never followed again (its status may lag behind its events). */
  private ended: string | undefined;
  /**
   * The local agent was restored from a snapshot mid-run: that run has no event log to follow
   * (`eventsSince` knows only runs started in this process), so its live events are published.
   */
  private followingRestored = false;

  constructor(
    private readonly handle: AgentHandle,
    readonly local: Agent | undefined,
  ) {
    this.followingRestored = local !== undefined && restoredMidRun(local);
    // An agent of this process stopped by its app (host.agent(id).stop()): its responses end, as
    // they did when the host followed the agent itself.
    local?.events$.subscribe({
      next: (event) => {
        if (event.type === "agent_start") this.followingRestored = false;
        else if (this.followingRestored) return this.receiveRestored(event);
        // A run the app started on the agent itself (host.agent(id).prompt, a wake): followed from
        // its start at once, as a run the host started.
        const runId = local.runId;
        if (event.type === "agent_start" && runId !== undefined && this.following?.runId !== runId) {
          void this.follow(runId, 0);
        }
      },
      complete: () => {
        if (!this.stopped) this.subject.complete();
      },
      error: () => undefined,
    });
  }

  get events$(): Observable<AgentEvent> {
    return containObservable(this.subject, "handle.events$");
  }

  get messages(): readonly AgentMessage[] {
    return this.transcript;
  }

  get state(): string {
    return this.status.state;
  }

  get runId(): string | undefined {
    return this.status.runId;
  }

  get queued(): { steering: readonly AgentMessage[]; followUp: readonly AgentMessage[] } {
    return this.local ? this.local.queued : this.sent;
  }

  pendingApprovals() {
    return this.status.pendingApprovals.slice();
  }

  pendingToolCalls() {
    return this.status.pendingToolCalls.slice();
  }

  /**
   * Subscribed at once, so a handle that refuses at once (in process: a run it no longer keeps)
   * throws here; one that refuses later errors the observable.
   */
  eventsSince(runId: string, seq: number): Observable<SequencedEvent> {
    return this.handle.eventsSince(runId, seq);
  }

  async refresh(): Promise<void> {
    const [status, messages] = await Promise.all([this.handle.status(), this.handle.messages()]);
    if (this.stopped) return;
    this.status = status;
    this.transcript = messages;
    // A run this host did not start (a durable session's, found running): followed from its start,
    // its events so far published before the read returns (a reconnect right after finds them).
    const { runId } = status;
    if (
      runId !== undefined &&
      status.status !== "idle" &&
      this.following?.runId !== runId &&
      this.ended !== runId
    ) {
      await this.follow(runId, 0);
    }
  }

  /**
   * The view as the thread reads it between requests (before it decides the run is quiescent, at a
   * replay's end). While a run is followed and nothing is held back, its events have brought the
   * view up to date (see `publish`): no read, so the response ends at once when the run waits, as it
   * does in process, rather than a round trip later (a durable session's read), when a page that
   * saw the call may already be answering it over the response about to end. Otherwise read again.
   */
  settle(): Promise<void> {
    if (this.following !== undefined && this.inbox.length === 0 && !this.stale) return Promise.resolve();
    return this.refresh();
  }

  async start(message: UserMessage, tools: readonly Tool[] | undefined): Promise<string | undefined> {
    try {
      const { runId } = await this.handle.run(message, tools ? { tools } : undefined);
      if (this.following?.runId !== runId) void this.follow(runId, 0);
      return undefined;
    } catch (error) {
      if (error instanceof AgentCallError && error.code !== "unavailable") return error.message;
      throw error;
    }
  }

  async steer(message: UserMessage): Promise<void> {
    await this.handle.steer(message);
    if (!this.local) this.sent.steering.push(message);
  }

  async followUp(message: UserMessage): Promise<void> {
    await this.handle.followUp(message);
    if (!this.local) this.sent.followUp.push(message);
  }

  abort(): Promise<boolean> {
    this.forgetQueued();
    return this.handle.abort();
  }

  checkAnswers(approvals: readonly ApprovalAnswer[], toolResults: readonly ToolCallAnswer[]): Promise<void> {
    return this.handle.check(callAnswersOf(approvals, toolResults));
  }

  async answer(approvals: readonly ApprovalAnswer[], toolResults: readonly ToolCallAnswer[]): Promise<void> {
    await this.handle.answer(callAnswersOf(approvals, toolResults));
    // Taken: they wait no more. A sub-agent's client-run call answered leaves no event at the top
    // (it ends inside the sub-agent), so the view would list it as waiting until the next read.
    for (const { toolCallId } of [...approvals, ...toolResults]) {
      this.status = {
        ...this.status,
        pendingApprovals: without(this.status.pendingApprovals, toolCallId),
        pendingToolCalls: without(this.status.pendingToolCalls, toolCallId),
      };
    }
  }

  persistedSnapshot(): unknown {
    return this.local?.getPersistedSnapshot();
  }

  stop(): void {
    this.stopped = true;
    this.following?.subscription?.unsubscribe();
    this.following = undefined;
    this.local?.stop();
    this.subject.complete();
  }

  // --- following runs ---

  /** Follows run `runId` from `seq`; resolves once the handle first answered (its events so far, or a refusal). */
  private follow(runId: string, seq: number): Promise<void> {
    this.following?.subscription?.unsubscribe();
    const following: NonNullable<HandleBackend["following"]> = { runId, next: seq };
    this.following = following;
    let answered!: () => void;
    const first = new Promise<void>((resolve) => (answered = resolve));
    following.subscription = this.handle.eventsSince(runId, seq).subscribe({
      complete: () => answered(),
      next: (item) => {
        answered();
        if (this.following !== following || item.seq !== following.next) return;
        following.next += 1;
        this.inbox.push(item);
        this.drain();
      },
      error: (error: unknown) => {
        answered();
        if (this.following !== following) return;
        this.following = undefined;
        // The run's events are gone (or what serves them failed): the next request reads the
        // thread again; a response still open ends there.
        if (!(error instanceof AgentCallError)) {
          console.error(`agent-machine/http: following run ${runId} failed`, error);
        }
      },
    });
    return first;
  }

  /**
   * An event of the run the local agent was restored in: published as a followed run's are (the
   * answer's response streams it, its `agent_end` ends that response), in order with them.
   */
  private receiveRestored(event: AgentEvent): void {
    if (event.type === "agent_end") this.followingRestored = false;
    this.inbox.push({ runId: undefined, seq: -1, event });
    this.drain();
  }

  /**
   * Publishes what came, in order and at once, except where the view must be read again first (a
   * run's end, the event after a compaction): then it and what follows wait for the read.
   */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    while (this.inbox.length > 0 && !this.stopped) {
      if (this.inbox[0]!.event.type === "agent_end" || this.stale) {
        this.stale = false;
        void this.refresh()
          .catch(() => undefined)
          .then(() => {
            if (this.inbox.length > 0 && !this.stopped) this.publish(this.inbox.shift()!);
            this.draining = false;
            this.drain();
          });
        return;
      }
      this.publish(this.inbox.shift()!);
    }
    this.draining = false;
  }

  private publish({ runId, event }: InboxItem): void {
    this.status = statusAfter(this.status, event);
    if (event.type === "message_end") this.transcript = withMessage(this.transcript, event.message);
    if (event.type === "agent_start") {
      this.status = { ...this.status, runId, status: "running", state: running(this.status.state) };
    } else if (event.type === "compaction" || event.type === "handoff") {
      // The transcript was rewritten (or filtered for the next agent): read again.
      this.stale = true;
    } else if (event.type === "agent_end") {
      this.forgetQueued();
      if (this.status.runId === runId && this.status.status !== "idle") {
        // What serves the agent has not settled yet: the run has ended all the same.
        this.status = { ...IDLE, runId };
      }
      this.ended = runId;
      if (this.following?.runId === runId) this.following = undefined;
    } else if (event.type === "message_start" && event.message.role === "user") {
      this.forgetQueued(event.message.id);
    }
    this.subject.next(event);
  }

  private forgetQueued(id?: string): void {
    for (const list of [this.sent.steering, this.sent.followUp]) {
      for (let i = list.length - 1; i >= 0; i--)
        if (id === undefined || list[i]!.id === id) list.splice(i, 1);
    }
  }
}

/** An event to publish, of run `runId` (`undefined`: the run a restored agent resumed, which has no id here). */
type InboxItem = Omit<SequencedEvent, "runId"> & { runId: string | undefined };

/**
 * The agent came back from a snapshot in the middle of a run (waiting for an answer, or running a
 * call again): no run id, as no run started in this process, yet not idle.
 */
function restoredMidRun(agent: Agent): boolean {
  return agent.runId === undefined && agent.state !== "idle";
}

/** The status with what an event says of the calls that wait (the handle's own read may be a round trip away). */
function statusAfter(status: AgentStatus, event: AgentEvent): AgentStatus {
  switch (event.type) {
    case "approval_requested":
      return { ...status, pendingApprovals: withCall(status.pendingApprovals, event) };
    case "tool_result_requested":
      return { ...status, pendingToolCalls: withCall(status.pendingToolCalls, event) };
    case "approval_decided":
      return { ...status, pendingApprovals: without(status.pendingApprovals, event.toolCallId) };
    case "tool_execution_end":
      return {
        ...status,
        pendingApprovals: without(status.pendingApprovals, event.toolCallId),
        pendingToolCalls: without(status.pendingToolCalls, event.toolCallId),
      };
    default:
      return status;
  }
}

function withCall(calls: PendingCall[], event: AgentEventOf<"approval_requested" | "tool_result_requested">) {
  if (calls.some((call) => call.toolCallId === event.toolCallId)) return calls;
  const { type: _type, ...call } = event;
  return [...calls, call];
}

function without(calls: PendingCall[], toolCallId: string): PendingCall[] {
  return calls.some((call) => call.toolCallId === toolCallId)
    ? calls.filter((call) => call.toolCallId !== toolCallId)
    : calls;
}

/** The transcript with a message that just ended (replacing an earlier copy with its id). */
function withMessage(transcript: readonly AgentMessage[], message: AgentMessage): readonly AgentMessage[] {
  const at = message.id === undefined ? -1 : transcript.findIndex((m) => m.id === message.id);
  if (at === -1) return [...transcript, message];
  return transcript.map((m, i) => (i === at ? message : m));
}

function running(state: string): string {
  return state === "idle" ? "running" : state;
}

/** A hosted thread's answers as the handle contract's. */
export function callAnswersOf(
  approvals: readonly ApprovalAnswer[],
  toolResults: readonly ToolCallAnswer[],
): CallAnswer[] {
  return [
    ...approvals.map((a): CallAnswer =>
      a.approved
        ? { toolCallId: a.toolCallId, approve: a.args === undefined ? {} : { args: a.args } }
        : { toolCallId: a.toolCallId, deny: a.reason === undefined ? {} : { reason: a.reason } },
    ),
    ...toolResults.map((t): CallAnswer =>
      "error" in t
        ? { toolCallId: t.toolCallId, reject: { reason: t.error } }
        : { toolCallId: t.toolCallId, result: t.result },
    ),
  ];
}
