// The store behind `useAgent(agent)` for an agent running in the page: an external store in React's
// sense (`subscribe` + `getSnapshot`), usable without React too. It follows the agent without
// holding on to it: events from `events$`, the machine's state, transcript and queues from each
// actor the agent wakes with (`followActors`, which never wakes a hibernated agent and lets go
// when the last subscriber leaves).
import type { Subscription } from "rxjs";
import type { Agent, AgentActor, AgentSnapshot, PendingApproval } from "../agent/agent.js";
import { followActors } from "../agent/follow-actors.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { PromptInput } from "../core/options.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { ToolResult } from "../core/tool.js";
import { readTranscript } from "../rules/transcript.js";
import { type AgentView, applyAgentEvent, emptyAgentView, type ToolCallView } from "./agent-view.js";

/**
 * What a UI can ask of an agent. Each returns a promise that rejects with the agent's refusal (an
 * approval already decided, a run already going on, a host that answered 4xx) and sets the view's
 * `error`; the next action that succeeds clears it.
 */
export interface AgentActions {
  /** Starts a run; resolves with its outcome once it ends (see `agent.prompt`). */
  prompt(input: PromptInput): Promise<RunOutcome>;
  /** Queues a message the running agent takes after the current turn (or tool group). */
  steer(input: string | AgentMessage): Promise<void>;
  /** Queues a message the agent takes when it would otherwise stop. */
  followUp(input: string | AgentMessage): Promise<void>;
  /** Lets a pending call run; with `args`, with the arguments a human corrected. */
  approve(toolCallId: string, options?: { args?: unknown }): Promise<void>;
  /** Refuses a pending call; the model reads the reason. */
  deny(toolCallId: string, reason?: string): Promise<void>;
  /** Answers a call of a client-run tool with what the page computed. */
  resolveToolCall(toolCallId: string, result: string | ToolResult): Promise<void>;
  /** Answers a call of a client-run tool with an error the model reads. */
  rejectToolCall(toolCallId: string, reason: string): Promise<void>;
  /** Stops the current run and drops what is queued. */
  abort(): Promise<void>;
}

/**
 * An agent's {@link AgentView}, kept up to date, and its actions: what `useAgent` reads. `subscribe`
 * and `getSnapshot` are the pair React's `useSyncExternalStore` takes.
 */
export interface AgentStore {
  /** The current view (the same object until something shown changes). */
  getSnapshot(): AgentView;
  /** Calls `listener` after each change; returns the function that stops it. */
  subscribe(listener: () => void): () => void;
  /** The actions, bound: hand them to event handlers as they are. */
  readonly actions: AgentActions;
}

/**
 * The store of an agent running in the page (`createAgent` from `agent-machine/browser`). While
 * something subscribes it follows the agent's events and state; a subscriber that comes in the
 * middle of a run gets the run so far (the streaming text, the calls in flight) from the agent's
 * replay buffer (`agent.eventsSince`). `useAgent(agent)` makes one per agent for you.
 *
 * @example
 * ```ts
 * const store = createAgentStore(agent);
 * const stop = store.subscribe(() => console.log(store.getSnapshot().streaming?.text));
 * await store.actions.prompt("Hi");
 * stop();
 * ```
 */
export function createAgentStore(agent: Agent): AgentStore {
  let view = refreshed(agent, emptyAgentView());
  const listeners = new Set<() => void>();
  let following: { events: Subscription; stopFollowing: () => void } | undefined;
  let actorSubscription: { unsubscribe(): void } | undefined;
  /** The transcript view the last snapshot held: a new one means the transcript changed. */
  let seenMessages: readonly AgentMessage[] | undefined;

  const set = (next: AgentView) => {
    if (next === view) return;
    view = next;
    for (const listener of [...listeners]) listener();
  };

  const onSnapshot = (snapshot: AgentSnapshot) => {
    const { context } = snapshot;
    const state = stateName(snapshot.value);
    let next = view;
    if (state !== view.state) next = { ...next, state, running: state.startsWith("running") };
    if (context.messages !== seenMessages) {
      seenMessages = context.messages;
      const messages = sameList(view.messages, readTranscript(context.messages));
      if (messages !== view.messages) next = { ...next, messages };
    }
    const steering = sameList(view.queued.steering, context.steeringQueue);
    const followUp = sameList(view.queued.followUp, context.followUpQueue);
    if (steering !== view.queued.steering || followUp !== view.queued.followUp) {
      next = { ...next, queued: { steering, followUp } };
    }
    set(next);
  };

  const followActor = (actor: AgentActor) => {
    actorSubscription?.unsubscribe();
    // A new actor starts from its snapshot (woken or restored): read it before it moves on.
    onSnapshot(actor.getSnapshot());
    actorSubscription = actor.subscribe({
      next: onSnapshot,
      error: () => undefined,
      // Let go (resting, hibernating, stopped): the agent answers for itself again.
      complete: () => set(refreshed(agent, view)),
    });
  };

  const attach = () => {
    seenMessages = undefined;
    let next = refreshed(agent, view);
    // In the middle of a run: the run so far, from the agent's replay buffer, so the streaming text
    // and the calls in flight show as they would have live. It answers synchronously, so no event
    // can slip between it and the live subscription below.
    const replay = replayedRun(agent);
    if (replay) {
      let replayed: AgentView = {
        ...next,
        streaming: undefined,
        toolCalls: [],
        pendingApprovals: [],
        pendingToolCalls: [],
      };
      for (const event of replay) replayed = applyAgentEvent(replayed, event);
      // What the replay rebuilt as it was keeps its identity: selectors of it do not re-render.
      next = {
        ...replayed,
        toolCalls: sameCalls(next.toolCalls, replayed.toolCalls),
        pendingApprovals: samePending(next.pendingApprovals, replayed.pendingApprovals),
        pendingToolCalls: samePending(next.pendingToolCalls, replayed.pendingToolCalls),
      };
    }
    set(next);
    following = {
      events: agent.events$.subscribe((event) => set(applyAgentEvent(view, event))),
      stopFollowing: followActors(agent, followActor),
    };
  };

  const detach = () => {
    following?.events.unsubscribe();
    following?.stopFollowing();
    actorSubscription?.unsubscribe();
    following = undefined;
    actorSubscription = undefined;
  };

  const act = async <T>(action: () => T | Promise<T>): Promise<T> => {
    try {
      const result = await action();
      if (view.error) set({ ...view, error: undefined });
      return result;
    } catch (error) {
      set({ ...view, error: error instanceof Error ? error : new Error(String(error)) });
      throw error;
    }
  };

  return {
    getSnapshot() {
      // Nobody follows the agent: read it now (React renders once before it subscribes).
      if (!following) view = refreshed(agent, view);
      return view;
    },
    subscribe(listener) {
      listeners.add(listener);
      if (listeners.size === 1 && !following) attach();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) detach();
      };
    },
    actions: {
      prompt: (input) => act(() => agent.prompt(input)),
      steer: (input) => act(() => agent.steer(input)),
      followUp: (input) => act(() => agent.followUp(input)),
      approve: (toolCallId, options) => act(() => agent.approve(toolCallId, options)),
      deny: (toolCallId, reason) => act(() => agent.deny(toolCallId, reason)),
      resolveToolCall: (toolCallId, result) => act(() => agent.resolveToolCall(toolCallId, result)),
      rejectToolCall: (toolCallId, reason) => act(() => agent.rejectToolCall(toolCallId, reason)),
      abort: () => act(() => agent.abort()),
    },
  };
}

/** The events of the run in progress (or the last one, while kept), or nothing to replay. */
function replayedRun(agent: Agent): AgentEvent[] | undefined {
  const runId = agent.runId;
  if (runId === undefined) return undefined;
  const events: AgentEvent[] = [];
  try {
    agent
      .eventsSince(runId, 0)
      .subscribe({ next: ({ event }) => events.push(event), error: () => undefined })
      .unsubscribe();
  } catch {
    // Its first events left the bounded buffer: the pending calls come from the agent instead.
    return undefined;
  }
  return events.length > 0 ? events : undefined;
}

/**
 * The view with what the agent itself answers (state, transcript, queues, pending calls), reading
 * nothing that would wake it; parts that did not change keep their identity, and so does the view.
 */
function refreshed(agent: Agent, view: AgentView): AgentView {
  const state = agent.state;
  const running = state.startsWith("running");
  const messages = sameList(view.messages, agent.messages);
  const queued = agent.queued;
  const steering = sameList(view.queued.steering, queued.steering);
  const followUp = sameList(view.queued.followUp, queued.followUp);
  const pendingApprovals = samePending(view.pendingApprovals, agent.pendingApprovals());
  const pendingToolCalls = samePending(view.pendingToolCalls, agent.pendingToolCalls());
  const toolCalls = running ? callsWithPending(view.toolCalls, pendingApprovals, pendingToolCalls) : [];
  const next: AgentView = {
    ...view,
    state,
    running,
    messages,
    queued:
      steering === view.queued.steering && followUp === view.queued.followUp
        ? view.queued
        : { steering, followUp },
    pendingApprovals,
    pendingToolCalls,
    toolCalls: toolCalls.length === 0 && view.toolCalls.length === 0 ? view.toolCalls : toolCalls,
    streaming: running ? view.streaming : undefined,
  };
  const changed = (Object.keys(next) as (keyof AgentView)[]).some((key) => next[key] !== view[key]);
  return changed ? next : view;
}

/** The calls in flight, with a call for each pending decision the view does not know of yet. */
function callsWithPending(
  calls: readonly ToolCallView[],
  approvals: readonly PendingApproval[],
  clientCalls: readonly PendingApproval[],
): readonly ToolCallView[] {
  const known = new Set(calls.map((c) => c.toolCallId));
  const missing = [
    ...approvals.map((p) => ({ ...p, phase: "awaitingApproval" as const })),
    ...clientCalls.map((p) => ({ ...p, phase: "awaitingResult" as const })),
  ].filter((p) => !known.has(p.toolCallId));
  return missing.length === 0 ? calls : [...calls, ...missing];
}

/** `previous` when `next` holds the same items (by identity), else a copy of `next`. */
function sameList<T>(previous: readonly T[], next: readonly T[]): readonly T[] {
  if (previous.length === next.length && previous.every((item, i) => item === next[i])) return previous;
  return next.slice();
}

/** `previous` when `next` holds equal calls (an empty list is an empty list). */
function sameCalls(
  previous: readonly ToolCallView[],
  next: readonly ToolCallView[],
): readonly ToolCallView[] {
  const same =
    previous.length === next.length &&
    previous.every((call, i) => JSON.stringify(call) === JSON.stringify(next[i]));
  return same ? previous : next;
}

/** `previous` when `next` names the same calls in the same order. */
function samePending(
  previous: readonly PendingApproval[],
  next: readonly PendingApproval[],
): readonly PendingApproval[] {
  const same =
    previous.length === next.length && previous.every((p, i) => p.toolCallId === next[i]!.toolCallId);
  return same ? previous : next;
}

function stateName(value: unknown): string {
  if (typeof value === "string") return value;
  const [key, child] = Object.entries(value as Record<string, unknown>)[0]!;
  return `${key}.${stateName(child)}`;
}
