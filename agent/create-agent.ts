import { Observable, Subject } from "rxjs";
import { type Actor, createActor, type SnapshotFrom, toObserver } from "xstate";
import { resolveContextConfig } from "../context/config.js";
import { screenInput, toMessages } from "../machines/agent.logic.js";
import { agentMachine } from "../machines/agent.machine.js";
import { journaledAgentMachine } from "../machines/journaled-agent.machine.js";
import { toolCallActorOf, toolCallActorsOf } from "../machines/tool-call-actors.js";
import { resumeToolCall } from "../actors/tool-call.machine.js";
import { readTranscript } from "../machines/transcript.js";
import { createLlmMessages } from "../core/llm-messages.js";
import { checkedBudget, type Tool, toToolSpec } from "../tools/define-tool.js";
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from "../tools/result-budget.js";
import type { EffectJournal } from "../core/effect-journal.js";
import type { AgentEvent } from "../core/events.js";
import { type AgentMessage, defaultConvertToLlm } from "../core/messages.js";
import { checkOptionKeys } from "../core/option-keys.js";
import {
  AGENT_HOOK_KEYS,
  AGENT_LIMIT_KEYS,
  AGENT_OPTION_KEYS,
  type AgentOptions,
  type PromptInput,
  RETRY_POLICY_KEYS,
  LOOP_DETECTION_KEYS,
  STALL_TIMEOUT_KEYS,
  TOOL_RESULT_BUDGET_KEYS,
  TELEMETRY_KEYS,
} from "../core/options.js";
import { checkLoopDetection } from "../machines/loop-detection.logic.js";
import { type AgentRuntime, bindRuntime, defaultRetryPolicy, defaultStallTimeout } from "../core/runtime.js";
import { attachTelemetry } from "../telemetry/attach.js";
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
  /** The XState actor itself (inspect it, `waitFor` it, send it events). */
  readonly actor: AgentActor;
  /** The transcript so far. */
  readonly messages: readonly AgentMessage[];
  /** The active state, e.g. `"idle"` or `"running.executing"`. */
  readonly state: string;
  /** Starts a run; resolves with the run's new messages at `agent_end`, whatever the outcome. */
  prompt(input: PromptInput): Promise<AgentMessage[]>;
  /** Runs again from the current transcript (its last message must not be the assistant's, unless a message is queued). */
  continue(): Promise<AgentMessage[]>;
  /** Resolves when the agent is idle. */
  waitForIdle(): Promise<void>;
  /** Queues a message the agent takes after the current turn (or tool group); a sequential run skips its remaining calls. */
  steer(input: string | AgentMessage): void;
  /** Queues a message the agent takes when it would otherwise stop. */
  followUp(input: string | AgentMessage): void;
  /** Stops the current run: the stream and every running tool are aborted and every open call is answered. */
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
  /** Lets one pending call run. Throws for an unknown or already-decided id. */
  approve(toolCallId: string): void;
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
 * const newMessages = await agent.prompt("Hi");
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
  const id = options.id ?? `agent-${++agentCounter}`;
  const events = new Subject<AgentEvent>();
  const tools = new Map<string, Tool>();
  for (const tool of options.tools ?? []) {
    if (tools.has(tool.name)) throw new Error(`Two tools are named "${tool.name}"`);
    tools.set(tool.name, tool);
  }
  const inputFilters = options.inputFilters ?? [];
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

  const runtime: AgentRuntime = {
    provider: options.provider,
    tools,
    toolSpecs: [...tools.values()].map(toToolSpec),
    systemPrompt: options.systemPrompt,
    hooks: options.hooks ?? {},
    permissions: options.permissions,
    retry: { ...defaultRetryPolicy, ...options.retry },
    stallTimeout:
      options.stallTimeout === false ? undefined : { ...defaultStallTimeout, ...options.stallTimeout },
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
    publish: (event) => events.next(event),
    transcript: () => readTranscript(actor.getSnapshot().context.messages),
    now: journal ? () => journal.now() : Date.now,
    ...(journal && { journal }),
  };

  // A child agent reports to the inspector of the tree it joins; a root agent to its own.
  const inspect = options.parentActor ? undefined : options.inspect;
  // `runtime.transcript` reads `actor` only once the actor runs, after this line.
  const actor: AgentActor = createActor(journal ? journaledAgentMachine : agentMachine, {
    id,
    input: {
      messages: options.messages,
      strategy: options.toolExecution,
      steeringMode: options.steeringMode,
      followUpMode: options.followUpMode,
      limits: options.limits,
      ...(options.loopDetection !== undefined && { loopDetection: options.loopDetection }),
      contextBudget: options.context && dataOnly(options.context),
      concurrencySafeTools: [...tools.values()].filter((t) => t.concurrencySafe).map((t) => t.name),
    },
    ...(snapshot !== undefined && { snapshot: snapshot as unknown as AgentSnapshot }),
    ...(options.parentActor && { parent: options.parentActor }),
    ...(inspect && { inspect: typeof inspect === "function" ? inspect : toObserver(inspect) }),
  });
  bindRuntime(actor, runtime);
  actor.on("*", (event) => events.next(event as AgentEvent));
  attachTelemetry(
    {
      id,
      actor,
      runtime,
      subscribe: (next, complete) => events.subscribe({ next, complete }),
    },
    options,
  );

  const failures = new Set<(error: unknown) => void>();
  actor.subscribe({
    error: (error) => {
      // A bug in the machine must not crash the host process: report it to whoever waits.
      for (const fail of failures) fail(error);
    },
  });
  actor.start();

  if (snapshot !== undefined) {
    // Calls whose tool ran when the snapshot was taken run again (at-least-once).
    for (const call of toolCallActorsOf(actor)) resumeToolCall(call);
    // Approvals pending when the snapshot was taken are asked again, once listeners are attached.
    queueMicrotask(() => {
      for (const pending of pendingApprovals()) events.next({ type: "approval_requested", ...pending });
    });
  }

  const isIdle = () => actor.getSnapshot().matches("idle");

  function nextRunEnd(): Promise<AgentMessage[]> {
    return new Promise((resolve, reject) => {
      const subscription = events.subscribe((event) => {
        if (event.type !== "agent_end") return;
        subscription.unsubscribe();
        failures.delete(reject);
        resolve(event.messages);
      });
      failures.add(reject);
    });
  }

  function pendingApprovals(): PendingApproval[] {
    return toolCallActorsOf(actor)
      .map((child) => child.getSnapshot())
      .filter((snapshot) => snapshot.status === "active" && snapshot.matches?.("awaitingApproval"))
      .map(({ context }) => ({
        toolCallId: context.toolCallId,
        toolName: context.toolName,
        args: context.args,
      }));
  }

  function decide(toolCallId: string, event: { type: "APPROVE" } | { type: "DENY"; reason?: string }) {
    const child = toolCallActorOf(actor, toolCallId);
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
    events.next({ type: "approval_decided", toolCallId, toolName, approved: event.type === "APPROVE" });
    child.send(event);
  }

  function screened(input: string | AgentMessage) {
    const screening = screenInput(inputFilters, toMessages(input, runtime.now()));
    if (!screening.ok) events.next({ type: "input_rejected", reason: screening.reason });
    return screening.ok ? screening.messages : [];
  }

  const agent: Agent = {
    id,
    events$: events.asObservable(),
    snapshot$: new Observable<AgentSnapshot>((subscriber) => {
      subscriber.next(actor.getSnapshot());
      const subscription = actor.subscribe({
        next: (snapshot) => subscriber.next(snapshot),
        error: (error) => subscriber.error(error),
        complete: () => subscriber.complete(),
      });
      return () => subscription.unsubscribe();
    }),
    actor,
    get messages() {
      return readTranscript(actor.getSnapshot().context.messages);
    },
    get state() {
      return stateName(actor.getSnapshot().value);
    },
    prompt(input) {
      if (!isIdle()) return Promise.reject(new Error("Agent is already running"));
      const messages = toMessages(input, runtime.now());
      const done = nextRunEnd();
      const screening = screenInput(inputFilters, messages);
      actor.send(
        screening.ok
          ? { type: "PROMPT", messages: screening.messages }
          : { type: "PROMPT_REJECTED", reason: screening.reason },
      );
      return done;
    },
    continue() {
      if (!isIdle()) return Promise.reject(new Error("Agent is already running"));
      const { context } = actor.getSnapshot();
      const last = context.messages.at(-1);
      if (!last) return Promise.reject(new Error("No messages to continue from"));
      const queued = context.steeringQueue.length + context.followUpQueue.length > 0;
      if (last.role === "assistant" && !queued) {
        return Promise.reject(new Error("Cannot continue from message role: assistant"));
      }
      const done = nextRunEnd();
      actor.send({ type: "CONTINUE" });
      return done;
    },
    waitForIdle() {
      if (isIdle()) return Promise.resolve();
      return nextRunEnd().then(() => undefined);
    },
    steer(input) {
      for (const message of screened(input)) actor.send({ type: "STEER", message });
    },
    followUp(input) {
      for (const message of screened(input)) actor.send({ type: "FOLLOW_UP", message });
    },
    abort() {
      actor.send({ type: "ABORT" });
    },
    stop() {
      // XState lets only a parent stop a child actor; a child agent's owner (its tool call) stops it
      // the way a parent would, so it also leaves the tree's actor system.
      if (options.parentActor) (actor as unknown as { _stop(): void })._stop();
      else actor.stop();
      events.complete();
    },
    getPersistedSnapshot() {
      return stampSnapshot(JSON.parse(JSON.stringify(actor.getPersistedSnapshot())), agentMachine);
    },
    pendingApprovals,
    approve(toolCallId) {
      decide(toolCallId, { type: "APPROVE" });
    },
    deny(toolCallId, reason) {
      decide(toolCallId, { type: "DENY", reason });
    },
  };
  return agent;
}

/**
 * Refuses unknown keys in the options and their nested option objects: a typo must be an error,
 * never an option silently left at its default.
 */
function checkAgentOptions(options: AgentOptions): void {
  if (options === null || typeof options !== "object") {
    throw new TypeError("createAgent: options must be an object with at least a provider");
  }
  checkOptionKeys("createAgent", options, AGENT_OPTION_KEYS);
  checkOptionKeys("createAgent limits", options.limits, AGENT_LIMIT_KEYS);
  const onLimit = options.limits?.onLimit;
  if (onLimit !== undefined && onLimit !== "answer" && onLimit !== "stop") {
    throw new TypeError(
      `createAgent limits.onLimit must be "answer" or "stop", got ${JSON.stringify(onLimit)}`,
    );
  }
  checkOptionKeys("createAgent retry", options.retry, RETRY_POLICY_KEYS);
  checkOptionKeys("createAgent hooks", options.hooks, AGENT_HOOK_KEYS);
  if (options.toolResultBudget !== false) {
    checkOptionKeys("createAgent toolResultBudget", options.toolResultBudget, TOOL_RESULT_BUDGET_KEYS);
  }
  if (options.stallTimeout !== false) {
    checkOptionKeys("createAgent stallTimeout", options.stallTimeout, STALL_TIMEOUT_KEYS);
  }
  if (options.loopDetection !== false) {
    checkOptionKeys("createAgent loopDetection", options.loopDetection, LOOP_DETECTION_KEYS);
  }
  checkLoopDetection(options.loopDetection);
  if (options.telemetry !== false) {
    checkOptionKeys("createAgent telemetry", options.telemetry, TELEMETRY_KEYS);
  }
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
