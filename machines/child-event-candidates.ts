import type { AnyStateMachine, EventObject } from "xstate";

/** The event types XState gives a child's end: the child's id follows the prefix. */
const CHILD_EVENT_PREFIXES = ["xstate.done.actor.", "xstate.error.actor."] as const;

interface StateNodeLike {
  transitions: Map<string, unknown>;
  states: Record<string, StateNodeLike>;
  next(snapshot: unknown, event: EventObject): unknown;
}

/**
 * Makes `machine` work out the transitions for a child's done or error event once per state, not
 * once per child. XState remembers, for each state node, the transitions an event type may take,
 * keyed by the type, for the life of the process; a child's done event is typed with the child's id
 * (`xstate.done.actor.call_8f3…`), and a tool call's actor is named by its tool call id, unique per
 * call. So every call left an entry behind in the machine shared by every agent in the process
 * (some 350 bytes each: a service's memory grew with every tool call it ever ran), and each one
 * cost the work of finding its transitions anew. Here such an event whose type no transition names
 * exactly is looked up as the wildcard type (`xstate.done.actor.*`), which selects the same
 * transitions in the same order; a guard of those transitions sees that type, the rest of the
 * event as it came (actions get the event itself). A state node with a narrower wildcard under
 * the prefix (`xstate.done.actor.call.*`) is left as it is. The machine's state nodes are changed
 * in place; `machine.provide()` makes new ones, to be bounded in turn.
 *
 * @example
 * ```ts
 * export const agentMachine = agentSetup.createMachine({ ... });
 * boundChildEvents(agentMachine);
 * ```
 */
export function boundChildEvents(machine: AnyStateMachine): void {
  bound(machine.root as unknown as StateNodeLike);
}

function bound(node: StateNodeLike): void {
  const prefixes = CHILD_EVENT_PREFIXES.filter((prefix) => !hasNarrowerWildcard(node, prefix));
  if (prefixes.length > 0) {
    const next = node.next;
    node.next = function boundedNext(this: StateNodeLike, snapshot, event) {
      const type = event.type;
      for (const prefix of prefixes) {
        if (!type.startsWith(prefix) || type === `${prefix}*`) continue;
        if (this.transitions.has(type)) break;
        return next.call(this, snapshot, { ...event, type: `${prefix}*` });
      }
      return next.call(this, snapshot, event);
    };
  }
  for (const child of Object.values(node.states ?? {})) bound(child);
}

/** Whether a transition of `node` is named by a wildcard under `prefix` other than `prefix*`. */
function hasNarrowerWildcard(node: StateNodeLike, prefix: string): boolean {
  for (const descriptor of node.transitions.keys()) {
    if (descriptor.startsWith(prefix) && descriptor.endsWith(".*") && descriptor !== `${prefix}*`)
      return true;
  }
  return false;
}
