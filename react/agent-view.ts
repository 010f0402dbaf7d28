// What a UI shows of an agent, as one immutable object: the AgentView. Each change makes a new view
// that keeps every part it did not change (the same array, the same object), so a component that
// selects one part re-renders only when that part changes. The folding of events into a view is
// here, as pure functions; the stores (agent-store.ts, remote-agent-store.ts) feed them.
import type { PendingApproval } from "../agent/agent.js";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage, AssistantMessage } from "../core/messages.js";
import { type RunOutcome, runOutcomeOf } from "../core/run-outcome.js";
import type { ToolResult } from "../core/tool.js";

/** A tool call the model is writing in the streaming message. */
export interface StreamingToolCall {
  toolCallId: string;
  toolName: string;
  /** The arguments' JSON as streamed so far (complete once `done`). */
  argsText: string;
  done: boolean;
}

/** The assistant message being streamed: what it said so far. */
export interface StreamingMessage {
  /** The message's id: the one it has in `messages` once it ends (a retried attempt keeps it). */
  id: string | undefined;
  text: string;
  thinking: string;
  toolCalls: readonly StreamingToolCall[];
}

/**
 * A tool call between its start and its result: `running`, waiting for a human's decision
 * (`awaitingApproval`), or waiting for the page to run it (`awaitingResult`, a client-run tool).
 */
export interface ToolCallView {
  toolCallId: string;
  toolName: string;
  /** What it runs with: the model's arguments, or the ones a human corrected at approval. */
  args: unknown;
  phase: "running" | "awaitingApproval" | "awaitingResult";
  /** The last progress line the tool reported (`tool_progress`). */
  progress?: string;
  /** The last partial result it published (`tool_execution_update`, e.g. a sub-agent's). */
  partialResult?: ToolResult;
}

/**
 * Everything a chat UI renders of one agent, kept up to date by an {@link AgentStore}. Parts that did
 * not change keep their identity from one view to the next: select the part you render.
 *
 * @example
 * ```tsx
 * const approvals = useAgent(agent, (view) => view.pendingApprovals);
 * ```
 */
export interface AgentView {
  /** The active state of the agent's statechart: `"idle"`, `"running.streaming"`, `"running.executing"`, … */
  state: string;
  /** A run is going on (`state` is under `running`). */
  running: boolean;
  /** The transcript: every message that entered it, in order (each with its `id`). */
  messages: readonly AgentMessage[];
  /** The assistant message being streamed, until it ends (then it is in `messages`). */
  streaming: StreamingMessage | undefined;
  /** Tool calls started and not yet answered, in the order they started. */
  toolCalls: readonly ToolCallView[];
  /** Calls waiting for `approve` / `deny`. */
  pendingApprovals: readonly PendingApproval[];
  /** Calls of client-run tools waiting for `resolveToolCall` / `rejectToolCall`. */
  pendingToolCalls: readonly PendingApproval[];
  /** Messages `steer` and `followUp` queued that no turn has taken yet. */
  queued: { steering: readonly AgentMessage[]; followUp: readonly AgentMessage[] };
  /** How the last run ended; `undefined` before the first and while one is going on. */
  outcome: RunOutcome | undefined;
  /** The last action of the store's that failed (cleared by the next one that succeeds). */
  error: Error | undefined;
}

/**
 * The view of an agent that has done nothing yet, or a starting point to set parts of.
 *
 * @example
 * ```ts
 * const view = { ...emptyAgentView(), messages: agent.messages };
 * ```
 */
export function emptyAgentView(): AgentView {
  return {
    state: "idle",
    running: false,
    messages: [],
    streaming: undefined,
    toolCalls: [],
    pendingApprovals: [],
    pendingToolCalls: [],
    queued: { steering: [], followUp: [] },
    outcome: undefined,
    error: undefined,
  };
}

/**
 * The view after one event of `agent.events$`: the streaming message, the calls in flight, the
 * pending decisions and the outcome. (The state, transcript and queues come from the agent's
 * snapshots: see `createAgentStore`.) Returns `view` itself when the event changes nothing shown.
 *
 * @example
 * ```ts
 * view = applyAgentEvent(view, { type: "tool_progress", toolCallId: "c1", toolName: "bash", text: "50%" });
 * ```
 */
export function applyAgentEvent(view: AgentView, event: AgentEvent): AgentView {
  switch (event.type) {
    case "agent_start":
      return view.outcome === undefined ? view : { ...view, outcome: undefined };
    case "message_start":
      if (event.message.role !== "assistant") return view;
      return { ...view, streaming: { id: event.message.id, text: "", thinking: "", toolCalls: [] } };
    case "message_update":
      return { ...view, streaming: updateStreaming(view.streaming, event) };
    case "message_end":
      return event.message.role === "assistant" && view.streaming ? { ...view, streaming: undefined } : view;
    case "tool_execution_start":
      return withCall(view, {
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        args: event.args,
        phase: "running",
      });
    case "approval_requested":
      return {
        ...withCall(view, callOf(event, "awaitingApproval")),
        pendingApprovals: withPending(view.pendingApprovals, event),
      };
    case "tool_result_requested":
      return {
        ...withCall(view, callOf(event, "awaitingResult")),
        pendingToolCalls: withPending(view.pendingToolCalls, event),
      };
    case "approval_decided": {
      const call = view.toolCalls.find((c) => c.toolCallId === event.toolCallId);
      const decided = {
        ...view,
        pendingApprovals: view.pendingApprovals.filter((p) => p.toolCallId !== event.toolCallId),
      };
      // A denied call ends at once (its `tool_execution_end` follows): only an approved one runs.
      if (!call || !event.approved) return decided;
      return withCall(decided, {
        ...call,
        phase: "running",
        ...(event.editedArgs !== undefined && { args: event.editedArgs }),
      });
    }
    case "tool_progress":
      return patchCall(view, event.toolCallId, { progress: event.text });
    case "tool_execution_update":
      return patchCall(view, event.toolCallId, { partialResult: event.partialResult });
    case "tool_execution_end":
      return withoutCall(view, event.toolCallId);
    case "agent_end":
      return {
        ...view,
        streaming: undefined,
        toolCalls: none(view.toolCalls),
        pendingApprovals: none(view.pendingApprovals),
        pendingToolCalls: none(view.pendingToolCalls),
        outcome: runOutcomeOf(event),
      };
    default:
      return view;
  }
}

function updateStreaming(
  streaming: StreamingMessage | undefined,
  event: AgentEventOf<"message_update">,
): StreamingMessage {
  const current = streaming ?? { id: event.message.id, text: "", thinking: "", toolCalls: [] };
  switch (event.kind) {
    case "text_delta":
      return { ...current, text: current.text + event.delta };
    case "thinking_delta":
      return { ...current, thinking: current.thinking + event.delta };
    case "toolcall_start": {
      const block = event.message.content.find((c) => c.type === "toolCall" && c.id === event.toolCallId);
      const toolName = block?.type === "toolCall" ? block.name : "";
      const call = { toolCallId: event.toolCallId, toolName, argsText: "", done: false };
      return { ...current, toolCalls: [...current.toolCalls, call] };
    }
    case "toolcall_delta":
    case "toolcall_end":
      return {
        ...current,
        toolCalls: current.toolCalls.map((call) =>
          call.toolCallId !== event.toolCallId
            ? call
            : event.kind === "toolcall_delta"
              ? { ...call, argsText: call.argsText + event.delta }
              : { ...call, argsText: argsTextOf(event.message, call), done: true },
        ),
      };
  }
}

/** The complete arguments once the call ended: the parsed ones, when no delta carried them. */
function argsTextOf(message: AssistantMessage, call: StreamingToolCall): string {
  if (call.argsText !== "") return call.argsText;
  const block = message.content.find((c) => c.type === "toolCall" && c.id === call.toolCallId);
  return block?.type === "toolCall" ? JSON.stringify(block.arguments) : "";
}

function callOf(
  event: { toolCallId: string; toolName: string; args: unknown },
  phase: ToolCallView["phase"],
): ToolCallView {
  return { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args, phase };
}

/** `view` with `call` added, or put in place of the call with its id (keeping the call's place). */
function withCall(view: AgentView, call: ToolCallView): AgentView {
  const index = view.toolCalls.findIndex((c) => c.toolCallId === call.toolCallId);
  if (index === -1) return { ...view, toolCalls: [...view.toolCalls, call] };
  const old = view.toolCalls[index]!;
  const merged = { ...old, ...call };
  return { ...view, toolCalls: view.toolCalls.with(index, merged) };
}

function patchCall(view: AgentView, toolCallId: string, patch: Partial<ToolCallView>): AgentView {
  const call = view.toolCalls.find((c) => c.toolCallId === toolCallId);
  return call ? withCall(view, { ...call, ...patch }) : view;
}

function withoutCall(view: AgentView, toolCallId: string): AgentView {
  const drop = <T extends { toolCallId: string }>(list: readonly T[]) =>
    list.some((item) => item.toolCallId === toolCallId)
      ? list.filter((item) => item.toolCallId !== toolCallId)
      : list;
  return {
    ...view,
    toolCalls: drop(view.toolCalls),
    pendingApprovals: drop(view.pendingApprovals),
    pendingToolCalls: drop(view.pendingToolCalls),
  };
}

/** The list with this call (once: a restored agent asks again for what it already asked). */
function withPending(list: readonly PendingApproval[], event: PendingApproval): readonly PendingApproval[] {
  if (list.some((p) => p.toolCallId === event.toolCallId)) return list;
  return [...list, { toolCallId: event.toolCallId, toolName: event.toolName, args: event.args }];
}

/** An empty list: the same one when it is already empty, so selectors of it do not re-render. */
function none<T>(list: readonly T[]): readonly T[] {
  return list.length === 0 ? list : [];
}
