// The store of a thread on the session host (`agent-machine/http`), seen from the page: the same
// AgentView as an agent in the page, fed by the host's agent-machine protocol (the agent's own
// events as server-sent events, `agentMachineProtocol()`), its side routes for what a run takes
// while it works (steer, follow-up, abort, decisions) and its status route for the transcript.
import type { PendingApproval } from "../agent/agent.js";
import { AgentCallError } from "../core/agent-handle.js";
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage, UserMessage } from "../core/messages.js";
import type { PromptInput } from "../core/options.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { ToolResult } from "../core/tool.js";
import type { AgentActions, AgentStore } from "./agent-store.js";
import { type AgentView, applyAgentEvent, emptyAgentView } from "./agent-view.js";
import { sseFrames } from "./remote-agent-handle.js";

/** Where the thread is and how to reach it. */
export interface RemoteAgentOptions {
  /** The host's base URL (its `basePath`), e.g. `"/api/agent"` or `"http://127.0.0.1:3000/api"`. */
  url: string;
  /** The thread's id: the host makes its agent on the first prompt. */
  threadId: string;
  /** Headers for every request (your authentication), or a function that makes them each time. */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/** A frame of the agent-machine protocol (`data: {...}` of the host's event stream). */
export type AgentMachineFrame =
  | { type: "open"; kind: "run" | "continuation" | "replay"; runId?: string; messages: AgentMessage[] }
  | { type: "event"; seq: number; event: AgentEvent }
  | {
      type: "close";
      ending:
        | { kind: "end"; messages: AgentMessage[] }
        | {
            kind: "quiescent";
            approvals: PendingApproval[];
            toolCalls: PendingApproval[];
            messages: AgentMessage[];
          }
        | { kind: "gone"; messages: AgentMessage[] };
    };

/** What `GET {url}/threads/{id}` answers. */
interface ThreadStatusBody {
  status: "idle" | "running" | "waiting";
  state: string;
  pendingApprovals: PendingApproval[];
  pendingToolCalls: PendingApproval[];
  messages: AgentMessage[];
}

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
 * each response ends with it.
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
  const base = `${options.url.replace(/\/+$/, "")}/threads/${encodeURIComponent(options.threadId)}`;
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));
  let view = emptyAgentView();
  const listeners = new Set<() => void>();
  /** The response being read, if any: while it is open, the run's events arrive on it. */
  let stream: AbortController | undefined;
  let loaded: Promise<void> | undefined;
  const runEnds = new Set<(outcome: RunOutcome) => void>();

  const set = (next: AgentView) => {
    if (next === view) return;
    view = next;
    for (const listener of [...listeners]) listener();
  };

  const headers = (json: boolean): Record<string, string> => ({
    ...(typeof options.headers === "function" ? options.headers() : options.headers),
    ...(json && { "content-type": "application/json" }),
  });

  const request = async (method: "GET" | "POST", path: string, body?: unknown, signal?: AbortSignal) => {
    const response = await doFetch(`${base}${path}`, {
      method,
      headers: headers(body !== undefined),
      ...(body !== undefined && { body: JSON.stringify(body) }),
      ...(signal && { signal }),
    });
    if (!response.ok) throw await refusalOf(response);
    return response;
  };

  const applyFrame = (frame: AgentMachineFrame) => {
    if (frame.type === "open") return set(withMessages(view, frame.messages));
    if (frame.type === "event") {
      const event = frame.event;
      let next = withRemoteState(applyAgentEvent(view, event), event);
      if (event.type === "message_end" && !event.discarded)
        next = withMessages(next, [...next.messages, event.message]);
      if (event.type === "message_start" && event.message.role === "user")
        next = withoutQueued(next, event.message.id);
      set(next);
      if (event.type === "agent_end") for (const resolve of [...runEnds]) resolve(next.outcome!);
      return;
    }
    const { ending } = frame;
    let next = withMessages(view, ending.messages);
    if (ending.kind === "quiescent") {
      next = {
        ...next,
        pendingApprovals: samePending(next.pendingApprovals, ending.approvals),
        pendingToolCalls: samePending(next.pendingToolCalls, ending.toolCalls),
      };
    }
    set(next);
  };

  /** Reads one event-stream response to its end, applying each frame. */
  const follow = async (response: Response, controller: AbortController) => {
    stream = controller;
    try {
      for await (const frame of sseFrames(response)) applyFrame(frame as AgentMachineFrame);
    } catch (error) {
      if (!controller.signal.aborted) set({ ...view, error: asError(error) });
    } finally {
      if (stream === controller) stream = undefined;
    }
  };

  /** Follows the run in progress from the start of the host's current response, if there is one. */
  const reconnect = async () => {
    if (stream) return;
    const controller = new AbortController();
    const response = await request("GET", "/events", undefined, controller.signal);
    if (response.status === 204 || !response.body) return;
    await follow(response, controller);
  };

  const load = async () => {
    const response = await doFetch(base, { headers: headers(false) });
    if (response.status === 404) return; // a thread the host does not know yet: the first prompt makes it
    if (!response.ok) throw await refusalOf(response);
    const status = (await response.json()) as ThreadStatusBody;
    set({
      ...withMessages(view, status.messages),
      state: status.state,
      running: status.status !== "idle",
      pendingApprovals: samePending(view.pendingApprovals, status.pendingApprovals),
      pendingToolCalls: samePending(view.pendingToolCalls, status.pendingToolCalls),
    });
    if (status.status === "running")
      void reconnect().catch((error) => set({ ...view, error: asError(error) }));
  };

  /** Starts or resumes a run with a request to the protocol route, and follows its response. */
  const run = async (body: object) => {
    const controller = new AbortController();
    const response = await request("POST", "/run", body, controller.signal);
    void follow(response, controller);
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

  /** An answer to a pending call: on the open response's run when one is open, else it resumes the run. */
  const answer = async (route: string, body: Record<string, unknown>, resume: object) => {
    if (stream) {
      await request("POST", route, body);
      return;
    }
    await run(resume);
  };

  const actions: AgentActions = {
    prompt: (input) =>
      act(async () => {
        const message = userMessageOf(input);
        const ended = new Promise<RunOutcome>((resolve) => {
          const onEnd = (outcome: RunOutcome) => {
            runEnds.delete(onEnd);
            resolve(outcome);
          };
          runEnds.add(onEnd);
        });
        try {
          await run({ message });
        } catch (error) {
          runEnds.clear();
          throw error;
        }
        return ended;
      }),
    steer: (input) => act(() => queue("steer", input)),
    followUp: (input) => act(() => queue("follow-up", input)),
    approve: (toolCallId, options) =>
      act(() =>
        answer(
          "/approve",
          { toolCallId, ...(options?.args !== undefined && { args: options.args }) },
          {
            approvals: [
              { toolCallId, approved: true, ...(options?.args !== undefined && { args: options.args }) },
            ],
          },
        ),
      ),
    deny: (toolCallId, reason) =>
      act(() =>
        answer(
          "/deny",
          { toolCallId, ...(reason !== undefined && { reason }) },
          { approvals: [{ toolCallId, approved: false, ...(reason !== undefined && { reason }) }] },
        ),
      ),
    resolveToolCall: (toolCallId, result: string | ToolResult) =>
      act(() => answer("/tool-result", { toolCallId, result }, { toolResults: [{ toolCallId, result }] })),
    rejectToolCall: (toolCallId, reason) =>
      act(() =>
        answer(
          "/tool-result",
          { toolCallId, error: reason },
          { toolResults: [{ toolCallId, error: reason }] },
        ),
      ),
    abort: () =>
      act(async () => {
        // A JSON body like every POST: the host refuses any other (a cross-site form could send it).
        await request("POST", "/abort", {});
      }),
  };

  const queue = async (route: "steer" | "follow-up", input: string | AgentMessage) => {
    const message = userMessageOf(input);
    await request("POST", `/${route}`, message);
    const queued: UserMessage = {
      role: "user",
      content: message.content,
      timestamp: Date.now(),
      id: message.id,
      source: route === "steer" ? "steer" : "followUp",
    };
    const { steering, followUp } = view.queued;
    set({
      ...view,
      queued:
        route === "steer"
          ? { steering: [...steering, queued], followUp }
          : { steering, followUp: [...followUp, queued] },
    });
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

/** `{ content, id }` of what a prompt or steer takes (an id of our own, so its echo is recognised). */
function userMessageOf(input: PromptInput | AgentMessage): { content: UserMessage["content"]; id: string } {
  const message = Array.isArray(input) ? input.at(-1) : input;
  const id =
    (typeof message === "object" && message?.id) ||
    `ui-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  if (typeof message === "string") return { content: message, id };
  if (message && (message.role === "user" || message.role === "custom"))
    return { content: message.content, id };
  throw new TypeError("A remote thread takes text or a user message");
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

// Still named RemoteAgentError for one release (code may read error.name); an AgentCallError all the same.
async function refusalOf(response: Response): Promise<AgentCallError> {
  let code = "http_error";
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string } };
    code = body.error?.code ?? code;
    message = body.error?.message ?? message;
  } catch {}
  return new RemoteAgentError(response.status, code, message);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
