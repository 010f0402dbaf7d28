import { type AnyStateMachine, createActor } from "xstate";
import { sha256Hex } from "../core/sha256.js";

/**
 * What a persisted snapshot of a machine refers to, in a canonical, JSON-safe form: every state
 * node (id, type, initial state, history kind, invoked actors with their ids), the actors the
 * machine may invoke or spawn (machines among them described the same way, recursively), and the
 * shape of each machine's initial context (keys and value types, nested objects too) where it can
 * be computed from an empty input alone (the tool-call machine's needs an agent around it).
 *
 * Transitions, guards and actions are left out on purpose: a snapshot does not name them, so
 * changing them never makes an old snapshot unreadable.
 *
 * @example
 * ```ts
 * describeMachineStructure(agentMachine).states[0]; // { id: "agent", type: "compound", initial: ["agent.idle"], … }
 * ```
 */
export function describeMachineStructure(machine: AnyStateMachine): MachineStructure {
  return describe(machine);
}

/** See {@link describeMachineStructure}. */
export interface MachineStructure {
  id: string;
  states: StateStructure[];
  actors: { name: string; machine?: MachineStructure }[];
  /** The initial context's shape, when it can be computed without an agent around the machine. */
  context?: unknown;
}

interface StateStructure {
  id: string;
  type: string;
  initial?: string[];
  history?: string;
  invoke?: { id: string; src: string }[];
}

/**
 * A short, stable hash of {@link describeMachineStructure}: the same machine gives the same hash
 * in every process, and any change a persisted snapshot could notice gives another.
 *
 * @example
 * ```ts
 * machineStructureHash(agentMachine); // "3fa9c0e1b2d4"
 * ```
 */
export function machineStructureHash(machine: AnyStateMachine): string {
  const cached = hashes.get(machine);
  if (cached) return cached;
  // SHA-256 in plain JavaScript (not node:crypto) so that the agent also runs in a browser.
  const hash = sha256Hex(JSON.stringify(describeMachineStructure(machine))).slice(0, 12);
  hashes.set(machine, hash);
  return hash;
}

const hashes = new WeakMap<AnyStateMachine, string>();

interface StateNodeLike {
  id: string;
  type: string;
  history?: string | false;
  states: Record<string, StateNodeLike>;
  initial?: { target?: { id: string }[] };
  invoke: { id: string; src: unknown }[];
}

function describe(machine: AnyStateMachine): MachineStructure {
  const states: StateStructure[] = [];
  const visit = (node: StateNodeLike) => {
    const state: StateStructure = { id: node.id, type: node.type };
    const initial = node.initial?.target?.map((target) => target.id);
    if (initial?.length) state.initial = initial;
    if (node.history) state.history = node.history;
    if (node.invoke.length) {
      state.invoke = node.invoke.map((invoke) => ({
        id: invoke.id,
        src: typeof invoke.src === "string" ? invoke.src : "(inline)",
      }));
    }
    states.push(state);
    for (const key of Object.keys(node.states).sort()) visit(node.states[key]!);
  };
  visit(machine.root as unknown as StateNodeLike);

  const implementations = (machine as { implementations?: { actors?: Record<string, unknown> } })
    .implementations;
  const actors = Object.entries(implementations?.actors ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, logic]) => (isMachine(logic) ? { name, machine: describe(logic) } : { name }));

  const structure: MachineStructure = { id: machine.id, states, actors };
  const context = initialContext(machine);
  if (context !== undefined) structure.context = shapeOf(context);
  return structure;
}

function isMachine(logic: unknown): logic is AnyStateMachine {
  return typeof logic === "object" && logic !== null && "root" in logic && "config" in logic;
}

/** The context a machine starts with for an empty input, or `undefined` when it needs more. */
function initialContext(machine: AnyStateMachine): unknown {
  try {
    const snapshot = createActor(machine, { input: {} }).getSnapshot();
    return snapshot.status === "active" ? snapshot.context : undefined;
  } catch {
    return undefined;
  }
}

/** Keys and value types, recursively for plain objects; arrays are `"array"` whatever they hold. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return "array";
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const shape: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) shape[key] = shapeOf((value as Record<string, unknown>)[key]);
  return shape;
}
