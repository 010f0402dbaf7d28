// A durable session on Restate, followed from another process (the session host, a durable handle). Restate keeps the transcript (written
// when a turn ends) and the session's status (the run, the calls waiting for approval or for the
// client, how the last run ended), not the events of a run: this backend polls both through the
// session client while a run goes on and publishes the agent events they imply, so the protocol
// encoders and the host's quiescence, reconnect and side routes work as for an in-process agent.
// What that costs in fidelity (text per message, not per token; a waiting call seen before its
// turn's message) is in docs/frontends.md, "Durable threads".
import { Observable, Subject } from "rxjs";
import type { PendingApproval } from "../agent/agent.js";
import { EventsUnavailableError, type SequencedEvent } from "../agent/event-log.js";
import { AgentCallError } from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import {
  type AgentMessage,
  type AssistantMessage,
  emptyUsage,
  type ToolResultMessage,
  type UserMessage,
} from "../core/messages.js";
import type { ToolResult } from "../core/tool.js";
import { clientResultOf } from "../tools/client-result.js";
import type { SessionClient } from "./session-client.js";
import type { SessionStatus, SessionUpdates } from "./session-types.js";

/** Events kept for a reconnect, per run (message-level events: a run rarely has more than a few hundred). */
const MAX_BUFFERED_EVENTS = 10_000;

/**
 * A follower of durable session `sessionId`, polling every `pollIntervalMs` while a run goes on
 * (not at all while the session is idle and nothing was asked of it). Internal: the durable handle
 * and the session host's backend are built on it.
 */
export function createSessionFollower(
  client: SessionClient,
  sessionId: string,
  pollIntervalMs: number,
): SessionFollower {
  return new SessionFollower(client, sessionId, pollIntervalMs);
}

interface Decision {
  approved: boolean;
  editedArgs?: unknown;
}

export class SessionFollower {
  readonly local = undefined;
  private readonly subject = new Subject<AgentEvent>();
  private readonly live = new Subject<SequencedEvent>();
  private stored: AgentMessage[] = [];
  private readonly seen = new Set<string>();
  private generation = -1;
  private status: SessionStatus | undefined;
  private currentRun: string | undefined;
  private active = false;
  /** The prompt sent, until the transcript stores it (the first turn's end). */
  private prompted: UserMessage | undefined;
  private buffer: SequencedEvent[] = [];
  private seq = -1;
  private turn = 0;
  private turnOpen = false;
  private turnMessage: AssistantMessage | undefined;
  private turnResults: ToolResultMessage[] = [];
  /** The calls of the turn's message, waiting for their results. */
  private turnCalls = new Set<string>();
  /** A turn's waiting calls, announced before the turn's message is stored. */
  private placeholder: AssistantMessage | undefined;
  private readonly started = new Set<string>();
  private readonly requested = new Set<string>();
  private readonly decided = new Map<string, Decision>();
  private readonly answered = new Set<string>();
  private readonly ended = new Set<string>();
  private readonly queue: { steering: AgentMessage[]; followUp: AgentMessage[] } = {
    steering: [],
    followUp: [],
  };
  private ticking: Promise<void> = Promise.resolve();
  private following = false;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly client: SessionClient,
    private readonly sessionId: string,
    private readonly pollIntervalMs: number,
  ) {}

  // --- what the host reads ---

  get events$(): Observable<AgentEvent> {
    return this.subject.asObservable();
  }

  /**
   * Restate's transcript, with what this host knows is on its way to it: the prompt of the run
   * (stored when its first turn ends), and the calls the turn in progress waits on.
   */
  get messages(): readonly AgentMessage[] {
    if (!this.prompted && !this.placeholder) return this.stored;
    return [
      ...this.stored,
      ...(this.prompted ? [this.prompted] : []),
      ...(this.placeholder ? [this.placeholder] : []),
    ];
  }

  get state(): string {
    return this.active ? "running" : "idle";
  }

  get runId(): string | undefined {
    return this.currentRun;
  }

  get queued() {
    return { steering: this.queue.steering.slice(), followUp: this.queue.followUp.slice() };
  }

  pendingApprovals(): PendingApproval[] {
    return (this.status?.pendingApprovals ?? []).filter((p) => !this.decided.has(p.toolCallId));
  }

  pendingToolCalls(): PendingApproval[] {
    return (this.status?.pendingToolCalls ?? []).filter((p) => !this.answered.has(p.toolCallId));
  }

  eventsSince(runId: string, seq: number): Observable<SequencedEvent> {
    const oldest = this.buffer[0]?.seq;
    if (runId !== this.currentRun || oldest === undefined || seq < oldest) {
      throw new EventsUnavailableError(
        `the events of run ${runId} from ${seq} are not kept by this host`,
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
      const subscription = this.live.subscribe((item) => {
        if (item.runId !== runId) return;
        subscriber.next(item);
        if (item.event.type === "agent_end") subscriber.complete();
      });
      return () => subscription.unsubscribe();
    });
  }

  persistedSnapshot(): unknown {
    return undefined;
  }

  // --- what the host asks ---

  async start(given: UserMessage): Promise<string | undefined> {
    // Client-run tools a request declares (AG-UI's RunAgentInput.tools) are not sent: a durable
    // run's tools are the service's (defineClientTool there), fixed so that its journal replays.
    // The prompt gets an id here when the client gave none, so its stored copy is known as it.
    const message = withId(given, "prompt");
    let handle;
    try {
      handle = await this.client.send(this.sessionId, message, {
        ...(message.id !== undefined && { idempotencyKey: `${this.sessionId}/${message.id}` }),
      });
    } catch (error) {
      return messageOf(error);
    }
    // As the run stores it (a prompt's source is the run's to set), so a client that keeps what
    // it was shown holds the server's message.
    this.prompted = { ...message, source: "prompt" };
    this.seen.add(message.id);
    this.beginRun(handle.invocationId);
    this.openTurn();
    this.publishMessage(this.prompted);
    this.follow();
    return undefined;
  }

  async steer(given: UserMessage): Promise<void> {
    const message = withId(given, "steer");
    await this.call(() => this.client.steer(this.sessionId, message));
    this.queue.steering.push(message);
    this.follow();
  }

  async followUp(given: UserMessage): Promise<void> {
    const message = withId(given, "follow-up");
    await this.call(() => this.client.followUp(this.sessionId, message));
    this.queue.followUp.push(message);
    this.follow();
  }

  async abort(): Promise<boolean> {
    const aborted = await this.call(() => this.client.abort(this.sessionId));
    this.follow();
    return aborted;
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
      await this.call(() =>
        this.client.approve(this.sessionId, answer.toolCallId, { args: answer.args, dryRun: true }),
      );
    }
  }

  async approve(toolCallId: string, args: unknown): Promise<void> {
    const pending = this.pendingApprovals().find((p) => p.toolCallId === toolCallId);
    await this.call(() =>
      this.client.approve(this.sessionId, toolCallId, args === undefined ? undefined : { args }),
    );
    this.decide(toolCallId, pending?.toolName ?? "", { approved: true, editedArgs: args });
  }

  async deny(toolCallId: string, reason: string | undefined): Promise<void> {
    const pending = this.pendingApprovals().find((p) => p.toolCallId === toolCallId);
    await this.call(() => this.client.deny(this.sessionId, toolCallId, reason));
    this.decide(toolCallId, pending?.toolName ?? "", { approved: false });
  }

  async resolveToolCall(toolCallId: string, result: string | ToolResult): Promise<void> {
    const pending = this.pendingToolCalls().find((p) => p.toolCallId === toolCallId);
    await this.call(() => this.client.resolveToolCall(this.sessionId, toolCallId, result));
    const content = typeof result === "string" ? [{ type: "text" as const, text: result }] : result.content;
    this.answer(
      toolCallId,
      pending?.toolName ?? "",
      {
        content,
        ...(typeof result !== "string" && result.details !== undefined && { details: result.details }),
      },
      typeof result !== "string" && result.isError === true,
    );
  }

  async rejectToolCall(toolCallId: string, reason: string): Promise<void> {
    const pending = this.pendingToolCalls().find((p) => p.toolCallId === toolCallId);
    await this.call(() => this.client.rejectToolCall(this.sessionId, toolCallId, reason));
    this.answer(toolCallId, pending?.toolName ?? "", { content: [{ type: "text", text: reason }] }, true);
  }

  refresh(): Promise<void> {
    return this.tick();
  }

  stop(): void {
    this.stopped = true;
  }

  // --- polling ---

  /** One poll, after any other in progress (polls never overlap). */
  private tick(): Promise<void> {
    const next = this.ticking.then(() => this.poll());
    this.ticking = next.catch(() => undefined);
    return next;
  }

  private async poll(): Promise<void> {
    let answer: SessionUpdates;
    try {
      answer = await this.client.updates(this.sessionId, { from: this.stored.length });
      if (this.generation !== -1 && answer.status.generation !== this.generation) {
        // A compaction rewrote the transcript: read it whole (what it replaced is not announced).
        answer = await this.client.updates(this.sessionId, { from: 0 });
        this.stored = [];
      }
    } catch (error) {
      // A session that never ran: nothing to show yet (its first run may be on its way).
      if ((error as { status?: number }).status === 404) return;
      throw unavailable(error);
    }
    this.failing = false;
    this.apply(answer);
  }

  /** Polls while a run goes on, until it ends (or the host stops). */
  private follow(): void {
    if (this.following || this.stopped) return;
    this.following = true;
    void (async () => {
      while (this.active && !this.stopped) {
        await new Promise((resolve) => setTimeout(resolve, this.pollIntervalMs));
        try {
          await this.tick();
        } catch (error) {
          // Restate unreachable for a while (a restart): keep polling, say so once.
          if (!this.failing)
            console.error(`agent-machine/http: polling session ${this.sessionId} failed`, error);
          this.failing = true;
        }
      }
      this.following = false;
    })();
  }

  /** Publishes what changed since the last poll. */
  private apply(answer: SessionUpdates): void {
    const { status } = answer;
    const first = this.generation === -1;
    this.generation = status.generation;
    this.status = status;
    const fresh = answer.messages;
    this.stored = [...this.stored.slice(0, answer.from), ...fresh];
    if (first && this.active) {
      // The first poll of a session this host just started: its messages before the run are history.
      const runStart = answer.runStart ?? 0;
      this.stored.forEach((m, i) => {
        if (i < runStart && m.id !== undefined) this.seen.add(m.id);
      });
    } else if (first) {
      // Woken now: a run in progress is followed from its first message, the rest is history.
      const runStart =
        status.state === "running" ? (answer.runStart ?? this.stored.length) : this.stored.length;
      this.stored.forEach((m, i) => {
        if (i < runStart && m.id !== undefined) this.seen.add(m.id);
      });
      this.currentRun = status.runId;
      if (status.state === "running") {
        this.beginRun(status.runId);
        this.follow();
      }
    } else if (!this.active && status.state === "running" && status.runId !== this.currentRun) {
      // A run another client started.
      this.beginRun(status.runId);
      this.follow();
    }
    if (this.active) {
      for (const message of this.stored) if (!this.seen.has(message.id ?? "")) this.onMessage(message);
      this.onWaiting([
        ...this.pendingApprovals().map((call) => ({ call, type: "approval_requested" as const })),
        ...this.pendingToolCalls().map((call) => ({ call, type: "tool_result_requested" as const })),
      ]);
      if (status.state === "idle" && status.lastRun?.runId === this.currentRun) this.endRun(status);
    } else {
      for (const message of this.stored) if (message.id !== undefined) this.seen.add(message.id);
    }
    if (this.prompted && this.stored.some((m) => m.id === this.prompted?.id)) this.prompted = undefined;
  }

  // --- the events a poll implies ---

  private beginRun(runId: string): void {
    this.currentRun = runId;
    this.active = true;
    this.turn = 0;
    this.turnOpen = false;
    this.turnMessage = undefined;
    this.placeholder = undefined;
    for (const set of [this.started, this.requested, this.answered, this.ended]) set.clear();
    this.decided.clear();
    this.publish({ type: "agent_start" });
  }

  private endRun(status: SessionStatus): void {
    this.closeTurn();
    this.active = false;
    this.prompted = undefined;
    this.placeholder = undefined;
    const last = status.lastRun!;
    this.publish({
      type: "agent_end",
      messages: this.stored.slice(),
      reason: last.reason,
      usage: last.usage ?? emptyUsage(),
      ...(last.errorMessage !== undefined && { errorMessage: last.errorMessage }),
      ...(last.output !== undefined && { output: last.output }),
    });
  }

  private openTurn(): void {
    if (this.turnOpen) return;
    this.turn += 1;
    this.turnOpen = true;
    this.turnMessage = undefined;
    this.turnResults = [];
    this.turnCalls = new Set();
    this.publish({ type: "turn_start", turn: this.turn });
  }

  private closeTurn(): void {
    if (!this.turnOpen) return;
    this.turnOpen = false;
    if (this.turnMessage) {
      this.publish({
        type: "turn_end",
        turn: this.turn,
        message: this.turnMessage,
        toolResults: this.turnResults,
      });
    }
  }

  private onMessage(message: AgentMessage): void {
    this.seen.add(message.id ?? "");
    for (const kind of ["steering", "followUp"] as const) {
      this.queue[kind] = this.queue[kind].filter((m) => m.id !== message.id);
    }
    switch (message.role) {
      case "assistant":
        this.onAssistant(message);
        return;
      case "toolResult":
        this.onResult(message);
        return;
      case "user":
        if (this.turnMessage) this.closeTurn();
        this.openTurn();
        this.publishMessage(message);
        return;
      default:
        this.publishMessage(message);
    }
  }

  private onAssistant(message: AssistantMessage): void {
    const announced = this.placeholder !== undefined;
    this.placeholder = undefined;
    if (this.turnMessage) this.closeTurn();
    this.openTurn();
    // The turn's waiting calls were shown before the message was stored: what else it holds
    // follows them (an in-process agent shows it first), and they are not shown twice.
    if (!announced) this.publish({ type: "message_start", message: { ...message, content: [] } });
    const content: AssistantMessage["content"] = [];
    for (const block of message.content) {
      content.push(block);
      const partial = { ...message, content: content.slice() };
      if (block.type === "text") {
        this.publish({ type: "message_update", message: partial, kind: "text_delta", delta: block.text });
      } else if (block.type === "thinking") {
        this.publish({
          type: "message_update",
          message: partial,
          kind: "thinking_delta",
          delta: block.thinking,
        });
      } else if (!this.started.has(block.id)) {
        this.publishCall(partial, block.id);
      }
    }
    const shown = message.content.filter((c) => c.type !== "toolCall" || !this.requested.has(c.id));
    this.publish({ type: "message_end", message: announced ? { ...message, content: shown } : message });
    this.turnMessage = message;
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      if (!this.ended.has(block.id)) this.turnCalls.add(block.id);
      this.startCall(block.id, block.name, block.arguments);
    }
    if (this.turnCalls.size === 0) this.closeTurn();
  }

  private onResult(message: ToolResultMessage): void {
    const id = message.toolCallId;
    if (this.requested.has(id) && !this.decided.has(id) && !this.answered.has(id) && this.isApproval(id)) {
      // Decided by another client: a denial is told by the text the model reads.
      const denied = message.isError && /^The user denied this tool call/.test(textOf(message));
      this.decide(id, message.toolName, { approved: !denied });
    }
    if (!this.ended.has(id)) {
      this.ended.add(id);
      this.publish({
        type: "tool_execution_end",
        toolCallId: id,
        toolName: message.toolName,
        result: {
          content: message.content,
          ...(message.details !== undefined && { details: message.details }),
        },
        isError: message.isError,
      });
    }
    this.publishMessage(message);
    this.turnResults.push(message);
    this.turnCalls.delete(id);
    if (this.turnMessage && this.turnCalls.size === 0) this.closeTurn();
  }

  /**
   * Calls waiting for approval or for the client, seen in the status. Their turn's message is
   * stored only when the turn ends: calls not seen in a message yet are shown now, on their own
   * (an assistant message with no id holding just them).
   */
  private onWaiting(
    waiting: { call: PendingApproval; type: "approval_requested" | "tool_result_requested" }[],
  ): void {
    const fresh = waiting.filter(({ call }) => !this.requested.has(call.toolCallId));
    if (fresh.length === 0) return;
    for (const { call, type } of fresh) {
      this.requested.add(call.toolCallId);
      this.approvalCalls.set(call.toolCallId, type === "approval_requested");
    }
    const unseen = fresh.filter(({ call }) => !this.started.has(call.toolCallId));
    if (unseen.length > 0) {
      if (this.turnMessage) this.closeTurn();
      this.openTurn();
      let message = placeholderMessage(this.nextMintedId());
      this.publish({ type: "message_start", message });
      for (const { call } of unseen) {
        message = {
          ...message,
          content: [
            ...message.content,
            { type: "toolCall", id: call.toolCallId, name: call.toolName, arguments: argsOf(call.args) },
          ],
        };
        this.publishCall(message, call.toolCallId);
      }
      this.publish({ type: "message_end", message });
      this.placeholder = message;
      for (const { call } of unseen) this.startCall(call.toolCallId, call.toolName, call.args);
    }
    for (const { call, type } of fresh) {
      this.publish({ type, toolCallId: call.toolCallId, toolName: call.toolName, args: call.args });
    }
  }

  private readonly approvalCalls = new Map<string, boolean>();

  /**
   * The id the run will give the message of the turn in progress: a durable run counts the ids
   * it mints under its invocation id (`<runId>-<n>`, base 36; prompts and steers sent here carry
   * ids of their own), so the next is one past the highest stored. Announced under it, the
   * waiting calls are the same message before and after it is stored.
   */
  private nextMintedId(): string {
    const prefix = `${this.currentRun}-`;
    let next = 0;
    for (const message of this.stored) {
      const rest = message.id?.startsWith(prefix) ? message.id.slice(prefix.length) : "";
      if (/^[0-9a-z]+$/.test(rest)) next = Math.max(next, parseInt(rest, 36) + 1);
    }
    return `${prefix}${next.toString(36)}`;
  }

  private isApproval(toolCallId: string): boolean {
    return this.approvalCalls.get(toolCallId) === true;
  }

  private publishCall(message: AssistantMessage, toolCallId: string): void {
    this.publish({ type: "message_update", message, kind: "toolcall_start", delta: "", toolCallId });
    this.publish({ type: "message_update", message, kind: "toolcall_end", delta: "", toolCallId });
  }

  private startCall(toolCallId: string, toolName: string, args: unknown): void {
    if (this.started.has(toolCallId)) return;
    this.started.add(toolCallId);
    this.publish({ type: "tool_execution_start", toolCallId, toolName, args });
  }

  /** A decision Restate took (from this host, or seen in the transcript). */
  private decide(toolCallId: string, toolName: string, decision: Decision): void {
    if (this.decided.has(toolCallId)) return;
    this.decided.set(toolCallId, decision);
    if (!this.active) return;
    this.publish({
      type: "approval_decided",
      toolCallId,
      toolName,
      approved: decision.approved,
      ...(decision.editedArgs !== undefined && { editedArgs: decision.editedArgs }),
    });
  }

  /** A client-run call's answer Restate took: the call ends now (its message comes with the turn). */
  private answer(toolCallId: string, toolName: string, result: ToolResult, isError: boolean): void {
    this.answered.add(toolCallId);
    if (!this.active || this.ended.has(toolCallId)) return;
    this.ended.add(toolCallId);
    this.publish({ type: "tool_execution_end", toolCallId, toolName, result, isError });
  }

  private publishMessage(message: AgentMessage): void {
    this.publish({ type: "message_start", message });
    this.publish({ type: "message_end", message });
  }

  private publish(event: AgentEvent): void {
    if (event.type === "agent_start") {
      this.seq = 0;
      this.buffer = [];
    } else {
      this.seq += 1;
    }
    const item: SequencedEvent = { runId: this.currentRun!, seq: this.seq, event };
    this.buffer.push(item);
    if (this.buffer.length > MAX_BUFFERED_EVENTS) this.buffer.shift();
    this.subject.next(event);
    this.live.next(item);
  }

  /** A call through the session client; what Restate refuses becomes the host's 4xx. */
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

function placeholderMessage(id: string): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    stopReason: "toolUse",
    usage: emptyUsage(),
    timestamp: Date.now(),
    id,
  };
}

/** The message with an id (`<kind>-<uuid>` when it had none), so its stored copy is known as it. */
function withId(message: UserMessage, kind: string): UserMessage & { id: string } {
  return { ...message, id: message.id ?? `${kind}-${crypto.randomUUID()}` };
}

function argsOf(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}

function textOf(message: ToolResultMessage): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
