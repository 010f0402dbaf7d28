// The React hooks: `useAgent` reads an agent's view (all of it, or the part a selector picks, so a
// component re-renders only when its part changes) and `useAgentActions` its actions alone. Built
// on React's `useSyncExternalStore`, the same primitive XState's `useSelector` uses: an agent's
// actor is replaced when it rests or hibernates, and a remote thread has none, so the hooks follow
// a store instead of an actor.
import { useCallback, useMemo, useRef, useSyncExternalStore } from "react";
import type { Agent } from "../agent/agent.js";
import { type AgentActions, type AgentStore, createAgentStore } from "./agent-store.js";
import type { AgentView } from "./agent-view.js";

/** An agent in the page, or any {@link AgentStore} (e.g. a remote thread's). */
export type AgentSource = Agent | AgentStore;

const stores = new WeakMap<Agent, AgentStore>();

/**
 * The store `useAgent` uses for `source`: the store itself, or the one shared by every component
 * that reads this agent (one subscription to the agent, however many components).
 *
 * @example
 * ```ts
 * const store = agentStoreOf(agent);
 * store.getSnapshot().state; // "idle"
 * ```
 */
export function agentStoreOf(source: AgentSource): AgentStore {
  if (isStore(source)) return source;
  let store = stores.get(source);
  if (!store) stores.set(source, (store = createAgentStore(source)));
  return store;
}

/**
 * An agent's live view and its actions. With a `selector`, only what it picks: the component
 * re-renders when that changes (compared with `Object.is`, or `isEqual`), not on every text delta.
 *
 * @example
 * ```tsx
 * function Chat({ agent }: { agent: Agent }) {
 *   const { messages, streaming, running, prompt, abort } = useAgent(agent);
 *   // ...
 * }
 * function ApprovalCount({ agent }: { agent: Agent }) {
 *   const count = useAgent(agent, (view) => view.pendingApprovals.length);
 *   return <span>{count}</span>;
 * }
 * ```
 */
export function useAgent(source: AgentSource): AgentView & AgentActions;
export function useAgent<T>(
  source: AgentSource,
  selector: (view: AgentView) => T,
  isEqual?: (a: T, b: T) => boolean,
): T;
export function useAgent<T>(
  source: AgentSource,
  selector?: (view: AgentView) => T,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T | (AgentView & AgentActions) {
  const store = agentStoreOf(source);
  const memo = useRef<{ view: AgentView; selector: unknown; selected: unknown } | undefined>(undefined);
  const getSelected = useCallback(() => {
    const view = store.getSnapshot();
    if (!selector) return view;
    const last = memo.current;
    if (last && last.view === view && last.selector === selector) return last.selected as T;
    const next = selector(view);
    // An equal selection keeps the last one's identity: React sees no change and does not render.
    const selected = last && isEqual(last.selected as T, next) ? (last.selected as T) : next;
    memo.current = { view, selector, selected };
    return selected;
  }, [store, selector, isEqual]);
  const selected = useSyncExternalStore(store.subscribe, getSelected, getSelected);
  const whole = useMemo(
    () => (selector ? undefined : { ...(selected as AgentView), ...store.actions }),
    [selector, selected, store],
  );
  return whole ?? (selected as T);
}

/**
 * The actions alone: a component that only sends (a steer box, an abort button) and never
 * re-renders for the agent.
 *
 * @example
 * ```tsx
 * const { steer, abort } = useAgentActions(agent);
 * ```
 */
export function useAgentActions(source: AgentSource): AgentActions {
  return agentStoreOf(source).actions;
}

function isStore(source: AgentSource): source is AgentStore {
  return typeof (source as AgentStore).getSnapshot === "function" && "actions" in source;
}
