// One thread of the session host: its agent, the run's event counter, the quiescence detector and
// the responses that follow the run. A "response period" is the stretch of a run one protocol
// response covers: from the request that started or resumed the run until agent_end or until the
// run is quiescent (every unfinished call waits for an approval or a client-run tool's result).
import { untilNestedAsked } from "./nested-asks.js";
import type { Subscription } from "rxjs";
import { createCallTracker } from "../../agent/call-tracker.js";
import { EventsUnavailableError } from "../../agent/event-log.js";
import { AgentCallError } from "../../core/agent-handle.js";
import type { AgentEvent, AgentEventOf } from "../../core/events.js";
import type { AgentMessage, UserMessage } from "../../core/messages.js";
import type { PendingApproval } from "../../agent/agent.js";
import type { ContinuedThread, ResponseContext, ResponseEnding, StreamEncoder } from "../encoder.js";
import {
  type ApprovalAnswer,
  type FinishedCall,
  type HostedThread,
  type ThreadInput,
  type ThreadStatus,
  type ToolCallAnswer,
} from "../protocol.js";
import { openResponseStream, type ResponseSink, type ResponseStreamLimits } from "./response-stream.js";
import type { ThreadBackend } from "./thread-backend.js";

interface Period {
  /** Unknown until the run's agent_start, for a period a prompt opens. */
  runId: string | undefined;
  startSeq: number;
  /** For a period that continues an assistant message: the thread when it opened (a replay rebuilds it). */
  continues?: ContinuedThread;
}

/** Called when a run ends or goes quiescent (the host persists the thread then). */
export type SettledHook = (thread: HostedThreadImpl) => void;

export class HostedThreadImpl implements HostedThread {
  private seq = -1;
  private runId: string | undefined;
  /** The run's unfinished calls and those waiting for the client (a sub-agent's too). */
  private readonly calls = createCallTracker();
  /** Every nested call (a path id) asked while this thread followed its agent. */
  private readonly askedNested = new Set<string>();
  private readonly finished = new Map<string, FinishedCall>();
  private readonly sinks = new Set<ResponseSink>();
  private period: Period | undefined;
  /** The approvals the run waited for when it last went quiescent. */
  private quiescentApprovals: PendingApproval[] | undefined;
  private quiescent = false;
  /**
   * Events of a quiescent run that leave it quiescent (a waiting call's progress: a sub-agent's
   * text, published a moment after its call began to wait), with their seqs: sent first on the
   * response that continues the run, so its events follow on from the last response's with no gap.
   */
  private heldWhileQuiescent: { event: AgentEvent; seq: number }[] = [];
  private checkPending = false;
  private readonly subscription: Subscription;

  constructor(
    readonly threadId: string,
    readonly agent: ThreadBackend,
    private readonly onSettled: SettledHook,
    private readonly limits: ResponseStreamLimits = { maxBufferedBytes: 1024 * 1024 },
  ) {
    this.subscription = agent.events$.subscribe({
      next: (event) => this.onEvent(event),
      complete: () => this.closeAll({ kind: "gone", messages: agent.messages.slice() }),
    });
  }

  /** When the host last handed the thread to a request (its own counter: larger is later). */
  lastUsed = 0;
  /** Requests the host is handling with this thread now. */
  requests = 0;

  /**
   * The thread rests: no request handling it, no run going or waiting for an answer, and no
   * response open or replaying. Only such a thread may be dropped from memory (`maxThreads`).
   */
  get resting(): boolean {
    return (
      this.requests === 0 &&
      this.agent.state === "idle" &&
      !this.quiescent &&
      this.sinks.size === 0 &&
      !this.period
    );
  }

  /** The run is active (not idle) and not waiting for the client. */
  get working(): boolean {
    return this.agent.state !== "idle" && !this.quiescent;
  }

  status(): ThreadStatus {
    const idle = this.agent.state === "idle";
    return {
      threadId: this.threadId,
      status: idle ? "idle" : this.quiescent ? "waiting" : "running",
      state: this.agent.state,
      runId: this.agent.runId,
      pendingApprovals: this.agent.pendingApprovals(),
      pendingToolCalls: this.agent.pendingToolCalls(),
      finishedCalls: [...this.finished.values()],
      queued: { steering: this.agent.queued.steering.length, followUp: this.agent.queued.followUp.length },
    };
  }

  async respond(input: ThreadInput, encoder: StreamEncoder): Promise<Response> {
    await this.nestedAsked(
      [...(input.approvals ?? []), ...(input.toolResults ?? [])].map((a) => a.toolCallId),
    );
    const answers = this.checkInput(input);
    const kind = input.message ? "run" : "continuation";
    const context: ResponseContext = {
      kind,
      threadId: this.threadId,
      runId: kind === "run" ? undefined : this.runId,
      messages: this.agent.messages.slice(),
      userMessageId: input.message?.id,
      transcript: () => this.agent.messages,
      currentRunId: () => this.period?.runId ?? this.runId,
      pendingApprovals: () => this.agent.pendingApprovals(),
      pendingToolCalls: () => this.agent.pendingToolCalls(),
      resolvedCalls: answers.toolResults.map((a) => a.toolCallId),
    };
    // Subscribed before anything is applied: prompt, approve and deny publish synchronously.
    const { body, sink } = this.attach(encoder, context);
    this.period =
      kind === "run"
        ? { runId: undefined, startSeq: 0 }
        : {
            runId: this.runId,
            startSeq: this.heldWhileQuiescent[0]?.seq ?? this.seq + 1,
            continues: this.continuedThread(),
          };
    if (kind === "continuation") {
      for (const { event, seq } of this.heldWhileQuiescent) sink.backlog(event, seq);
    }
    this.heldWhileQuiescent = [];
    this.quiescent = false;
    if (input.message) {
      const refusal = await this.agent.start(input.message, input.tools);
      if (refusal !== undefined) {
        this.period = undefined;
        sink.close({ kind: "gone", messages: this.agent.messages.slice() });
        throw new AgentCallError(400, "run_refused", refusal);
      }
    } else {
      const refused = await this.applyAnswers(answers.approvals, answers.toolResults);
      if (refused) {
        // The thread waits as before, with no response in progress. (Answers are checked before
        // any is applied; should the agent still refuse one midway, what it took before moves the
        // run on: onEvent opens a period for it, as for a side route.)
        this.period = undefined;
        this.quiescent = true;
        sink.close({ kind: "gone", messages: this.agent.messages.slice() });
        throw refused;
      }
      this.scheduleQuiescenceCheck();
    }
    return new Response(body, { headers: encoder.headers });
  }

  reconnect(encoder: StreamEncoder, from?: { runId: string; seq: number }): Response | undefined {
    const period = this.period;
    const runId = from?.runId ?? period?.runId ?? this.runId;
    if ((!from && !period) || runId === undefined) return undefined;
    let replay;
    try {
      replay = this.agent.eventsSince(runId, from?.seq ?? period!.startSeq);
    } catch (error) {
      if (isEventsUnavailable(error)) return undefined;
      throw error;
    }
    const context: ResponseContext = {
      kind: "replay",
      threadId: this.threadId,
      runId,
      messages: this.agent.messages.slice(),
      pendingApprovals: () => this.agent.pendingApprovals(),
      pendingToolCalls: () => this.agent.pendingToolCalls(),
      ...(!from && period?.continues ? { continues: period.continues } : {}),
    };
    const replaying: { subscription?: Subscription } = {};
    let lastEnd: AgentEventOf<"agent_end"> | undefined;
    const { body, sink } = openResponseStream(
      encoder,
      context,
      () => {
        this.sinks.delete(closer);
        replaying.subscription?.unsubscribe();
      },
      this.limits,
    );
    // The thread closes its sinks at agent_end before the replay has passed it on (the thread's
    // subscription is older): the replay closes itself when it completes instead.
    const closer: ResponseSink = {
      event: () => undefined,
      backlog: () => undefined,
      close: (ending) => {
        if (ending.kind !== "end") sink.close(ending);
      },
      get closed() {
        return sink.closed;
      },
    };
    this.sinks.add(closer);
    const close = () => {
      const messages = this.agent.messages.slice();
      sink.close(lastEnd ? { kind: "end", event: lastEnd, messages } : { kind: "gone", messages });
    };
    // What the replay buffer holds comes at once, when subscribed: queued as it is and encoded as
    // the client reads (twenty stalled reconnects hold no copy of it); what follows is live.
    let buffered = true;
    let refused = false;
    replaying.subscription = replay.subscribe({
      next: ({ event, seq }) => {
        if (event.type === "agent_end") lastEnd = event;
        if (buffered) sink.backlog(event, seq);
        else sink.event(event, seq);
      },
      complete: () => {
        // A backend read asynchronously has the transcript after the run's end once it settles.
        if (this.agent.settle)
          void this.agent
            .settle()
            .catch(() => undefined)
            .then(close);
        else close();
      },
      error: (error: unknown) => {
        if (buffered && isEventsUnavailable(error)) refused = true;
        else close();
      },
    });
    if (refused) {
      // Refused at once, as a backend in this process does: no response in progress to replay.
      this.sinks.delete(closer);
      sink.close({ kind: "gone", messages: this.agent.messages.slice() });
      void body.cancel().catch(() => undefined);
      return undefined;
    }
    buffered = false;
    return new Response(body, { headers: encoder.headers });
  }

  /**
   * The thread as a response that continues the run's message finds it: the calls that waited when
   * the run went quiescent still show as waiting (the decision that moves the run on is the
   * response's first event).
   */
  private continuedThread(): ContinuedThread {
    return {
      messages: this.agent.messages.slice(),
      pendingApprovals: this.quiescentApprovals ?? this.agent.pendingApprovals(),
      pendingToolCalls: this.agent.pendingToolCalls(),
      finishedCalls: [...this.finished.values()],
    };
  }

  /**
   * Takes the run as it is when the thread is first read: one restored from a snapshot while its
   * calls waited for the client (no run this thread saw start) waits as it did when saved, so the
   * request that answers it continues the run's message, and its status says "waiting". A run that
   * moves on by itself (a sub-agent call run again) leaves this state with its first event.
   */
  adoptRun(): void {
    if (this.seq !== -1 || this.agent.state === "idle" || this.period) return;
    if (this.agent.pendingApprovals().length + this.agent.pendingToolCalls().length === 0) return;
    this.quiescent = true;
    this.quiescentApprovals = this.agent.pendingApprovals();
  }

  /** Stops following the agent (the host is closing). */
  dispose(): void {
    this.subscription.unsubscribe();
    this.closeAll({ kind: "gone", messages: this.agent.messages.slice() });
  }

  // --- input ---

  private checkInput(input: ThreadInput): { approvals: ApprovalAnswer[]; toolResults: ToolCallAnswer[] } {
    const approvals = input.approvals ?? [];
    const toolResults = input.toolResults ?? [];
    const answering = approvals.length + toolResults.length > 0;
    if (input.message && answering) {
      throw new AgentCallError(
        400,
        "bad_request",
        "a request carries either a new message or answers, not both",
      );
    }
    if (!input.message && !answering) {
      throw new AgentCallError(
        400,
        "no_input",
        "the request has no new user message and no answer to a pending call",
      );
    }
    if (input.message) {
      if (this.agent.state !== "idle") {
        throw new AgentCallError(
          409,
          "run_active",
          this.quiescent
            ? "the run waits for answers to its pending calls (approve, deny or give their results) before a new message"
            : "a run is in progress on this thread: steer it (POST .../steer) or wait for its end",
        );
      }
      this.checkNewMessageId(input.message);
      return { approvals, toolResults };
    }
    const seen = new Set<string>();
    const approvable = new Set(this.agent.pendingApprovals().map((p) => p.toolCallId));
    const resolvable = new Set(this.agent.pendingToolCalls().map((p) => p.toolCallId));
    for (const answer of approvals) this.checkAnswer(answer.toolCallId, approvable, seen, "approval");
    for (const answer of toolResults) this.checkAnswer(answer.toolCallId, resolvable, seen, "result");
    return { approvals, toolResults };
  }

  /**
   * Checks answers as a request carrying them is checked (each call waits for that kind of answer;
   * the agent would take each), applying none.
   */
  async checkOnly(approvals: ApprovalAnswer[], toolResults: ToolCallAnswer[]): Promise<void> {
    if (approvals.length + toolResults.length === 0) {
      throw new AgentCallError(400, "no_input", "no answer to check");
    }
    this.checkInput({ approvals, toolResults });
    try {
      await this.agent.checkAnswers(approvals, toolResults);
    } catch (error) {
      throw error instanceof AgentCallError
        ? error
        : new AgentCallError(400, "refused", (error as Error).message);
    }
  }

  checkNewMessageId(message: UserMessage | AgentMessage): void {
    if (message.id !== undefined && this.agent.messages.some((m) => m.id === message.id)) {
      throw new AgentCallError(409, "duplicate_message", `message ${message.id} is already in the thread`);
    }
  }

  /**
   * Waits until the nested calls `ids` answer are asked, when this thread restored a run whose
   * sub-agent asks them again (see nested-asks.ts); at once otherwise.
   */
  nestedAsked(ids: readonly string[]): Promise<void> {
    return untilNestedAsked(this.agent, this.askedNested, ids);
  }

  /** Refuses an answer to a call that is not waiting for that kind of answer. */
  checkAnswer(
    toolCallId: string,
    pending: Set<string>,
    seen: Set<string>,
    what: "approval" | "result",
  ): void {
    if (seen.has(toolCallId))
      throw new AgentCallError(400, "bad_request", `call ${toolCallId} is answered twice`);
    seen.add(toolCallId);
    if (pending.has(toolCallId)) return;
    if (this.knowsCall(toolCallId)) {
      throw new AgentCallError(
        409,
        "not_pending",
        `call ${toolCallId} does not wait for ${what === "approval" ? "an approval" : "a client result"} (already decided or answered)`,
      );
    }
    throw new AgentCallError(404, "unknown_call", `no call ${toolCallId} in this thread`);
  }

  private knowsCall(toolCallId: string): boolean {
    if (this.calls.unfinished.has(toolCallId)) return true;
    return this.agent.messages.some(
      (m) =>
        (m.role === "toolResult" && m.toolCallId === toolCallId) ||
        (m.role === "assistant" && m.content.some((c) => c.type === "toolCall" && c.id === toolCallId)),
    );
  }

  /**
   * Applies answers to pending calls, all or none: each is checked first (edited arguments against
   * the tool's schema, a client-run tool's result), and when the agent would refuse any, none is
   * applied (the refusal is returned; the calls keep waiting).
   */
  async applyAnswers(
    approvals: ApprovalAnswer[],
    toolResults: ToolCallAnswer[],
  ): Promise<AgentCallError | undefined> {
    try {
      await this.agent.checkAnswers(approvals, toolResults);
    } catch (error) {
      return error instanceof AgentCallError
        ? error
        : new AgentCallError(400, "refused", (error as Error).message);
    }
    try {
      await this.agent.answer(approvals, toolResults);
      // A sub-agent's call answered: no event at the top says it (it ends in the sub-agent), and
      // its top call must not count as waiting while the sub-agent works on.
      for (const { toolCallId } of [...approvals, ...toolResults]) this.calls.waiting.delete(toolCallId);
      return undefined;
    } catch (error) {
      return new AgentCallError(400, "refused", (error as Error).message);
    }
  }

  // --- events ---

  private attach(
    encoder: StreamEncoder,
    context: ResponseContext,
  ): { body: ReadableStream<Uint8Array>; sink: ResponseSink } {
    const opened = openResponseStream(encoder, context, () => this.sinks.delete(opened.sink), this.limits);
    this.sinks.add(opened.sink);
    return opened;
  }

  private onEvent(event: AgentEvent): void {
    if (event.type === "agent_start") {
      this.seq = 0;
      this.runId = this.agent.runId;
      this.finished.clear();
      this.quiescent = false;
      this.quiescentApprovals = undefined;
      this.heldWhileQuiescent = [];
      if (this.period && this.period.runId === undefined) this.period.runId = this.runId;
      // A run no request of this host started (a durable session's run, found running when the
      // host woke the thread): a reconnect follows it all the same.
      else if (!this.period) this.period = { runId: this.runId, startSeq: 0 };
    } else {
      this.seq += 1;
    }
    if (this.quiescent && this.keepsQuiescent(event)) {
      this.heldWhileQuiescent.push({ event, seq: this.seq });
      return;
    }
    if (this.quiescent) {
      // The run moved on with no request (a side route, a timeout, an abort): a new period, so a
      // reconnect can follow it.
      this.quiescent = false;
      const startSeq = this.heldWhileQuiescent[0]?.seq ?? this.seq;
      this.period = { runId: this.runId, startSeq, continues: this.continuedThread() };
      for (const sink of [...this.sinks]) {
        for (const held of this.heldWhileQuiescent) sink.event(held.event, held.seq);
      }
      this.heldWhileQuiescent = [];
    }
    this.track(event);
    for (const sink of [...this.sinks]) sink.event(event, this.seq);
    if (event.type === "agent_end") {
      this.period = undefined;
      this.closeAll({ kind: "end", event, messages: this.agent.messages.slice() });
      this.onSettled(this);
    } else if (this.calls.waiting.size > 0) {
      this.scheduleQuiescenceCheck();
    }
  }

  /** Progress of a call that still waits: the run stays quiescent (a bounded few are held). */
  private keepsQuiescent(event: AgentEvent): boolean {
    return (
      (event.type === "tool_execution_update" || event.type === "tool_progress") &&
      this.calls.waits(event.toolCallId) &&
      this.heldWhileQuiescent.length < 100
    );
  }

  private track(event: AgentEvent): void {
    this.calls.track(event);
    if ((event.type === "approval_requested" || event.type === "tool_result_requested") && event.path) {
      this.askedNested.add(event.toolCallId);
    }
    if (event.type === "tool_execution_end") {
      this.finished.set(event.toolCallId, {
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        result: event.result,
        isError: event.isError,
      });
    } else if (event.type === "message_end" && event.message.role === "toolResult") {
      this.finished.delete(event.message.toolCallId);
    }
  }

  // Deferred a macrotask: sibling calls publish their starts in the same tick as the approval.
  private scheduleQuiescenceCheck(): void {
    if (this.checkPending) return;
    this.checkPending = true;
    setImmediate(() => {
      if (this.agent.settle) {
        void this.agent.settle().then(
          () => this.checkQuiescence(),
          () => this.checkQuiescence(),
        );
      } else this.checkQuiescence();
    });
  }

  private checkQuiescence(): void {
    this.checkPending = false;
    if (this.quiescent || !this.isQuiescent()) return;
    this.quiescent = true;
    this.quiescentApprovals = this.agent.pendingApprovals();
    this.period = undefined;
    this.closeAll({
      kind: "quiescent",
      approvals: this.agent.pendingApprovals(),
      toolCalls: this.agent.pendingToolCalls(),
      messages: this.agent.messages.slice(),
    });
    this.onSettled(this);
  }

  private isQuiescent(): boolean {
    if (this.calls.waiting.size === 0 || this.agent.state === "idle") return false;
    // A call whose only work is a sub-agent's call waiting (a nested approval) waits too, so the
    // client can answer it.
    if (!this.calls.unfinishedWait()) return false;
    return this.agent.pendingApprovals().length + this.agent.pendingToolCalls().length > 0;
  }

  private closeAll(ending: ResponseEnding): void {
    for (const sink of [...this.sinks]) sink.close(ending);
  }
}

/** The run's events from that seq are no longer kept (in whichever words the backend says it). */
function isEventsUnavailable(error: unknown): boolean {
  return (
    error instanceof EventsUnavailableError ||
    (error instanceof AgentCallError && error.code === "events_unavailable")
  );
}
