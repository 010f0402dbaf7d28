import { Observable } from "rxjs/internal/Observable";
import { Subject } from "rxjs/internal/Subject";
import type { Tool, ToolResult } from "../core/tool.js";
import { clientResultFor, editedArgsOf } from "../tools/call-answers.js";
import { errorResult } from "../tools/define-tool.js";
import { releaseStallWatchdog } from "../actors/stall-watchdog.js";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import { checkOptionKeys } from "../core/option-keys.js";
import { type InputFilter, type PromptInput, RUN_OPTION_KEYS, type RunOptions } from "../core/options.js";
import type { OutputSpec } from "../core/output.js";
import { outputSpecOf } from "../rules/output.logic.js";
import { type RunOutcome, runOutcomeOf } from "../core/run-outcome.js";
import { screenInput, toMessages } from "../rules/agent.logic.js";
import { agentMachine } from "../machines/agent.machine.js";
import { toolCallActorOf, toolCallActorsOf } from "../machines/tool-call-actors.js";
import { readTranscript } from "../rules/transcript.js";
import { isWakeMessage } from "../rules/wake-message.js";
import { compactContext } from "../context/compact.js";
import { withLearnedWindow } from "../context/context-window.js";
import type {
  Agent,
  AgentActor,
  CompactNowOptions,
  CompactNowResult,
  AgentSnapshot,
  PendingApproval,
} from "./agent.js";
import { AgentLifecycle, dormantMessages, isIdle } from "./agent-lifecycle.js";
import { EventsUnavailableError, type RunEventLog, type SequencedEvent } from "./event-log.js";
import { stampSnapshot } from "./snapshot-version.js";
import { containObservable } from "../core/contained-observable.js";
import { runToolsOf, useRunTools } from "./agent-runtime.js";
import { nestedPending, routeNested } from "./nested-calls.js";

/**
 * An agent: the façade over its actor. While it hibernates (`agent.hibernate()`, or idle with
 * `hibernate: "whenIdle"`) it holds no actor at all, only its persisted snapshot as a JSON string;
 * what needs the actor wakes it (a new actor restored from the snapshot, the same id), and
 * `events$` stays the same stream throughout. Methods live on the prototype, so an idle agent
 * costs a few fields, not a closure per method. Its actor's life (made, resting, hibernating,
 * woken) is the base class's, `AgentLifecycle`; what is here is what apps call.
 *
 * @example
 * ```ts
 * const agent: Agent = new AgentSession(options, undefined, tools, undefined); // as createAgent does
 * ```
 */
export class AgentSession extends AgentLifecycle implements Agent {
  private eventStream: Observable<AgentEvent> | undefined;
  private readonly inputFilters: readonly InputFilter[] = this.options.inputFilters ?? [];
  /** The agent's output schema, in the form runs keep (`createAgent({ output })`). */
  private readonly outputSpec: OutputSpec | undefined =
    this.options.output === undefined ? undefined : outputSpecOf(this.options.output, "createAgent: output");
  private snapshotStream: Observable<AgentSnapshot> | undefined;
  private compacting = false;

  get events$(): Observable<AgentEvent> {
    return (this.eventStream ??= containObservable(this.events, "agent.events$"));
  }

  get snapshot$(): Observable<AgentSnapshot> {
    this.pinned = true;
    return (this.snapshotStream ??= containObservable(
      new Observable<AgentSnapshot>((subscriber) => {
        subscriber.next(this.awake().getSnapshot());
        const subscription = (this.snapshots ??= new Subject()).subscribe(subscriber);
        return () => subscription.unsubscribe();
      }),
      "agent.snapshot$",
    ));
  }

  get actor(): AgentActor {
    this.pinned = true;
    return this.awake();
  }

  get hibernated(): boolean {
    return this.dormant !== undefined;
  }

  get messages(): readonly AgentMessage[] {
    if (this.live) return readTranscript(this.live.getSnapshot().context.messages);
    if (this.resting) return readTranscript(this.resting.messages);
    // Not started yet: its transcript is the one it was given, as its actor's would be.
    if (!this.dormant && !this.stopped) return this.options.messages ?? [];
    return dormantMessages(this.dormant, this.options);
  }

  get runId(): string | undefined {
    return this.runLog?.runId ?? this.lastRunId;
  }

  eventsSince(runId: string, seq = 0): Observable<SequencedEvent> {
    if (!Number.isInteger(seq) || seq < 0) {
      throw new RangeError(`eventsSince: seq must be a whole number ≥ 0, got ${String(seq)}`);
    }
    const log = this.checkedLog(runId, seq);
    log.followed = true;
    return new Observable<SequencedEvent>((subscriber) => {
      // Taken when subscribed: what arrived since the call is part of the replay.
      if (this.runLog !== log || log.since(seq) === undefined) {
        subscriber.error(this.unavailable(runId, seq, log));
        return;
      }
      let next = seq;
      for (const event of log.since(seq)!) subscriber.next({ runId, seq: next++, event });
      if (log.ended) {
        subscriber.complete();
        return;
      }
      // The log records each event before subscribers get it: its last number is this event's.
      const live = this.events.subscribe({
        next: (event) => {
          if (this.runLog !== log) return;
          subscriber.next({ runId, seq: log.next - 1, event });
          if (event.type === "agent_end") subscriber.complete();
        },
        complete: () => subscriber.complete(),
      });
      return () => live.unsubscribe();
    });
  }

  get state(): string {
    return this.live ? stateName(this.live.getSnapshot().value) : "idle";
  }

  prompt(input: PromptInput, options?: RunOptions): Promise<RunOutcome<any>> {
    if (this.stopped) return Promise.reject(new Error("Agent is stopped"));
    let tools: ReadonlyMap<string, Tool>;
    let output: OutputSpec | undefined;
    try {
      tools = this.toolsOfRun("prompt", options);
      output = this.outputOfRun("prompt", options);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const actor = this.awake();
    if (!isIdle(actor)) return Promise.reject(new Error("Agent is already running"));
    const messages = toMessages(input, this.runtime.now());
    const done = this.nextRunEnd();
    this.useToolsUntil(tools, done);
    const screening = screenInput(this.inputFilters, messages);
    actor.send(
      screening.ok
        ? { type: "PROMPT", messages: screening.messages, ...(output && { outputSpec: output }) }
        : { type: "PROMPT_REJECTED", reason: screening.reason },
    );
    return done;
  }

  continue(options?: RunOptions): Promise<RunOutcome<any>> {
    if (this.stopped) return Promise.reject(new Error("Agent is stopped"));
    let tools: ReadonlyMap<string, Tool>;
    let output: OutputSpec | undefined;
    try {
      tools = this.toolsOfRun("continue", options);
      output = this.outputOfRun("continue", options);
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const actor = this.awake();
    if (!isIdle(actor)) return Promise.reject(new Error("Agent is already running"));
    const { context } = actor.getSnapshot();
    const last = context.messages.at(-1);
    if (!last) return Promise.reject(new Error("No messages to continue from"));
    const queued = context.steeringQueue.length + context.followUpQueue.length > 0;
    if (last.role === "assistant" && !queued) {
      return Promise.reject(new Error("Cannot continue from message role: assistant"));
    }
    const done = this.nextRunEnd();
    this.useToolsUntil(tools, done);
    actor.send({ type: "CONTINUE", ...(output && { outputSpec: output }) });
    return done;
  }

  waitForIdle(): Promise<void> {
    if (!this.live || isIdle(this.live)) return Promise.resolve();
    // A stopped agent runs no more: it is as idle as it will be.
    return this.nextRunEnd().then(
      () => undefined,
      (error: unknown) => {
        if (!this.stopped) throw error;
      },
    );
  }

  steer(input: string | AgentMessage): void {
    for (const message of this.screened(input)) this.awake().send({ type: "STEER", message });
  }

  followUp(input: string | AgentMessage): void {
    for (const message of this.screened(input)) this.awake().send({ type: "FOLLOW_UP", message });
  }

  get queued(): { steering: AgentMessage[]; followUp: AgentMessage[] } {
    const context = this.live?.getSnapshot().context ?? this.resting ?? this.dormantContext();
    return { steering: [...(context?.steeringQueue ?? [])], followUp: [...(context?.followUpQueue ?? [])] };
  }

  abort(): void {
    if (this.stopped) return;
    // An agent asleep (or not started) with nothing queued that an abort drops (a wake's message
    // stays queued) has nothing to abort: it stays asleep.
    if (!this.live) {
      const { steering, followUp } = this.queued;
      if ([...steering, ...followUp].every(isWakeMessage)) return;
    }
    const actor = this.awake();
    // Queues first: an aborted run must not take a queued message on its way out. A durable
    // agent's queue is its session's inbox, which hands back what its run did not take.
    if (!this.journal) actor.send({ type: "CLEAR_QUEUES" });
    actor.send({ type: "ABORT" });
  }

  async compact(options: CompactNowOptions = {}): Promise<CompactNowResult | undefined> {
    checkOptionKeys("compact", options, { focus: true, signal: true });
    if (options.focus !== undefined && typeof options.focus !== "string") {
      throw new TypeError(`compact: focus must be a string, got ${typeof options.focus}`);
    }
    if (this.stopped) throw new Error("Agent is stopped");
    if (this.journal)
      throw new Error("A durable agent compacts inside its runs: compact() is for in-memory agents");
    if (this.compacting) throw new Error("compact: a compaction of this agent is already going on");
    const before = this.awake();
    if (!isIdle(before)) throw new Error("Agent is running: compact() works on an idle agent");
    const context = before.getSnapshot().context;
    const config = withLearnedWindow(this.options.context, context.learnedMaxContextTokens);
    if (!config) throw new Error("compact: the agent has no context budget (createAgent({ context }))");
    const transcript = readTranscript(context.messages);
    const last = transcript.at(-1)?.id;
    this.compacting = true;
    try {
      // Asked for: compact even when it fits, and summarise (level 2) rather than only truncate.
      const result = await compactContext(transcript, config, {
        force: true,
        minLevel: 2,
        calibration: context.calibration,
        signal: options.signal,
        ...(options.focus?.trim() && { focus: options.focus.trim() }),
      });
      if (!result) return undefined;
      const actor = this.awake();
      const now = readTranscript(actor.getSnapshot().context.messages);
      if (!isIdle(actor) || now.length !== transcript.length || now.at(-1)?.id !== last) {
        throw new Error("compact: the agent ran while compacting; its transcript is left as it was");
      }
      actor.send({ type: "COMPACTED", result });
      const { level, tokensBefore, tokensAfter, summaryUsage } = result;
      return { level, tokensBefore, tokensAfter, ...(summaryUsage && { summaryUsage }) };
    } finally {
      this.compacting = false;
    }
  }

  stop(): void {
    // An agent stopped before it ever ran (or while resting) still gets its (stopped) actor:
    // `agent.actor` reads it.
    if (!this.live && !this.dormant && !this.stopped) this.start(undefined);
    this.stopped = true;
    releaseStallWatchdog(this.runtime);
    const actor = this.live;
    // XState lets only a parent stop a child actor; a child agent's owner (its tool call) stops it
    // the way a parent would, so it also leaves the tree's actor system.
    const stopActor = () => {
      if (this.options.parentActor) (actor as unknown as { _stop(): void } | undefined)?._stop();
      else actor?.stop();
    };
    // Called from a subscriber of a call's event (its tool_execution_end), inside that call's step:
    // the call still tells its parent it finished once the step is over, which a tree stopped now
    // would get as an event sent to a stopped actor (XState warns). The tree stops right after.
    if (this.publishing > 0) queueMicrotask(stopActor);
    else stopActor();
    this.events.complete();
    this.snapshots?.complete();
  }

  getPersistedSnapshot(): unknown {
    if (this.live) {
      return stampSnapshot(JSON.parse(JSON.stringify(this.live.getPersistedSnapshot())), agentMachine);
    }
    if (this.dormant?.json !== undefined) return stampSnapshot(JSON.parse(this.dormant.json), agentMachine);
    // Asleep since it was created: its snapshot is its actor's first one.
    return stampSnapshot(
      JSON.parse(JSON.stringify(this.awake().getPersistedSnapshot())),
      agentMachine,
    ) as unknown;
  }

  pendingApprovals(): PendingApproval[] {
    const nested = nestedPending(this.runtime, "approvals");
    if (!this.live) return nested;
    const own: PendingApproval[] = toolCallActorsOf(this.live)
      .map((child) => child.getSnapshot())
      .filter((snapshot) => snapshot.status === "active" && snapshot.matches?.("awaitingApproval"))
      .map(({ context }) => ({
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: context.args,
      }));
    return nested.length ? [...own, ...nested] : own;
  }

  pendingToolCalls(): PendingApproval[] {
    const nested = nestedPending(this.runtime, "toolCalls");
    if (!this.live) return nested;
    const own: PendingApproval[] = toolCallActorsOf(this.live)
      .map((child) => child.getSnapshot())
      .filter((snapshot) => snapshot.status === "active" && snapshot.matches?.("awaitingResult"))
      .map(({ context }) => ({
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: "args" in context.validation ? context.validation.args : context.args,
      }));
    return nested.length ? [...own, ...nested] : own;
  }

  resolveToolCall(toolCallId: string, result: string | ToolResult): void {
    const route = this.nestedRoute(toolCallId);
    if (route) return route.child.resolveToolCall(route.rest, result);
    const checked = clientResultFor(toolCallId, result);
    if (typeof checked === "string") throw new TypeError(checked);
    this.answerClientCall(toolCallId, checked);
  }

  rejectToolCall(toolCallId: string, reason: string): void {
    const route = this.nestedRoute(toolCallId);
    if (route) return route.child.rejectToolCall(route.rest, reason);
    this.answerClientCall(toolCallId, errorResult(String(reason)));
  }

  private answerClientCall(toolCallId: string, result: ToolResult): void {
    const child = this.live ? toolCallActorOf(this.live, toolCallId) : undefined;
    const snapshot = child?.getSnapshot();
    if (!child || snapshot.status !== "active") {
      throw new Error(
        `No tool call "${toolCallId}" waits for a client result: it is unknown or already answered`,
      );
    }
    if (!snapshot.matches("awaitingResult")) {
      throw new Error(
        `Tool call "${toolCallId}" is not waiting for a client result (its tool is not client-run, or it waits for approval first)`,
      );
    }
    child.send({ type: "RESULT_PROVIDED", result });
  }

  approve(toolCallId: string, options?: { args?: unknown }): void {
    const route = this.nestedRoute(toolCallId);
    if (route) return route.child.approve(route.rest, options);
    this.decide(toolCallId, { type: "APPROVE", ...(options?.args !== undefined && { args: options.args }) });
  }

  deny(toolCallId: string, reason?: string): void {
    const route = this.nestedRoute(toolCallId);
    if (route) return route.child.deny(route.rest, reason);
    this.decide(toolCallId, { type: "DENY", reason });
  }

  /**
   * The sub-agent a call id leads to when it names a call waiting in one (`parentCall/childCall`)
   * and none of this agent's own calls.
   */
  private nestedRoute(toolCallId: string) {
    if (typeof toolCallId !== "string") return undefined;
    if (this.live && toolCallActorOf(this.live, toolCallId)) return undefined;
    return routeNested(this.runtime, toolCallId);
  }

  /** The tools a run starting with these options sees (throws a `TypeError` for bad options). */
  private toolsOfRun(where: string, options: RunOptions | undefined): ReadonlyMap<string, Tool> {
    if (options !== undefined && (options === null || typeof options !== "object")) {
      throw new TypeError(
        `${where}: run options must be an object, got ${options === null ? "null" : typeof options}`,
      );
    }
    checkOptionKeys(where, options, RUN_OPTION_KEYS);
    const base = this.runtime.baseTools;
    return options?.tools === undefined ? base : runToolsOf(base, options.tools);
  }

  /** The run's output schema: its own (`options.output`), else the agent's. */
  private outputOfRun(where: string, options: RunOptions | undefined): OutputSpec | undefined {
    return options?.output !== undefined ? outputSpecOf(options.output, `${where}: output`) : this.outputSpec;
  }

  /** The run sees `tools` until it ends; then the agent's own again (unless a newer run set its own). */
  private useToolsUntil(tools: ReadonlyMap<string, Tool>, end: Promise<RunOutcome>): void {
    useRunTools(this.runtime, tools);
    if (tools === this.runtime.baseTools) return;
    void end.then(() => {
      if (this.runtime.tools === tools) useRunTools(this.runtime, this.runtime.baseTools);
    });
  }

  /** The log that holds `seq` of run `runId`, or the error that says why there is none. */

  private checkedLog(runId: string, seq: number): RunEventLog {
    const log = this.runLog;
    if (!log || log.runId !== runId || seq < log.oldestSeq) throw this.unavailable(runId, seq, log);
    if (seq > log.next) {
      throw new RangeError(
        `eventsSince: run "${runId}" has published ${log.next} events so far (seq 0 to ${log.next - 1}); ` +
          `seq ${seq} is not reached yet`,
      );
    }
    return log;
  }

  private unavailable(runId: string, seq: number, log: RunEventLog | undefined): EventsUnavailableError {
    const known = log?.runId === runId;
    const gone = !log && this.lastRunId === runId;
    return new EventsUnavailableError(
      known
        ? `The events of run "${runId}" from seq ${seq} are no longer kept (the oldest kept is ` +
            `${log!.oldestSeq}): resynchronise from the messages (error.messages), then follow live events`
        : gone
          ? `The events of run "${runId}" are no longer kept (the agent let them go when it went idle, ` +
            `as nothing had followed them): resynchronise from the messages (error.messages), then follow live events`
          : `Run "${runId}" is not this agent's current or last run (${
              log ? `that is "${log.runId}"` : "it has not run since it was created, restored or woken"
            }): resynchronise from the messages (error.messages), then follow live events`,
      runId,
      seq,
      known ? log!.oldestSeq : undefined,
      [...this.messages],
    );
  }

  private nextRunEnd(): Promise<RunOutcome> {
    const end = new Promise<RunOutcome>((resolve, reject) => {
      const failures = (this.failures ??= new Set());
      let rejection: string | undefined;
      const endBefore = this.lastEnd;
      const outcomeOf = (event: AgentEventOf<"agent_end">) =>
        runOutcomeOf(event, event.rejection ?? (event.reason === "rejected" ? rejection : undefined));
      const settled = () => {
        failures.delete(reject);
        // An idle agent keeps no empty set around.
        if (failures.size === 0 && this.failures === failures) this.failures = undefined;
      };
      const subscription = this.events.subscribe({
        next: (event) => {
          if (event.type === "input_rejected") rejection = event.reason;
          if (event.type !== "agent_end") return;
          subscription.unsubscribe();
          settled();
          resolve(outcomeOf(event));
        },
        // `stop()` during the run: no agent_end comes, and whoever waits for one is told why. A
        // subscriber before this one that stopped the agent on the run's agent_end leaves it here.
        complete: () => {
          settled();
          const end = this.lastEnd;
          if (end !== undefined && end !== endBefore) resolve(outcomeOf(end));
          else reject(new Error("Agent is stopped: the run was stopped before it ended"));
        },
      });
      failures.add(reject);
    });
    // Whoever awaits the run gets its rejection; an app that let the promise go (`void
    // agent.prompt(...)`, then `stop()` as it shuts down) is not ended by an unhandled rejection.
    end.catch(() => {});
    return end;
  }

  private decide(
    toolCallId: string,
    event: { type: "APPROVE"; args?: unknown } | { type: "DENY"; reason?: string },
  ) {
    const child = this.live ? toolCallActorOf(this.live, toolCallId) : undefined;
    const snapshot = child?.getSnapshot();
    if (!child || snapshot.status !== "active") {
      throw new Error(`No pending approval for tool call "${toolCallId}": it is unknown or already finished`);
    }
    if (!snapshot.matches("awaitingApproval")) {
      throw new Error(
        `Tool call "${toolCallId}" is not waiting for approval (already decided or never asked)`,
      );
    }
    const { toolName } = snapshot.context as { toolName: string };
    if (event.type === "APPROVE" && event.args !== undefined) {
      const checked = editedArgsOf(toolCallId, toolName, this.runtime.tools.get(toolName), event.args);
      if (!checked.ok) throw new TypeError(checked.refusal);
      event = { type: "APPROVE", args: checked.args };
    }
    this.emit({
      type: "approval_decided",
      toolCallId,
      toolName,
      approved: event.type === "APPROVE",
      ...(event.type === "APPROVE" && event.args !== undefined && { editedArgs: event.args }),
    });
    // A subscriber of approval_decided may have aborted or stopped the agent: the call is answered
    // (as aborted) already, and a stopped actor takes no event (XState warns).
    if (child.getSnapshot().status === "active") child.send(event);
  }

  private screened(input: string | AgentMessage) {
    const screening = screenInput(this.inputFilters, toMessages(input, this.runtime.now()));
    if (!screening.ok) this.emit({ type: "input_rejected", reason: screening.reason });
    return screening.ok ? screening.messages : [];
  }
}

// Methods that apps hand around (`onClick={agent.abort}`, `const { prompt } = agent`) keep their
// agent: each is read through a getter that returns it bound, made on each read, so an idle agent
// still holds no function of its own.
for (const name of [
  "prompt",
  "continue",
  "waitForIdle",
  "steer",
  "followUp",
  "abort",
  "compact",
  "stop",
  "hibernate",
  "getPersistedSnapshot",
  "pendingApprovals",
  "eventsSince",
  "resolveToolCall",
  "rejectToolCall",
  "pendingToolCalls",
  "approve",
  "deny",
] as const) {
  const method = AgentSession.prototype[name] as (...args: unknown[]) => unknown;
  Object.defineProperty(AgentSession.prototype, name, {
    get(this: AgentSession) {
      return (...args: unknown[]) => method.apply(this, args);
    },
  });
}

function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${stateName(child)}`;
}
