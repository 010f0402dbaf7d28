// The store of a thread on the session host (`agent-machine/http`), seen from the page: the same
// AgentView as an agent in the page, fed by a remote handle on the thread (remote-agent-handle.ts,
// the one client of the host's agent-machine protocol): the events and transcripts its streams carry
// fold into the view, and the actions are the handle's (run, steer, follow-up, answers, abort).
import type { PendingApproval } from "../agent/agent.js";
import { AgentCallError } from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { PromptInput } from "../core/options.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { AgentActions, AgentStore } from "./agent-store.js";
import { type AgentView, applyAgentEvent, emptyAgentView } from "./agent-view.js";
import { openRemoteHandle, type RemoteHandleOptions, type RemoteUpdate } from "./remote-agent-handle.js";

export type { AgentMachineFrame } from "./remote-agent-handle.js";

/** Where the thread is and how to reach it (as for `remoteAgentHandle`). */
export type RemoteAgentOptions = RemoteHandleOptions;

/**
 * A request the host refused: its HTTP status and the `{ error: { code, message } }` it answered.
 *
 * @deprecated Kept for one release: catch {@link AgentCallError}, the one error type of every side
 * of an agent (what the store throws is one). `instanceof RemoteAgentError` is true of every
 * `AgentCallError`, so code that catches it keeps working.
 *
 * @example
 * ```ts
 * if (error instanceof AgentCallError && error.code === "not_found") console.log("already decided");
 * ```
 */
export class RemoteAgentError extends AgentCallError {
  override name = "RemoteAgentError";
  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof AgentCallError;
  }
}

/**
 * The store of a thread on the session host: `useAgent(store)` shows it like an agent in the page.
 * It reads the thread's status and transcript when the first component subscribes (and follows a
 * run in progress from its start), streams each run it starts or resumes, and sends steering,
 * follow-ups, aborts and decisions on the host's side routes. The host's transcript is the truth:
 * each response opens and ends with it.
 *
 * @example
 * ```ts
 * const store = createRemoteAgentStore({ url: "/api/agent", threadId: "chat-1" });
 * function Chat() {
 *   const { messages, streaming, prompt } = useAgent(store);
 *   // ...
 * }
 * ```
 */
export function createRemoteAgentStore(options: RemoteAgentOptions): AgentStore {
  const handle = openRemoteHandle(
    options,
    (status, code, message) => new RemoteAgentError(status, code, message),
  );
  let view = emptyAgentView();
  const listeners = new Set<() => void>();
  let loaded: Promise<void> | undefined;
  const runEnds = new Set<(outcome: RunOutcome) => void>();

  const set = (next: AgentView) => {
    if (next === view) return;
    view = next;
    for (const listener of [...listeners]) listener();
  };

  handle.updates$.subscribe((update) => set(viewAfter(view, update)));
  handle.updates$.subscribe((update) => {
    if (update.type === "event" && update.event.type === "agent_end")
      for (const resolve of [...runEnds]) resolve(view.outcome!);
  });

  const load = async () => {
    const [status, messages] = await Promise.all([handle.status(), handle.messages()]);
    set({
      ...withMessages(view, messages),
      state: status.state,
      running: status.status !== "idle",
      pendingApprovals: samePending(view.pendingApprovals, status.pendingApprovals),
      pendingToolCalls: samePending(view.pendingToolCalls, status.pendingToolCalls),
    });
    // A run working: followed from its start (its events come as updates, like every stream's).
    if (status.status === "running" && status.runId !== undefined) {
      handle.eventsSince(status.runId, 0).subscribe({
        error: (error: unknown) => {
          if (!(error instanceof AgentCallError && error.code === "events_unavailable"))
            set({ ...view, error: asError(error) });
        },
      });
    }
  };

  const act = async <T>(action: () => Promise<T>): Promise<T> => {
    try {
      const result = await action();
      if (view.error) set({ ...view, error: undefined });
      return result;
    } catch (error) {
      set({ ...view, error: asError(error) });
      throw error;
    }
  };

  const queue = async (how: "steer" | "followUp", input: string | AgentMessage) => {
    const message = userMessageOf(input, how);
    await (how === "steer" ? handle.steer(message) : handle.followUp(message));
    const { steering, followUp } = view.queued;
    set({
      ...view,
      queued:
        how === "steer"
          ? { steering: [...steering, message], followUp }
          : { steering, followUp: [...followUp, message] },
    });
  };

  const actions: AgentActions = {
    prompt: (input) =>
      act(async () => {
        const ended = new Promise<RunOutcome>((resolve) => {
          const onEnd = (outcome: RunOutcome) => {
            runEnds.delete(onEnd);
            resolve(outcome);
          };
          runEnds.add(onEnd);
        });
        try {
          await handle.run(userMessageOf(input));
        } catch (error) {
          runEnds.clear();
          throw error;
        }
        return ended;
      }),
    steer: (input) => act(() => queue("steer", input)),
    followUp: (input) => act(() => queue("followUp", input)),
    approve: (toolCallId, options) =>
      act(() =>
        handle.answer([{ toolCallId, approve: options?.args !== undefined ? { args: options.args } : {} }]),
      ),
    deny: (toolCallId, reason) =>
      act(() => handle.answer([{ toolCallId, deny: reason !== undefined ? { reason } : {} }])),
    resolveToolCall: (toolCallId, result) => act(() => handle.answer([{ toolCallId, result }])),
    rejectToolCall: (toolCallId, reason) => act(() => handle.answer([{ toolCallId, reject: { reason } }])),
    abort: () =>
      act(async () => {
        await handle.abort();
      }),
  };

  return {
    getSnapshot: () => view,
    subscribe(listener) {
      listeners.add(listener);
      loaded ??= load().catch((error) => set({ ...view, error: asError(error) }));
      return () => {
        listeners.delete(listener);
      };
    },
    actions,
  };
}

/** The view after what the handle read: an event, the host's transcript (and waiting calls), a broken stream. */
function viewAfter(view: AgentView, update: RemoteUpdate): AgentView {
  if (update.type === "broken") return { ...view, error: update.error };
  if (update.type === "thread") {
    const next = withMessages(view, update.messages);
    if (!update.waiting) return next;
    return {
      ...next,
      pendingApprovals: samePending(next.pendingApprovals, update.waiting.approvals),
      pendingToolCalls: samePending(next.pendingToolCalls, update.waiting.toolCalls),
    };
  }
  const { event } = update;
  let next = withRemoteState(applyAgentEvent(view, event), event);
  if (event.type === "message_end" && !event.discarded)
    next = withMessages(next, [...next.messages, event.message]);
  if (event.type === "message_start" && event.message.role === "user")
    next = withoutQueued(next, event.message.id);
  return next;
}

/**
 * The user message a prompt or steer sends, with an id of our own (so its echo is recognised);
 * queued ones carry the queue's `source`.
 */
function userMessageOf(input: PromptInput | AgentMessage, queue?: "steer" | "followUp"): UserMessage {
  const message = Array.isArray(input) ? input.at(-1) : input;
  const id =
    (typeof message === "object" && message?.id) ||
    `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const content =
    typeof message === "string"
      ? message
      : message && (message.role === "user" || message.role === "custom")
        ? message.content
        : undefined;
  if (content === undefined) throw new TypeError("A remote thread takes text or a user message");
  return { role: "user", content, timestamp: Date.now(), id, ...(queue && { source: queue }) };
}

/** The machine state as the events tell it (the host's status gives it exactly on load). */
function withRemoteState(view: AgentView, event: AgentEvent): AgentView {
  const state =
    event.type === "agent_start"
      ? "running.turnGate"
      : event.type === "message_start" && event.message.role === "assistant"
        ? "running.streaming"
        : event.type === "tool_execution_start"
          ? "running.executing"
          : event.type === "agent_end"
            ? "idle"
            : view.state;
  return state === view.state ? view : { ...view, state, running: state !== "idle" };
}

/**
 * The transcript `messages`, keeping the objects the view already has for the same ids (unless
 * the server's is another version of it: a durable thread shows a waiting turn's calls before the
 * run stores that turn's message, under the same id).
 */
function withMessages(view: AgentView, messages: readonly AgentMessage[]): AgentView {
  const known = new Map(view.messages.map((m) => [m.id, m]));
  const seen = new Set<string | undefined>();
  const next = messages
    .filter((m) => !seen.has(m.id) && seen.add(m.id))
    .map((m) => {
      const had = m.id !== undefined ? known.get(m.id) : undefined;
      return had && sameVersion(had, m) ? had : m;
    });
  const same = next.length === view.messages.length && next.every((m, i) => m === view.messages[i]);
  return same ? view : { ...view, messages: next };
}

function sameVersion(a: AgentMessage, b: AgentMessage): boolean {
  return a.role === b.role && a.timestamp === b.timestamp && a.content.length === b.content.length;
}

function withoutQueued(view: AgentView, id: string | undefined): AgentView {
  if (id === undefined) return view;
  const { steering, followUp } = view.queued;
  if (!steering.some((m) => m.id === id) && !followUp.some((m) => m.id === id)) return view;
  return {
    ...view,
    queued: { steering: steering.filter((m) => m.id !== id), followUp: followUp.filter((m) => m.id !== id) },
  };
}

function samePending(previous: readonly PendingApproval[], next: readonly PendingApproval[]) {
  const same =
    previous.length === next.length && previous.every((p, i) => p.toolCallId === next[i]!.toolCallId);
  return same ? previous : next;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
