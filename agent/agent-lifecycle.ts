import type { Subject } from "rxjs/internal/Subject";
import { createActor, type InspectionEvent, type Observer } from "xstate";
import { releaseStallWatchdog } from "../actors/stall-watchdog.js";
import { resumeToolCall } from "../actors/tool-call.machine.js";
import type { EffectJournal } from "../core/effect-journal.js";
import { createEventHub } from "../core/event-hub.js";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import { createLlmMessages } from "../core/llm-messages.js";
import type { AgentMessage } from "../core/messages.js";
import { newMessageId } from "../core/message-id.js";
import type { AgentOptions, EventReplayOptions } from "../core/options.js";
import { type AgentRuntime, bindRuntime } from "../core/runtime.js";
import type { PersistedSnapshotData } from "../core/snapshot-version.js";
import { type AgentContext, agentMachine } from "../machines/agent.machine.js";
import { journaledAgentMachine } from "../machines/journaled-agent.machine.js";
import { toolCallActorsOf } from "../machines/tool-call-actors.js";
import { readTranscript } from "../rules/transcript.js";
import { attachTelemetry, moveTelemetry } from "../telemetry/attach.js";
import type { Tool } from "../tools/define-tool.js";
import type { AgentActor, AgentSnapshot, PendingApproval } from "./agent.js";
import { activateAgent, allTools, createRuntime, machineInput } from "./agent-runtime.js";
import { DEFAULT_EVENT_REPLAY, RunEventLog } from "./event-log.js";
import { guardInspector, inspectorFailure } from "./guarded-inspector.js";
let agentCounter = 0;

/** The persisted snapshot of a hibernated agent, as JSON; `undefined` for one that never ran. */
export interface Dormant {
  json?: string;
}

/**
 * An agent's actor over its life, the part of the façade that rests and wakes: the actor is made
 * when something first needs it, let go when the agent is idle (resting keeps its context, the very
 * objects; hibernating keeps its persisted snapshot as JSON), and made again with the same id by
 * whatever needs it next (`awake`). Whoever follows the agent's actors (`followActors`) is told of
 * each new one before it starts. Every event goes out through `emit`, numbered into the run's log
 * (for `eventsSince`) first. The live agent's methods are `AgentSession`'s (agent-session.ts),
 * which extends this class: one object per agent, its methods on the prototypes.
 *
 * @example
 * ```ts
 * class AgentSession extends AgentLifecycle implements Agent {}
 * ```
 */
export abstract class AgentLifecycle {
  readonly id: string;
  protected readonly events = createEventHub<AgentEvent>();
  protected readonly runtime: AgentRuntime;
  private readonly whenIdle: boolean;

  /**
   * The actor, while awake (and after `stop()`, the stopped one); `undefined` while the agent
   * hibernates (`dormant`) and, for a root agent, until something first needs it.
   */
  protected live: AgentActor | undefined;
  protected dormant: Dormant | undefined;

  /**
   * Resting: the context of the idle actor this agent let go (no snapshot, no copy). The next call
   * that needs an actor makes one that starts idle with it. See {@link AgentLifecycle.rest}.
   */
  protected resting: AgentContext | undefined;

  /**
   * The app holds the actor (it read `agent.actor` or `snapshot$`, or inspects it from the start):
   * from then on the agent keeps that one actor for good, as apps that hold it expect.
   */
  protected pinned: boolean;
  protected stopped = false;
  /**
   * Events an actor below the agent publishes (a call's start and end, a tool's updates) are being
   * delivered: a subscriber that calls back into the agent now runs inside that actor's step.
   */
  protected publishing = 0;
  /** The last `agent_end` published (see `emit`). */
  protected lastEnd: AgentEventOf<"agent_end"> | undefined;
  private hibernationQueued = false;

  /** Where telemetry keeps this agent's tracing: the agent itself until an actor exists. */
  private telemetryKey: object = this;
  protected failures: Set<(error: unknown) => void> | undefined;
  protected snapshots: Subject<AgentSnapshot> | undefined;

  /** The events of the current (or last) run, numbered, for `eventsSince`; none with `eventReplay: false`. */
  protected runLog: RunEventLog | undefined;
  /** The last run's id once its events went (see `letRunEventsGo`). */
  protected lastRunId: string | undefined;

  /** The lifetime spending last told to the spend store. */
  private recordedUsd: number | undefined;

  /** The app's `inspect` observer, guarded (see `guardInspector`); made when the first actor starts. */
  private inspector: Observer<InspectionEvent> | undefined;

  /** Who follows every actor (`followActors`): told of each new one before it starts. */
  private actorFollowers: Set<(actor: AgentActor) => void> | undefined;

  constructor(
    protected readonly options: AgentOptions,
    protected readonly journal: EffectJournal | undefined,
    protected readonly agentTools: Map<string, Tool>,
    snapshot: PersistedSnapshotData | undefined,
  ) {
    this.id = options.id ?? `agent-${++agentCounter}`;
    this.whenIdle = options.hibernate === "whenIdle" && !options.parentActor && !journal;
    this.pinned = options.parentActor !== undefined || journal !== undefined || options.inspect !== undefined;
    // The two functions go as arguments, not as an object's properties: a transpiler that keeps
    // function names (tsx, esbuild's keepNames) renames a property's function, which puts it in
    // V8's slow dictionary mode: about 250 bytes more per function, per agent.
    this.runtime = createRuntime(
      options,
      journal,
      agentTools,
      (event) => {
        this.publishing++;
        try {
          this.emit(event);
        } finally {
          this.publishing--;
        }
      },
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
        for (const pending of this.pendingToolCalls()) {
          this.emit({ type: "tool_result_requested", ...pending });
        }
      });
    }
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
    this.letRunEventsGo();
    this.live = undefined;
    // Nothing may keep the stopped actor or its transcript alive: telemetry's key goes back to the
    // agent, and the converted messages of the last request go.
    moveTelemetry(actor, this);
    this.telemetryKey = this;
    this.runtime.llmMessages = createLlmMessages(this.options.convertToLlm);
    actor.stop();
  }

  /**
   * Resting or hibernating after a run: its id stays (`runId`, a handle's status name it), and so do
   * its events when a consumer followed them (`eventsSince`: one that may reconnect for the rest, as
   * the session host does). Events nobody followed go, so an idle agent nobody follows costs no more
   * than its transcript; asked for later, they are refused as no longer kept (resynchronise from
   * the messages).
   */
  private letRunEventsGo(): void {
    const log = this.runLog;
    if (!log || log.followed) return;
    this.lastRunId = log.runId;
    this.runLog = undefined;
  }

  /** Publishes an event on `events$`, numbered and kept first when it belongs to a run. */

  protected emit(event: AgentEvent): void {
    if (event.type === "agent_start" && this.options.eventReplay !== false) {
      this.runLog = new RunEventLog(newRunId(this.journal), eventReplayLimits(this.options.eventReplay));
      this.lastRunId = undefined;
    }
    const log = this.runLog;
    if (log !== undefined && !log.ended) log.record(event);
    // Kept before delivery: a subscriber that stops the agent on it completes `events$` before the
    // later subscribers get it, and a `prompt()` waiting for it still resolves with it.
    if (event.type === "agent_end") this.lastEnd = event;
    this.events.next(event);
  }

  /** The context of a hibernated agent, read from its snapshot without waking it. */

  protected dormantContext(): Pick<AgentContext, "steeringQueue" | "followUpQueue"> | undefined {
    if (this.dormant?.json === undefined) return undefined;
    return (JSON.parse(this.dormant.json) as { context: AgentContext }).context;
  }

  /** The actor, woken from the persisted snapshot when the agent hibernates. */

  protected awake(): AgentActor {
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

  protected start(snapshot: PersistedSnapshotData | undefined): AgentActor {
    const { options, resting } = this;
    this.resting = undefined;
    const stored = options.spendStore?.spent(this.id);
    if (snapshot !== undefined && stored !== undefined) snapshot = withSpentAtLeast(snapshot, stored);
    // A child agent reports to the inspector of the tree it joins; a root agent to its own, guarded
    // once for the agent's life (an observer that threw stays detached across its actors).
    if (options.inspect && !options.parentActor)
      this.inspector ??= guardInspector(options.inspect, inspectorFailure(this.id));
    const inspect = this.inspector;
    const actor: AgentActor = createActor(this.journal ? journaledAgentMachine() : agentMachine, {
      id: this.id,
      input: resting ? { resume: resting } : machineInput(options, allTools(this.runtime), stored),
      ...(snapshot !== undefined && { snapshot: snapshot as unknown as AgentSnapshot }),
      ...(options.parentActor && { parent: options.parentActor }),
      ...(inspect && { inspect }),
    });
    bindRuntime(actor, this.runtime);
    // A restored (or woken) agent answers as the agent that was active when it was saved.
    activateAgent(this.runtime, actor.getSnapshot().context.activeAgent);
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
        if (options.spendStore) this.recordSpend(next.context.spentUsd);
        this.snapshots?.next(next);
        // `idle` is a top-level atomic state: its value is the string (cheaper than `matches`).
        if (next.value === "idle") {
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

  /** Tells the spend store the agent's lifetime spending when it grew (see `SpendStore`). */
  private recordSpend(spentUsd: number | undefined): void {
    if (spentUsd === undefined || spentUsd <= (this.recordedUsd ?? 0)) return;
    this.recordedUsd = spentUsd;
    try {
      // The agent's own count holds the budget in this process whatever the store does.
      void Promise.resolve(this.options.spendStore!.record(this.id, spentUsd)).catch(() => {});
    } catch {
      // As above: a store that throws loses nothing here.
    }
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
    this.letRunEventsGo();
    this.live = undefined;
    moveTelemetry(actor, this);
    this.telemetryKey = this;
    actor.stop();
  }

  /** Calls waiting for approval (asked again after a restore). */

  abstract pendingApprovals(): PendingApproval[];

  /** Calls of client-run tools waiting for their result (asked again after a restore). */
  abstract pendingToolCalls(): PendingApproval[];
}

/**
 * The transcript of a hibernated agent, read from its snapshot without waking it.
 *
 * @example
 * ```ts
 * dormantMessages({ json: JSON.stringify(snapshot) }, options).length;
 * ```
 */
export function dormantMessages(dormant: Dormant | undefined, options: AgentOptions): AgentMessage[] {
  if (dormant?.json === undefined) return [...(options.messages ?? [])];
  return (JSON.parse(dormant.json) as { context: { messages: AgentMessage[] } }).context.messages;
}

/**
 * Whether the agent's actor is idle (no run going on).
 *
 * @example
 * ```ts
 * if (!isIdle(actor)) throw new Error("Agent is already running");
 * ```
 */
export function isIdle(actor: AgentActor): boolean {
  return actor.getSnapshot().matches("idle");
}

/** A run's id: a durable agent's is its invocation's (the same on every replay). */
function newRunId(journal: EffectJournal | undefined): string {
  return journal?.idPrefix !== undefined ? journal.idPrefix.replace(/-$/, "") : `run-${newMessageId()}`;
}

function eventReplayLimits(options: EventReplayOptions | undefined): Required<EventReplayOptions> {
  return options ? { ...DEFAULT_EVENT_REPLAY, ...options } : DEFAULT_EVENT_REPLAY;
}

/**
 * A persisted snapshot whose lifetime spending is at least `usd` (what the spend store recorded):
 * an older snapshot, or one saved before the last calls, does not give the budget back.
 */
function withSpentAtLeast(snapshot: PersistedSnapshotData, usd: number): PersistedSnapshotData {
  const context = (snapshot as { context?: { spentUsd?: unknown } }).context;
  if (!context || typeof context.spentUsd !== "number" || context.spentUsd >= usd) return snapshot;
  return { ...snapshot, context: { ...context, spentUsd: usd } } as PersistedSnapshotData;
}
