// Calls waiting at any depth: a sub-agent's call that waits for approval (or a client's result)
// waits in the child, and is listed and answered through every agent above it. At the top its id is
// the path of call ids joined by "/" (`"call_parent/call_child"`): unique in the tree even when two
// models draw the same ids, and routed one level down per segment.
import type { AgentEvent } from "../core/events.js";
import type { AgentRuntime, NestedAgent, NestedPending } from "../core/runtime.js";

/** Separates the call ids of a nested call's id (`parentCall/childCall`). */
export const PATH_SEPARATOR = "/";

/**
 * Registers a sub-agent running in call `toolCallId` of the agent of `runtime`; returns the
 * function that removes it (when the call ends).
 *
 * @example
 * ```ts
 * const unregister = registerSubAgent(runtime, ctx.toolCallId, child);
 * try { await child.prompt(task); } finally { unregister(); }
 * ```
 */
export function registerSubAgent(runtime: AgentRuntime, toolCallId: string, child: NestedAgent): () => void {
  const registry = (runtime.subAgents ??= new Map());
  registry.set(toolCallId, child);
  return () => {
    if (registry.get(toolCallId) === child) registry.delete(toolCallId);
  };
}

/**
 * The calls waiting in the sub-agents of an agent, at every depth, with their path from it.
 *
 * @example
 * ```ts
 * nestedPending(runtime, "approvals"); // [{ toolCallId: "p1/c1", path: ["p1", "c1"], agents: ["researcher-p1"], ... }]
 * ```
 */
export function nestedPending(runtime: AgentRuntime, kind: "approvals" | "toolCalls"): NestedPending[] {
  if (!runtime.subAgents?.size) return [];
  const all: NestedPending[] = [];
  for (const [callId, child] of runtime.subAgents) {
    const pending = kind === "approvals" ? child.pendingApprovals() : child.pendingToolCalls();
    for (const call of pending) all.push(prefixed(callId, child.id, call));
  }
  return all;
}

/**
 * A waiting call of a child, as its parent names it: its id and path prefixed with the parent's call.
 *
 * @example
 * ```ts
 * prefixed("p1", "researcher-p1", { toolCallId: "c1", toolName: "refund", args }); // toolCallId "p1/c1"
 * ```
 */
export function prefixed<T extends NestedPending>(callId: string, agentId: string, call: T): T {
  return {
    ...call,
    toolCallId: `${callId}${PATH_SEPARATOR}${call.toolCallId}`,
    path: [callId, ...(call.path ?? [call.toolCallId])],
    agents: [agentId, ...(call.agents ?? [])],
  };
}

/**
 * The sub-agent a nested call id leads to, and the id the call has in it; `undefined` when the id
 * names no running sub-agent's call.
 *
 * @example
 * ```ts
 * const route = routeNested(runtime, "p1/c1"); // { child, rest: "c1" }
 * route?.child.approve(route.rest);
 * ```
 */
export function routeNested(
  runtime: AgentRuntime,
  toolCallId: string,
): { child: NestedAgent; rest: string } | undefined {
  const at = toolCallId.indexOf(PATH_SEPARATOR);
  if (at <= 0) return undefined;
  const child = runtime.subAgents?.get(toolCallId.slice(0, at));
  return child ? { child, rest: toolCallId.slice(at + 1) } : undefined;
}

/** The child's events that its parent passes on (prefixed): what waits in it, and what was decided. */
const SURFACED = new Set<AgentEvent["type"]>([
  "approval_requested",
  "approval_decided",
  "tool_result_requested",
]);

/**
 * The event a parent publishes for one of its sub-agent's, when it is one the top must see (a call
 * waiting for approval or a client's result, a decision on one): the same event, its call id and
 * path prefixed with the parent's call. `undefined` for the others.
 *
 * @example
 * ```ts
 * const surfaced = surfacedEvent("p1", child.id, event);
 * if (surfaced) runtime.publish(surfaced);
 * ```
 */
export function surfacedEvent(callId: string, agentId: string, event: AgentEvent): AgentEvent | undefined {
  if (!SURFACED.has(event.type)) return undefined;
  return prefixed(callId, agentId, event as AgentEvent & NestedPending) as AgentEvent;
}
