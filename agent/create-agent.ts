import { Observable, Subject } from "rxjs";
import { type Actor, createActor, type SnapshotFrom, toObserver } from "xstate";
import { resolveContextConfig } from "../context/config.js";
import { MessageIds, newMessageId, PROCESS_MESSAGE_IDS, withMessageIds } from "../core/message-id.js";
import { checkEditedArgs } from "../actors/prepare-tool-call.actor.js";
import {
  DEFAULT_EVENT_REPLAY,
  EventsUnavailableError,
  RunEventLog,
  type SequencedEvent,
} from "./event-log.js";
import { screenInput, toMessages } from "../machines/agent.logic.js";
import { type AgentContext, agentMachine } from "../machines/agent.machine.js";
import { journaledAgentMachine } from "../machines/journaled-agent.machine.js";
import { toolCallActorOf, toolCallActorsOf } from "../machines/tool-call-actors.js";
import { resumeToolCall } from "../actors/tool-call.machine.js";
import { releaseStallWatchdog } from "../actors/stall-watchdog.js";
import { readTranscript } from "../machines/transcript.js";
import { createLlmMessages } from "../core/llm-messages.js";
import { checkedBudget, type Tool, toToolSpec } from "../tools/define-tool.js";
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from "../tools/result-budget.js";
import type { EffectJournal } from "../core/effect-journal.js";
import type { AgentEvent } from "../core/events.js";
import { type AgentMessage, defaultConvertToLlm } from "../core/messages.js";
import type { AgentOptions, EventReplayOptions, InputFilter, PromptInput } from "../core/options.js";
import { type RunOutcome, runOutcomeOf } from "../core/run-outcome.js";
import { type AgentRuntime, bindRuntime, defaultRetryPolicy, defaultStallTimeout } from "../core/runtime.js";
import { attachTelemetry, moveTelemetry } from "../telemetry/attach.js";
import type { PersistedSnapshotData } from "../core/snapshot-version.js";
import type { ToolSpec } from "../providers/provider.js";
import { checkAgentOptions } from "./check-agent-options.js";
import { BUILT_IN_MIGRATIONS } from "./snapshot-migrations.js";
import { prepareSnapshotForRestore, stampSnapshot } from "./snapshot-version.js";

export type AgentActor = Actor<typeof agentMachine>;
export type AgentSnapshot = SnapshotFrom<typeof agentMachine>;

/** A tool call waiting for `approve` / `deny`. */
export interface PendingApproval {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** A running agent: an XState actor plus the observables and methods apps use. */
export interface Agent {
  readonly id: string;
  /** Every event of every run (hot: subscribe before you prompt). */
  readonly events$: Observable<AgentEvent>;
  /** The current machine snapshot on subscribe, then every new one. */
  readonly snapshot$: Observable<AgentSnapshot>;
  /**
   * The XState actor itself (inspect it, `waitFor` it, send it events). Reading it wakes a
   * hibernated agent; a hibernating agent gets a new actor each time it wakes.
   */
  readonly actor: AgentActor;
  /** The transcript so far (the live array: copy it to keep a version). A hibernated agent reads it from its snapshot. */
  readonly messages: readonly AgentMessage[];
  /** The active state, e.g. `"idle"` or `"running.executing"`. */
  readonly state: string;
  /**
   * Starts a run; resolves with its outcome at `agent_end`, whatever it is (`reason`, the run's new
   * `messages`, `usage`, `errorMessage`): a failed run resolves with `reason: "error"`, it does not
   * reject. Rejects only when the run cannot start (the agent is running or stopped).
   */
  prompt(input: PromptInput): Promise<RunOutcome>;
  /**
   * Runs again from the current transcript (its last message must not be the assistant's, unless a
   * message is queued); resolves with the run's outcome, as `prompt` does.
   */
  continue(): Promise<RunOutcome>;
  /** Resolves when the agent is idle. */
  waitForIdle(): Promise<void>;
  /**
   * Queues a message the agent takes after the current turn (or tool group); a sequential run
   * skips its remaining calls. On an idle agent it waits for the next run (`prompt` or
   * `continue`), which takes it in its first turn, right after the prompt; it starts no run.
   */
  steer(input: string | AgentMessage): void;
  /**
   * Queues a message the agent takes when it would otherwise stop. On an idle agent it waits for
   * the next run, which takes it when it would otherwise stop; it starts no run (`continue()`
   * starts one with it).
   */
  followUp(input: string | AgentMessage): void;
  /** What `steer` and `followUp` queued that no turn has taken yet (copies). */
  readonly queued: { steering: AgentMessage[]; followUp: AgentMessage[] };
  /**
   * Stops the current run (the stream and every running tool are aborted and every open call is
   * answered) and drops every queued steering and follow-up message. On an idle agent it only
   * drops what is queued.
   */
  abort(): void;
  /** Stops the actor for good (aborting anything running) and completes `events$`. */
  stop(): void;
  /**
   * A JSON-safe snapshot, stamped with the machine version that wrote it (`snapshotVersion`);
   * `createAgent({ ...options, snapshot })` resumes it, mid-run too, in this release or a later one.
   */
  getPersistedSnapshot(): unknown;
  /** Calls waiting for approval. */
  pendingApprovals(): PendingApproval[];
  /**
   * Releases the actor tree and keeps only the persisted snapshot (the agent must be idle; throws
   * while it runs, and for sub-agents and durable agents). The next call that needs the actor
   * wakes it transparently: same id, same transcript and queues, and `events$` subscribers keep
   * receiving. `createAgent({ hibernate: "whenIdle" })` does this whenever the agent is idle.
   */
  hibernate(): void;
  /** The agent is hibernating: it holds no actor, only its persisted snapshot. */
  readonly hibernated: boolean;
  /**
   * The id of the run in progress, or of the last one until the agent rests, hibernates or runs
   * again; `undefined` before the first run. With `eventsSince` it resumes a consumer that lost its
   * connection.
   */
  readonly runId: string | undefined;
  /**
   * The events of run `runId` from sequence number `seq` (0 = its `agent_start`), then its live ones,
   * completing after its `agent_end`. Each comes with its `seq`, so a consumer that reconnects asks
   * for `lastSeq + 1`. Throws {@link EventsUnavailableError} (carrying the transcript to
   * resynchronise from) when the run is not the agent's current or last one, or its events from
   * `seq` left the bounded buffer (`createAgent({ eventReplay })`); a `RangeError` for a `seq` that
   * is not a whole number or not yet reached.
   */
  eventsSince(runId: string, seq?: number): Observable<SequencedEvent>;
  /**
   * Lets one pending call run; with `args`, with the arguments a human corrected (checked by the
   * tool's schema: arguments it refuses throw, and the call keeps waiting). Throws for an unknown or
   * already-decided id: only the decision that takes effect succeeds.
   */
  approve(toolCallId: string, options?: { args?: unknown }): void;
  /** Refuses one pending call; the model sees the reason. Throws for an unknown or already-decided id. */
  deny(toolCallId: string, reason?: string): void;
}

let agentCounter = 0;

/**
 * Creates an agent whose loop is the agent statechart.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: scripted([{ text: "Hello!" }]),
 *   systemPrompt: "You are terse.",
 * });
 * agent.events$.subscribe((e) => console.log(e.type));
 * const { reason, messages } = await agent.prompt("Hi");
 * ```
 */
export function createAgent(options: AgentOptions): Agent {
  return buildAgent(options, undefined);
}

/**
 * An agent whose effects (model calls, tool calls, approvals, checks, time) all go through
 * `journal`: what a durable engine runs (`agent-machine/restate`). Not part of the public API.
 *
 * @example
 * ```ts
 * const agent = createJournaledAgent({ ...options, eagerToolExecution: false }, restateJournal);
 * await agent.prompt("Hi");
 * ```
 */
export function createJournaledAgent(options: AgentOptions, journal: EffectJournal): Agent {
  return buildAgent(options, journal);
}

function buildAgent(options: AgentOptions, journal: EffectJournal | undefined): Agent {
  checkAgentOptions(options);
  const tools = new Map<string, Tool>();
  for (const tool of options.tools ?? []) {
    if (tools.has(tool.name)) throw new Error(`Two tools are named "${tool.name}"`);
    tools.set(tool.name, tool);
  }
  // A bad compaction budget is a setup error: report it here, not from inside the first turn.
  if (options.context) resolveContextConfig(options.context);
  // A snapshot of another machine version is migrated or refused (SnapshotVersionError) here.
  const snapshot =
    options.snapshot === undefined
      ? undefined
      : prepareSnapshotForRestore(options.snapshot, agentMachine, [
          ...BUILT_IN_MIGRATIONS,
          ...(options.snapshotMigrations ?? []),
        ]);
  // Messages given up front get their ids now, so `agent.messages` shows them before the actor exists.
  const withIds = options.messages ? { ...options, messages: withMessageIds(options.messages) } : options;
  return new AgentSession(withIds, journal, tools, snapshot);
}

/** The persisted snapshot of a hibernated agent, as JSON; `undefined` for one that never ran. */
interface Dormant {
  json?: string;
}

/**
 * An agent: the façade over its actor. While it hibernates (`agent.hibernate()`, or idle with
 * `hibernate: "whenIdle"`) it holds no actor at all, only its persisted snapshot as a JSON string;
 * what needs the actor wakes it (a new actor restored from the snapshot, the same id), and
 * `events$` stays the same stream throughout. Methods live on the prototype, so an idle agent
 * costs a few fields, not a closure per method.
 */
class AgentSession implements Agent {
  readonly id: string;
  private readonly events = new Subject<AgentEvent>();
  private eventStream: Observable<AgentEvent> | undefined;
  private readonly runtime: AgentRuntime;
  private readonly inputFilters: readonly InputFilter[];
  private readonly whenIdle: boolean;
  /**
   * The actor, while awake (and after `stop()`, the stopped one); `undefined` while the agent
   * hibernates (`dormant`) and, for a root agent, until something first needs it.
   */
  private live: AgentActor | undefined;
  private dormant: Dormant | undefined;
  /**
   * Resting: the context of the idle actor this agent let go (no snapshot, no copy). The next call
   * that needs an actor makes one that starts idle with it. See {@link AgentSession.rest}.
   */
  private resting: AgentContext | undefined;
  /**
   * The app holds the actor (it read `agent.actor` or `snapshot$`, or inspects it from the start):
   * from then on the agent keeps that one actor for good, as apps that hold it expect.
   */
  private pinned: boolean;
  private stopped = false;
  private hibernationQueued = false;
  /** Where telemetry keeps this agent's tracing: the agent itself until an actor exists. */
  private telemetryKey: object = this;
  private failures: Set<(error: unknown) => void> | undefined;
  private snapshots: Subject<AgentSnapshot> | undefined;
  private snapshotStream: Observable<AgentSnapshot> | undefined;
  /** The events of the current (or last) run, numbered, for `eventsSince`; none with `eventReplay: false`. */
  private runLog: RunEventLog | undefined;
  /** Who follows every actor (`followActors`): told of each new one before it starts. */
  private actorFollowers: Set<(actor: AgentActor) => void> | undefined;

  constructor(
    private readonly options: AgentOptions,
    private readonly journal: EffectJournal | undefined,
    tools: Map<string, Tool>,
    snapshot: PersistedSnapshotData | undefined,
  ) {
    this.id = options.id ?? `agent-${++agentCounter}`;
    this.inputFilters = options.inputFilters ?? [];
    this.whenIdle = options.hibernate === "whenIdle" && !options.parentActor && !journal;
    this.pinned = options.parentActor !== undefined || journal !== undefined || options.inspect !== undefined;
    // The two functions go as arguments, not as an object's properties: a transpiler that keeps
    // function names (tsx, esbuild's keepNames) renames a property's function, which puts it in
    // V8's slow dictionary mode: about 250 bytes more per function, per agent.
    this.runtime = createRuntime(
      options,
      journal,
      tools,
      (event) => this.emit(event),
      // Only the agent's actors read it, so the agent is awake.
      () => readTranscript(this.live!.getSnapshot().context.messages),
    );
    attachTelemetry(
      {
        id: this.id,
        actor: this,
        runtime: this.runtime,
        subscribe: (next, complete) => this.events.subscribe({ next, complete }),
      },
      options,
    );
    if (this.whenIdle && (snapshot === undefined || snapshot.value === "idle")) {
      // Created idle: it starts asleep, its actor made only when something needs it.
      this.dormant = snapshot === undefined ? {} : { json: JSON.stringify(snapshot) };
      return;
    }
    // A new root agent makes its actor when something first needs it (a run, a queued message, a
    // read of `actor`, `snapshot$` or a snapshot): until then it is only its options, and an app
    // that keeps one per user session pays for the actor tree only once the session is used. One
    // with an inspector starts at once, so the inspector sees it from its creation.
    if (snapshot === undefined && !options.parentActor && !journal && !options.inspect) return;
    const actor = this.start(snapshot);
    if (snapshot !== undefined) {
      // Calls whose tool ran when the snapshot was taken run again (at-least-once).
      for (const call of toolCallActorsOf(actor)) resumeToolCall(call);
      // Approvals pending when the snapshot was taken are asked again, once listeners are attached.
      queueMicrotask(() => {
        for (const pending of this.pendingApprovals()) {
          this.emit({ type: "approval_requested", ...pending });
        }
      });
    }
  }

  get events$(): Observable<AgentEvent> {
    return (this.eventStream ??= this.events.asObservable());
  }

  get snapshot$(): Observable<AgentSnapshot> {
    this.pinned = true;
    return (this.snapshotStream ??= new Observable<AgentSnapshot>((subscriber) => {
      subscriber.next(this.awake().getSnapshot());
      const subscription = (this.snapshots ??= new Subject()).subscribe(subscriber);
      return () => subscription.unsubscribe();
    }));
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
    return this.runLog?.runId;
  }

  eventsSince(runId: string, seq = 0): Observable<SequencedEvent> {
    if (!Number.isInteger(seq) || seq < 0) {
      throw new RangeError(`eventsSince: seq must be a whole number ≥ 0, got ${String(seq)}`);
    }
    const log = this.checkedLog(runId, seq);
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

  prompt(input: PromptInput): Promise<RunOutcome> {
    if (this.stopped) return Promise.reject(new Error("Agent is stopped"));
    const actor = this.awake();
    if (!isIdle(actor)) return Promise.reject(new Error("Agent is already running"));
    const messages = toMessages(input, this.runtime.now());
    const done = this.nextRunEnd();
    const screening = screenInput(this.inputFilters, messages);
    actor.send(
      screening.ok
        ? { type: "PROMPT", messages: screening.messages }
        : { type: "PROMPT_REJECTED", reason: screening.reason },
    );
    return done;
  }

  continue(): Promise<RunOutcome> {
    if (this.stopped) return Promise.reject(new Error("Agent is stopped"));
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
    actor.send({ type: "CONTINUE" });
    return done;
  }

  waitForIdle(): Promise<void> {
    if (!this.live || isIdle(this.live)) return Promise.resolve();
    return this.nextRunEnd().then(() => undefined);
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
    // An agent asleep (or not started) with nothing queued has nothing to abort: it stays asleep.
    if (!this.live) {
      const { steering, followUp } = this.queued;
      if (steering.length + followUp.length === 0) return;
    }
    const actor = this.awake();
    // Queues first: an aborted run must not take a queued message on its way out. A durable
    // agent's queue is its session's inbox, which hands back what its run did not take.
    if (!this.journal) actor.send({ type: "CLEAR_QUEUES" });
    actor.send({ type: "ABORT" });
  }

  stop(): void {
    // An agent stopped before it ever ran (or while resting) still gets its (stopped) actor:
    // `agent.actor` reads it.
    if (!this.live && !this.dormant && !this.stopped) this.start(undefined);
    this.stopped = true;
    releaseStallWatchdog(this.runtime);
    // XState lets only a parent stop a child actor; a child agent's owner (its tool call) stops it
    // the way a parent would, so it also leaves the tree's actor system.
    if (this.options.parentActor) (this.live as unknown as { _stop(): void } | undefined)?._stop();
    else this.live?.stop();
    this.events.complete();
    this.snapshots?.complete();
  }

  hibernate(): void {
    if (this.options.parentActor) {
      throw new Error("A sub-agent runs inside its parent's actor tree: it cannot hibernate");
    }
    if (this.journal) throw new Error("A durable agent lives in its journal: it cannot hibernate");
    const actor = this.live ?? (this.resting && !this.stopped ? this.awake() : undefined);
    if (this.stopped) return;
    if (!actor) {
      // Never started: asleep from now on, woken from its options as it would have started.
      this.dormant ??= {};
      return;
    }
    if (!isIdle(actor)) throw new Error("Agent is running: it can hibernate once it is idle");
    this.dormant = { json: JSON.stringify(actor.getPersistedSnapshot()) };
    this.runLog = undefined;
    this.live = undefined;
    // Nothing may keep the stopped actor or its transcript alive: telemetry's key goes back to the
    // agent, and the converted messages of the last request go.
    moveTelemetry(actor, this);
    this.telemetryKey = this;
    this.runtime.llmMessages = createLlmMessages(this.options.convertToLlm);
    actor.stop();
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
    if (!this.live) return [];
    return toolCallActorsOf(this.live)
      .map((child) => child.getSnapshot())
      .filter((snapshot) => snapshot.status === "active" && snapshot.matches?.("awaitingApproval"))
      .map(({ context }) => ({
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: context.args,
      }));
  }

  approve(toolCallId: string, options?: { args?: unknown }): void {
    this.decide(toolCallId, { type: "APPROVE", ...(options?.args !== undefined && { args: options.args }) });
  }

  deny(toolCallId: string, reason?: string): void {
    this.decide(toolCallId, { type: "DENY", reason });
  }

  /** Publishes an event on `events$`, numbered and kept first when it belongs to a run. */
  private emit(event: AgentEvent): void {
    if (event.type === "agent_start" && this.options.eventReplay !== false) {
      this.runLog = new RunEventLog(newRunId(this.journal), eventReplayLimits(this.options.eventReplay));
    }
    const log = this.runLog;
    if (log !== undefined && !log.ended) log.record(event);
    this.events.next(event);
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
    return new EventsUnavailableError(
      known
        ? `The events of run "${runId}" from seq ${seq} are no longer kept (the oldest kept is ` +
            `${log!.oldestSeq}): resynchronise from the messages (error.messages), then follow live events`
        : `Run "${runId}" is not this agent's current or last run (${
            log ? `that is "${log.runId}"` : "it has not run since it was created, restored or woken"
          }): resynchronise from the messages (error.messages), then follow live events`,
      runId,
      seq,
      known ? log!.oldestSeq : undefined,
      [...this.messages],
    );
  }

  /** The context of a hibernated agent, read from its snapshot without waking it. */
  private dormantContext(): Pick<AgentContext, "steeringQueue" | "followUpQueue"> | undefined {
    if (this.dormant?.json === undefined) return undefined;
    return (JSON.parse(this.dormant.json) as { context: AgentContext }).context;
  }

  /** The actor, woken from the persisted snapshot when the agent hibernates. */
  private awake(): AgentActor {
    if (this.live) return this.live;
    if (this.stopped) throw new Error("Agent is stopped");
    const json = this.dormant?.json;
    this.dormant = undefined;
    const actor = this.start(json === undefined ? undefined : JSON.parse(json));
    this.hibernateWhenIdle();
    return actor;
  }

  /**
   * Makes and starts the actor: from `snapshot`, or from the context it rested with, or (with
   * neither) from the options.
   */
  private start(snapshot: PersistedSnapshotData | undefined): AgentActor {
    const { options, resting } = this;
    this.resting = undefined;
    // A child agent reports to the inspector of the tree it joins; a root agent to its own.
    const inspect = options.parentActor ? undefined : options.inspect;
    const actor: AgentActor = createActor(this.journal ? journaledAgentMachine : agentMachine, {
      id: this.id,
      input: resting ? { resume: resting } : machineInput(options, this.runtime.tools),
      ...(snapshot !== undefined && { snapshot: snapshot as unknown as AgentSnapshot }),
      ...(options.parentActor && { parent: options.parentActor }),
      ...(inspect && { inspect: typeof inspect === "function" ? inspect : toObserver(inspect) }),
    });
    bindRuntime(actor, this.runtime);
    actor.on("*", (event) => {
      // A run is over: its stream watchdog's timer goes (the next run re-arms it).
      if (event.type === "agent_end") releaseStallWatchdog(this.runtime);
      this.emit(event as AgentEvent);
    });
    moveTelemetry(this.telemetryKey, actor);
    this.telemetryKey = actor;
    // Handlers as arguments rather than an observer object: see the runtime's functions above.
    actor.subscribe(
      (next) => {
        this.snapshots?.next(next);
        if (next.matches("idle")) {
          if (this.whenIdle) this.hibernateWhenIdle();
          else if (!this.pinned) this.restWhenIdle();
        }
      },
      (error) => {
        // A bug in the machine must not crash the host process: report it to whoever waits.
        for (const fail of this.failures ?? []) fail(error);
        this.snapshots?.error(error);
      },
    );
    this.live = actor;
    for (const follow of this.actorFollowers ?? []) follow(actor);
    actor.start();
    return actor;
  }

  /** See {@link followActors}. */
  followActors(onActor: (actor: AgentActor) => void): () => void {
    const followers = (this.actorFollowers ??= new Set());
    const follow = (actor: AgentActor) => onActor(actor);
    followers.add(follow);
    // A resting agent is woken (cheaply: its context is at hand), so a watcher that comes after a
    // run shows the agent at once, as it would an agent that never rested; it stays awake while
    // watched. A hibernated one is not: waking it means parsing its snapshot.
    if (this.resting && !this.live && !this.stopped) this.awake();
    else if (this.live && !this.stopped) onActor(this.live);
    return () => followers.delete(follow);
  }

  /** With `hibernate: "whenIdle"`: hibernates once the current call is over, if the agent is still idle. */
  private hibernateWhenIdle(): void {
    if (!this.whenIdle || this.hibernationQueued) return;
    this.hibernationQueued = true;
    queueMicrotask(() => {
      this.hibernationQueued = false;
      if (this.live && !this.stopped && isIdle(this.live)) this.hibernate();
    });
  }

  /**
   * Resting (the default for a root agent whose actor the app never read): once the current call
   * is over, an idle agent lets its actor go and keeps only the actor's context, the very same
   * objects (no snapshot, no copy). An XState actor and its actor system cost more than a whole
   * idle agent otherwise; the next call that needs one makes a new actor (same id) that starts
   * idle with that context. Unlike hibernation nothing is serialized: messages keep their identity.
   */
  private restWhenIdle(): void {
    if (this.hibernationQueued) return;
    this.hibernationQueued = true;
    queueMicrotask(() => {
      this.hibernationQueued = false;
      const actor = this.live;
      // A watched agent (visualizer, Stately inspector) keeps its actor while watched: one actor
      // per agent on the page, not one per run.
      if (!actor || this.pinned || this.actorFollowers?.size || this.stopped || !isIdle(actor)) return;
      this.rest(actor);
    });
  }

  private rest(actor: AgentActor): void {
    this.resting = actor.getSnapshot().context;
    // An idle agent keeps nothing of its last run's events: a consumer resynchronises from messages.
    this.runLog = undefined;
    this.live = undefined;
    moveTelemetry(actor, this);
    this.telemetryKey = this;
    actor.stop();
  }

  private nextRunEnd(): Promise<RunOutcome> {
    return new Promise((resolve, reject) => {
      const failures = (this.failures ??= new Set());
      let rejection: string | undefined;
      const subscription = this.events.subscribe((event) => {
        if (event.type === "input_rejected") rejection = event.reason;
        if (event.type !== "agent_end") return;
        subscription.unsubscribe();
        failures.delete(reject);
        // An idle agent keeps no empty set around.
        if (failures.size === 0 && this.failures === failures) this.failures = undefined;
        resolve(runOutcomeOf(event, event.reason === "rejected" ? rejection : undefined));
      });
      failures.add(reject);
    });
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
      const tool = this.runtime.tools.get(toolName);
      const checked = tool
        ? checkEditedArgs(tool, event.args)
        : { ok: false as const, error: "unknown tool" };
      if (!checked.ok) {
        throw new TypeError(
          `approve("${toolCallId}", { args }): the edited arguments fail the schema of tool ${toolName}: ` +
            `${checked.error}. The call still waits for approval.`,
        );
      }
      event = { type: "APPROVE", args: checked.args };
    }
    this.emit({
      type: "approval_decided",
      toolCallId,
      toolName,
      approved: event.type === "APPROVE",
      ...(event.type === "APPROVE" && event.args !== undefined && { editedArgs: event.args }),
    });
    child.send(event);
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
  "stop",
  "hibernate",
  "getPersistedSnapshot",
  "pendingApprovals",
  "eventsSince",
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

/**
 * Follows an agent from actor to actor: calls `onActor` with its actor now, when it is awake, and
 * with each actor it wakes with later (a hibernating agent gets a new one each time), before that
 * actor starts, so its first inspection events are seen too. Reading `agent.actor` would wake a
 * hibernated agent; this never does. Returns the function that stops following. For tools that
 * watch an agent over its life (`visualize`, the Stately inspector's `attach`), not for apps.
 *
 * @example
 * ```ts
 * const stop = followActors(agent, (actor) => actor.system.inspect(observer));
 * ```
 */
export function followActors(agent: Agent, onActor: (actor: AgentActor) => void): () => void {
  if (agent instanceof AgentSession) return agent.followActors(onActor);
  // Not ours: all we can follow is the actor it has.
  onActor(agent.actor);
  return () => undefined;
}

/** What an agent's actors need that must not live in machine context (see `AgentRuntime`). */
function createRuntime(
  options: AgentOptions,
  journal: EffectJournal | undefined,
  tools: Map<string, Tool>,
  publish: AgentRuntime["publish"],
  transcript: AgentRuntime["transcript"],
): AgentRuntime {
  return {
    provider: options.provider,
    tools,
    toolSpecs: [...tools.values()].map(toolSpecOf),
    systemPrompt: options.systemPrompt,
    hooks: options.hooks ?? noHooks,
    permissions: options.permissions,
    retry: options.retry ? { ...defaultRetryPolicy, ...options.retry } : defaultRetryPolicy,
    stallTimeout:
      options.stallTimeout === false
        ? undefined
        : options.stallTimeout
          ? { ...defaultStallTimeout, ...options.stallTimeout }
          : defaultStallTimeout,
    toolTimeoutMs: options.toolTimeoutMs,
    toolResultMaxChars:
      options.toolResultBudget === false
        ? Infinity
        : (checkedBudget("createAgent toolResultBudget.maxChars", options.toolResultBudget?.maxChars) ??
          DEFAULT_TOOL_RESULT_MAX_CHARS),
    spillWorkspace:
      options.toolResultBudget !== false && options.toolResultBudget?.spill !== false
        ? tools.get("read_file")?.workspace
        : undefined,
    // A journaled model call is one step whose final message is recorded: its calls start after it.
    eagerToolExecution: journal ? false : (options.eagerToolExecution ?? false),
    options,
    convertToLlm: options.convertToLlm ?? defaultConvertToLlm,
    llmMessages: createLlmMessages(options.convertToLlm),
    publish,
    transcript,
    now: journal ? () => journal.now() : Date.now,
    messageIds: journal?.idPrefix !== undefined ? new MessageIds(journal.idPrefix) : PROCESS_MESSAGE_IDS,
    ...(journal && { journal }),
  };
}

/** The machine's input, from the options (used when the agent starts without a snapshot). */
function machineInput(options: AgentOptions, tools: ReadonlyMap<string, Tool>) {
  return {
    messages: options.messages,
    strategy: options.toolExecution,
    steeringMode: options.steeringMode,
    followUpMode: options.followUpMode,
    limits: options.limits,
    ...(options.loopDetection !== undefined && { loopDetection: options.loopDetection }),
    contextBudget: options.context && dataOnly(options.context),
    concurrencySafeTools: [...tools.values()].filter((t) => t.concurrencySafe).map((t) => t.name),
  };
}

/** The transcript of a hibernated agent, read from its snapshot without waking it. */
function dormantMessages(dormant: Dormant | undefined, options: AgentOptions): AgentMessage[] {
  if (dormant?.json === undefined) return [...(options.messages ?? [])];
  return (JSON.parse(dormant.json) as { context: { messages: AgentMessage[] } }).context.messages;
}

function isIdle(actor: AgentActor): boolean {
  return actor.getSnapshot().matches("idle");
}

const noHooks = Object.freeze({});

/** Tool specs are the same for every agent that has the tool: made once per tool. */
const toolSpecs = new WeakMap<Tool, ToolSpec>();
function toolSpecOf(tool: Tool): ToolSpec {
  let spec = toolSpecs.get(tool);
  if (!spec) toolSpecs.set(tool, (spec = toToolSpec(tool)));
  return spec;
}

function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${stateName(child)}`;
}

/** A copy without functions, fit for machine context (and so for persisted snapshots). */
function dataOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v !== "function")) as T;
}

/** A run's id: a durable agent's is its invocation's (the same on every replay). */
function newRunId(journal: EffectJournal | undefined): string {
  return journal?.idPrefix !== undefined ? journal.idPrefix.replace(/-$/, "") : `run-${newMessageId()}`;
}

function eventReplayLimits(options: EventReplayOptions | undefined): Required<EventReplayOptions> {
  return options ? { ...DEFAULT_EVENT_REPLAY, ...options } : DEFAULT_EVENT_REPLAY;
}
