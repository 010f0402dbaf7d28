import type { AnyActorRef, InspectionEvent, StateValue, Subscription } from "xstate";
import { toolCallMachine } from "../actors/tool-call.machine.js";
import { type Agent, type AgentActor, followActors } from "../agent/create-agent.js";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import { type AgentContext, agentMachine } from "../machines/agent.machine.js";
import { isToolCallOf } from "../machines/tool-call-actors.js";
import { toolExecutionMachine } from "../machines/tool-execution.machine.js";
import { runtimeOf } from "../core/runtime.js";
import { PATH_SEPARATOR } from "../agent/nested-calls.js";
import { SKIPPED_TEXT } from "../rules/tool-execution.logic.js";
import { type SanitizeOptions, sanitize } from "./sanitize.js";
import { guardInspector } from "../agent/guarded-inspector.js";
import { errorText } from "../core/error-text.js";

/**
 * `message_update` as it travels to the page and into recordings: the delta only. The page rebuilds
 * the partial message from the deltas; `message_end` carries the final message in full.
 */
export interface WireMessageUpdate {
  type: "message_update";
  delta: string;
  kind: AgentEventOf<"message_update">["kind"];
  /** The call a `toolcall_*` update belongs to. */
  toolCallId?: string;
}

/**
 * `approval_requested` as it travels to the page: with the description of the tool it asks for
 * (the one the model was given, from the agent the call waits in), so the card says what the tool
 * does. Redacted and cut like everything on the wire.
 */
export type WireApprovalRequested = AgentEventOf<"approval_requested"> & { description?: string };

/** An agent event made JSON-safe (secrets redacted, huge strings cut), `message_update` slimmed. */
export type WireEvent =
  | Exclude<AgentEvent, { type: "message_update" } | { type: "approval_requested" }>
  | WireMessageUpdate
  | WireApprovalRequested;

/** What became of a tool call, from its `tool_execution_end`. */
export type ToolOutcome =
  "ok" | "error" | "skipped" | "denied" | "timed out" | "aborted" | "not found" | "invalid";

/** One message from the visualizer server to the page; also one line of a recording. */
export type VisualizerMessage =
  | {
      kind: "hello";
      t: number;
      agentId: string;
      /** `"live"` from `visualize()`, `"replay"` in recordings. */
      mode: "live" | "replay";
      /** The largest command the server takes (live only), so the page can say so before sending. */
      maxCommandBytes?: number;
    }
  | { kind: "event"; t: number; event: WireEvent; outcome?: ToolOutcome }
  /** The agent machine's state value, sent when it changes. */
  | { kind: "state"; t: number; value: StateValue }
  /** A tool call actor's resting state (`checkingPermission`, `awaitingApproval`, `executing`, `done`). */
  | { kind: "tool_state"; t: number; toolCallId: string; value: string }
  /** The machine's context when it changes, the transcript left out (see {@link contextDigest}). */
  | { kind: "context"; t: number; context: unknown }
  /** The tool execution machine's state value while one runs (`null` once it stopped). */
  | { kind: "execution_state"; t: number; value: StateValue | null }
  /**
   * The state value of a sub-agent, at any depth: `path` holds the ids of the calls from this
   * agent's own down to the one that runs it, and `toolCallId` is that path joined by `/` (the id a
   * nested approval has: `"p1"` for a child, `"p1/r1"` for a grandchild). `toolName`: the tool
   * that runs it.
   */
  | {
      kind: "sub_agent_state";
      t: number;
      toolCallId: string;
      agentId: string;
      value: StateValue;
      path?: string[];
      toolName?: string;
    }
  /**
   * What will wake the agent, sent when it changes: its next slot by schedule (`visualize(agent, {
   * scheduler })`; `null` when none) and the late results it waits for (`{ laterResults }`).
   */
  | { kind: "wake"; t: number; next: NextWake | null; later?: PendingLater[] }
  /**
   * To a page that connects after the server dropped old history: the page's model as it was before
   * the history that follows (current state, transcript, pending approvals, recent lanes).
   */
  | { kind: "catch_up"; t: number; model: unknown; dropped: number }
  /**
   * To a page that connects: the history it gets, in one message (thousands of small frames cost the
   * server and the page far more than one large one). The page takes them one by one, in order.
   */
  | { kind: "backlog"; t: number; messages: VisualizerMessage[] }
  /**
   * To a page that connects: the history it was sent ends here, what follows is live. The page draws
   * once then, not once per frame while the history pours in.
   */
  | { kind: "caught_up"; t: number }
  /** The answer to a page command that failed (e.g. approving a call that is no longer pending). */
  | { kind: "error"; t: number; message: string };

/** An agent's next wake-up by schedule, as the page shows it. */
export interface NextWake {
  /** The slot (ms since the epoch). */
  at: number;
  scheduleId: string;
  /** When it fires, in words: `every 3600000 ms`, `cron 0 9 * * 1-5 (Europe/Paris)`, `once`. */
  when: string;
  /** The text it wakes the agent with (cut). */
  message: string;
  createdBy: "app" | "agent";
}

/** A result the agent waits for from a tool that answers later: it wakes the agent when it comes. */
export interface PendingLater {
  handle: string;
  toolName: string;
  toolCallId: string;
  startedAt: number;
  /** When the agent is told the work timed out (ms since the epoch). */
  deadline?: number;
}

/** What the page may ask of a live agent. */
export type VisualizerCommand =
  | { kind: "steer"; text: string }
  | { kind: "prompt"; text: string }
  | { kind: "abort" }
  /** `args`: the arguments edited on the page, run instead of the model's (checked by the agent). */
  | { kind: "approve"; toolCallId: string; args?: unknown }
  | { kind: "deny"; toolCallId: string; reason?: string };

/** Limits for a machine context on the wire: it travels on every change, so it is kept small. */
const CONTEXT_LIMITS: SanitizeOptions = { maxStringLength: 2_000, maxArrayLength: 20, maxDepth: 8 };

/**
 * The agent machine's context as the page shows it next to an event: queues, limits, the run's
 * counters, everything but the transcript (the page has it already), cut and redacted.
 *
 * @example
 * ```ts
 * contextDigest(agent.actor.getSnapshot().context); // { messages: "[12 messages]", steeringQueue: [], run: { turn: 2, … }, … }
 * ```
 */
export function contextDigest(context: AgentContext): unknown {
  const { messages, ...rest } = context;
  return sanitize({ messages: `[${messages.length} messages]`, ...rest }, CONTEXT_LIMITS);
}

/** Limits for what goes on the wire: big enough for real transcripts, small enough for a browser. */
export const WIRE_LIMITS: SanitizeOptions = { maxStringLength: 100_000, maxArrayLength: 5_000, maxDepth: 24 };

/** Classifies a finished tool call by the texts the runtime gives each fate (the README's "Abort" and "Denied approvals" decisions). */
export function toolOutcome(event: AgentEventOf<"tool_execution_end">): ToolOutcome {
  if (!event.isError) return "ok";
  const text = event.result.content
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
  // The texts name the tool as the model spelled it, spaces and all: compare with that name, not a pattern.
  const tool = `Tool ${event.toolName} `;
  if (text === SKIPPED_TEXT) return "skipped";
  if (text.startsWith("The user denied this tool call")) return "denied";
  if (text.startsWith(tool) && /^timed out after \d+ ms$/.test(text.slice(tool.length))) return "timed out";
  if (text === `${tool}aborted`) return "aborted";
  if (text === `${tool}not found`) return "not found";
  if (text.startsWith("Validation failed for tool ")) return "invalid";
  return "error";
}

/**
 * Raw tool-call argument fragments cannot be redacted (a key and its value may arrive in different
 * fragments), so they do not travel; the complete arguments follow, redacted, in `message_end`.
 */
function wireDelta(event: AgentEventOf<"message_update">): string {
  return event.kind === "toolcall_delta" ? "" : event.delta;
}

function toolCallIdOf(event: AgentEventOf<"message_update">): string | undefined {
  return "toolCallId" in event ? event.toolCallId : undefined;
}

function wireUpdate(
  kind: WireMessageUpdate["kind"],
  delta: string,
  toolCallId: string | undefined,
): WireMessageUpdate {
  return toolCallId === undefined
    ? { type: "message_update", delta, kind }
    : { type: "message_update", delta, kind, toolCallId };
}

/** The wire form of one agent event. */
export function toWire(event: AgentEvent, t = Date.now()): Extract<VisualizerMessage, { kind: "event" }> {
  if (event.type === "message_update") {
    return { kind: "event", t, event: wireUpdate(event.kind, wireDelta(event), toolCallIdOf(event)) };
  }
  const wire = sanitize(event, WIRE_LIMITS) as WireEvent;
  return event.type === "tool_execution_end"
    ? { kind: "event", t, event: wire, outcome: toolOutcome(event) }
    : {
        kind: "event",
        t,
        event: wire,
      };
}

/** Longest tool description an approval card shows (descriptions are for models, some are long). */
const DESCRIPTION_CHARS = 2_000;

/**
 * The description of the tool an approval asks for, as the agent the call waits in knows it (its
 * active tools: a handoff changes them; a sub-agent has its own), redacted and cut; `undefined`
 * when that agent or tool is not known.
 *
 * @example
 * ```ts
 * toolDescription(agent.actor, new Map(), { type: "approval_requested", toolCallId: "c1", toolName: "deploy", args: {} });
 * // "Deploys the site to production"
 * ```
 */
export function toolDescription(
  agentActor: AnyActorRef,
  agentsById: ReadonlyMap<string, AnyActorRef>,
  event: AgentEventOf<"approval_requested">,
): string | undefined {
  const owner = event.agents?.length ? agentsById.get(event.agents.at(-1)!) : agentActor;
  if (!owner) return undefined;
  let description: unknown;
  try {
    description = runtimeOf(owner).tools.get(event.toolName)?.description;
  } catch {
    return undefined; // an actor without a runtime: nothing to say, the card still shows the call
  }
  if (typeof description !== "string" || description.trim() === "") return undefined;
  return sanitize(description.trim(), { ...WIRE_LIMITS, maxStringLength: DESCRIPTION_CHARS }) as string;
}

/** What the inspection API gives: an actor with its logic and parent (XState keeps `_parent` internal). */
type InspectedActor = AnyActorRef & { logic?: unknown; _parent?: InspectedActor };

/** Remembers an actor's last state value; true when this one differs. */
function changed(last: Map<AnyActorRef, string>, actor: AnyActorRef, value: unknown): boolean {
  const key = JSON.stringify(value);
  if (last.get(actor) === key) return false;
  last.set(actor, key);
  return true;
}

/**
 * Where a sub-agent actor runs in this agent's tree: the ids of the tool calls from this agent's own
 * down to the one that runs it (sub-agent → its tool's execution → the tool call → the tool
 * execution, or a shard of it → its agent, and so on up), and that call's tool; undefined for an
 * actor outside this agent's tree.
 */
function callPath(
  actor: InspectedActor,
  agentActor: AgentActor,
): { path: string[]; toolName?: string } | undefined {
  const path: string[] = [];
  let toolName: string | undefined;
  for (let current = actor._parent; current; current = current._parent) {
    if (current.logic !== toolCallMachine) continue;
    if (path.length === 0) {
      const context = (current.getSnapshot() as { context?: { toolName?: unknown } }).context;
      if (typeof context?.toolName === "string") toolName = context.toolName;
    }
    path.unshift(current.id);
    if (isToolCallOf(agentActor, current)) return { path, toolName };
  }
  return undefined;
}

export interface WireFeedOptions {
  /** Consecutive text deltas of one kind arriving within this window travel as one. Default 40 ms; 0 sends each. */
  coalesceMs?: number;
}

/**
 * Follows an agent and turns everything the page needs into {@link VisualizerMessage}s: its events,
 * its state value when it changes, and the state of each tool call actor. Deltas are coalesced, never
 * dropped: a pending delta is flushed before any other message. A hibernating agent is followed
 * from each actor it wakes with to the next. Returns the function that stops it.
 *
 * `send` runs inside the agent's run (some messages come from its inspection, in the middle of an
 * event's delivery) and from a timer: when it throws, the error is reported once on the console and
 * the feed stops, as the agent's `inspect` option is guarded; the run goes on.
 *
 * @example
 * ```ts
 * const stop = followAgent(agent, (message) => socket.send(JSON.stringify(message)));
 * ```
 */
export function followAgent(
  agent: Agent,
  send: (message: VisualizerMessage) => void,
  options: WireFeedOptions = {},
): () => void {
  const coalesceMs = options.coalesceMs ?? 40;
  let stopped = false;
  let failed = false;
  const feedFailed = (error: unknown) => {
    if (failed) return;
    failed = true;
    console.error(
      `agent-machine: the visualizer's feed of agent "${agent.id}" threw, and sends no more: ${errorText(error)}`,
    );
    stop();
  };
  const sink = guardInspector<VisualizerMessage>(send, feedFailed);
  const deliver = (message: VisualizerMessage) => sink.next?.(message);
  let pending: { t: number; kind: WireMessageUpdate["kind"]; delta: string; toolCallId?: string } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!pending) return;
    const { t, kind, delta, toolCallId } = pending;
    pending = undefined;
    deliver({ kind: "event", t, event: wireUpdate(kind, delta, toolCallId) });
  };
  const emit = (message: VisualizerMessage) => {
    flush();
    deliver(message);
  };

  // States each live tool call actor went through, to tell a refused call from a failed one.
  const toolHistory = new Map<string, Set<string>>();
  const refused = (toolCallId: string) => {
    const states = toolHistory.get(toolCallId);
    return states?.has("checkingPermission") === true && !states.has("executing");
  };

  // What stop() undoes, added as each part is set up (a feed may fail, and stop, while it is).
  const teardown: (() => void)[] = [];
  let inspection: Subscription | undefined;
  const stop = () => {
    stopped = true;
    flush();
    for (const end of teardown.splice(0)) end();
    inspection?.unsubscribe();
  };

  const events = agent.events$.subscribe((event) => {
    if (event.type === "message_update" && coalesceMs > 0) {
      const toolCallId = toolCallIdOf(event);
      if (pending && (pending.kind !== event.kind || pending.toolCallId !== toolCallId)) flush();
      if (pending) pending.delta += wireDelta(event);
      else pending = { t: Date.now(), kind: event.kind, delta: wireDelta(event), toolCallId };
      timer ??= setTimeout(flush, coalesceMs);
      return;
    }
    const message = toWire(event);
    if (event.type === "approval_requested" && agentActor) {
      const description = toolDescription(agentActor, agentsById, event);
      if (description !== undefined) (message.event as WireApprovalRequested).description = description;
    }
    // A call refused by the permission checker ends with its reason as an error, without ever executing.
    if (message.outcome === "error" && event.type === "tool_execution_end" && refused(event.toolCallId)) {
      message.outcome = "denied";
    }
    if (event.type === "tool_execution_end") toolHistory.delete(event.toolCallId);
    emit(message);
  });

  const toolStates = new Map<string, string>();
  const lastValues = new Map<AnyActorRef, string>();
  // Every agent of the tree by id (sub-agents at any depth), to find the tools a nested call waits with.
  const agentsById = new Map<string, AnyActorRef>();
  // The agent's actor, followed across hibernation (each wake brings a new actor and system).
  let agentActor: AgentActor | undefined;
  const inspect = (event: InspectionEvent) => {
    if (event.type !== "@xstate.snapshot" || !agentActor) return;
    const actor = event.actorRef as InspectedActor;
    const snapshot = event.snapshot as { value?: StateValue; status?: string };
    if (actor.logic === toolExecutionMachine && actor._parent === agentActor) {
      const value = snapshot.status === "active" ? (snapshot.value ?? null) : null;
      if (!changed(lastValues, actor, value)) return;
      if (value === null) lastValues.delete(actor);
      emit({ kind: "execution_state", t: Date.now(), value });
      return;
    }
    if (actor.logic === agentMachine && actor !== (agentActor as unknown)) {
      if (snapshot.status === "active") agentsById.set(actor.id, actor);
      else if (agentsById.get(actor.id) === actor) agentsById.delete(actor.id);
      const where = callPath(actor, agentActor);
      if (where === undefined || snapshot.value === undefined) return;
      if (!changed(lastValues, actor, snapshot.value)) return;
      if (snapshot.status !== "active") lastValues.delete(actor);
      emit({
        kind: "sub_agent_state",
        t: Date.now(),
        toolCallId: where.path.join(PATH_SEPARATOR),
        agentId: actor.id,
        value: snapshot.value,
        path: where.path,
        ...(where.toolName !== undefined && { toolName: where.toolName }),
      });
      return;
    }
    if (actor.logic !== toolCallMachine) return;
    // Only this agent's own calls, not a sub-agent's in its tree.
    if (!isToolCallOf(agentActor, actor)) return;
    const value = snapshot.value;
    const toolCallId = actor.id;
    if (typeof value !== "string" || toolStates.get(toolCallId) === value) return;
    if (value === "done") toolStates.delete(toolCallId);
    else {
      toolStates.set(toolCallId, value);
      if (!toolHistory.has(toolCallId)) toolHistory.set(toolCallId, new Set());
      toolHistory.get(toolCallId)!.add(value);
    }
    emit({ kind: "tool_state", t: Date.now(), toolCallId, value });
  };
  teardown.push(() => events.unsubscribe());
  const stopFollowingActors = followActors(agent, (actor) => {
    inspection?.unsubscribe();
    // Nothing of the last actor is open (an agent sleeps only when idle): its entries only hold it in memory.
    toolStates.clear();
    lastValues.clear();
    agentsById.clear();
    agentActor = actor;
    inspection = actor.system.inspect(guardInspector(inspect, feedFailed));
  });

  let lastState = "";
  let lastContext = "";
  teardown.push(stopFollowingActors);
  const states = agent.snapshot$.subscribe((snapshot) => {
    const key = JSON.stringify(snapshot.value);
    if (key !== lastState) {
      lastState = key;
      emit({ kind: "state", t: Date.now(), value: snapshot.value });
    }
    const context = contextDigest(snapshot.context);
    const contextKey = JSON.stringify(context);
    if (contextKey !== lastContext) {
      lastContext = contextKey;
      emit({ kind: "context", t: Date.now(), context });
    }
  });

  teardown.push(() => states.unsubscribe());
  // A feed that failed while it was being set up: what was set up after the failure goes too.
  if (stopped) stop();
  return stop;
}
