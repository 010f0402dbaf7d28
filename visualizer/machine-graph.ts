import { type AnyStateMachine, and, not, or } from "xstate";

/** One state of a machine, as drawn by the visualizer. */
export interface GraphNode {
  /** The state node id, e.g. `"agent.running.streaming"`. */
  id: string;
  /** The state's key, e.g. `"streaming"`. */
  key: string;
  parent?: string;
  type: "atomic" | "compound" | "parallel" | "final" | "history";
  /** Id of the initial child state, for compound states. */
  initial?: string;
  /** Sources of the actors the state invokes (e.g. `"modelStream"`). */
  invokes: string[];
  entry: string[];
  exit: string[];
  /** Transitions that change no state (e.g. `STEER` while executing), as `"EVENT: action, …"`. */
  internal: string[];
  /** Box, in layout units (see {@link layoutMachineGraph}). */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One drawn transition: every transition between the same two states, merged. */
export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** One line per transition, e.g. `"CHECK [hasSteering]"`, `"always [limitReached]"`. */
  labels: string[];
  /** Only eventless (`always`) transitions. */
  eventless: boolean;
  /**
   * The label as drawn at first look: one line (see {@link edgeCaption}); `labels` has every
   * transition, shown on hover and on click.
   */
  lines: string[];
  /** SVG path data. */
  path: string;
  /** Where the label goes: its last line sits on `labelY` above or beside the edge, its first line below it. */
  labelX: number;
  labelY: number;
  /** Which side of the boxes the edge runs on: a label above the arc, below it, or beside a straight line. */
  route: "straight" | "above" | "below";
  /** How the label aligns on `labelX`: centred, or starting beside a vertical line. */
  anchor: "middle" | "start";
}

/** A machine's states and transitions with a layout, derived from the machine definition itself. */
export interface MachineGraph {
  id: string;
  /** Distance between two lines of an edge label, in layout units. */
  lineHeight: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

interface StateNodeLike {
  id: string;
  key: string;
  type: GraphNode["type"];
  parent?: StateNodeLike;
  states: Record<string, StateNodeLike>;
  initial?: { target?: readonly StateNodeLike[] };
  invoke: readonly { src: unknown; id?: string }[];
  entry: readonly unknown[];
  exit: readonly unknown[];
  transitions: Map<string, readonly TransitionLike[]>;
  always?: readonly TransitionLike[];
}

interface TransitionLike {
  eventType: string;
  target?: readonly StateNodeLike[];
  guard?: unknown;
  actions: readonly unknown[];
}

const LEAF_HEIGHT = 40;
/** Distance between the lines of one label: the 11px label font's box is ~13px tall, so they never touch. */
export const LINE_HEIGHT = 14;
const GAP_X = 40;
/** Approximate width of one label character at the page's 12px label font. */
const CHAR_WIDTH = 7;
const GAP_Y = 24;
const PAD = 18;
const HEADER = 24;
const ARC_ROOM = 0;
const MARGIN = 24;

/**
 * Derives the nodes and edges of a machine from its definition (`machine.root`) and lays them out
 * left to right: each compound state's children in columns by their longest path from the initial
 * state, so the main flow reads left to right, back edges arc below and long jumps arc above.
 *
 * @example
 * ```ts
 * const graph = layoutMachineGraph(agentMachine);
 * graph.nodes.find((n) => n.id === "agent.running.streaming"); // { x, y, width, height, invokes: ["modelStream"], … }
 * ```
 */
export function layoutMachineGraph(machine: AnyStateMachine, options: LayoutOptions = {}): MachineGraph {
  const root = machine.root as unknown as StateNodeLike;
  const nodes = new Map<string, GraphNode>();
  let transitions: Transition[] = [];

  const collect = (state: StateNodeLike) => {
    const internal: string[] = [];
    const all = [
      ...[...state.transitions.values()].flat(),
      ...(state.always ?? []).map((t) => ({ ...t, eventType: "" })),
    ];
    for (const transition of all) {
      const label = transitionLabel(transition);
      const targets = transition.target ?? [];
      if (targets.length === 0) {
        const actions = transition.actions.map(actionName).filter(Boolean).join(", ");
        internal.push(actions ? `${label}: ${actions}` : label);
      }
      for (const target of targets) {
        transitions.push({
          source: state.id,
          target: target.id,
          label,
          eventless: transition.eventType === "",
        });
      }
    }
    nodes.set(state.id, {
      id: state.id,
      key: state.key,
      ...(state.parent && { parent: state.parent.id }),
      type: state.type,
      ...(state.initial?.target?.[0] && { initial: state.initial.target[0].id }),
      invokes: state.invoke.map((i) => (typeof i.src === "string" ? i.src : (i.id ?? "actor"))),
      entry: state.entry.map(actionName).filter(Boolean),
      exit: state.exit.map(actionName).filter(Boolean),
      internal,
      x: 0,
      y: 0,
      width: 0,
      height: 0,
    });
    for (const child of Object.values(state.states)) collect(child);
  };
  collect(root);
  if (options.simple) transitions = simplify(nodes, transitions);

  const childrenOf = (id: string) => [...nodes.values()].filter((n) => n.parent === id);
  measure(root.id, nodes, childrenOf, transitions);
  const rootNode = nodes.get(root.id)!;
  place(root.id, MARGIN, MARGIN + ARC_ROOM, nodes, childrenOf, transitions);

  const edges = routeEdges(transitions, nodes);
  encloseArcs(nodes, edges);
  // Shift everything so the topmost box or arc sits at the margin.
  const boxes = [...nodes.values()].filter((n) => n.parent !== undefined);
  const top = Math.min(...boxes.map((n) => n.y), ...edges.map((e) => extentOf(e).top));
  const bottom = Math.max(...boxes.map((n) => n.y + n.height), ...edges.map((e) => extentOf(e).bottom));
  const dy = MARGIN - top;
  for (const node of nodes.values()) node.y += dy;
  for (const edge of edges) {
    edge.labelY += dy;
    edge.path = shiftPath(edge.path, dy);
  }
  rootNode.y = MARGIN;
  rootNode.height = bottom - top;
  return {
    id: root.id,
    lineHeight: LINE_HEIGHT,
    nodes: [...nodes.values()],
    edges,
    width: rootNode.width + MARGIN * 2,
    height: bottom - top + MARGIN * 2,
  };
}

/** Options of {@link layoutMachineGraph}. */
export interface LayoutOptions {
  /**
   * The chart at a glance: momentary states (left at once by an eventless transition, invoking
   * nothing) folded into their edges, which lead to where the state goes when no guard holds, and
   * every label in words (`stream done if has tool calls`). The full chart keeps everything.
   */
  simple?: boolean;
}

/**
 * Folds momentary states into their edges and puts labels in words (see {@link LayoutOptions.simple}).
 * A transition into a momentary state goes on to that state's fallback target; the momentary state's
 * guarded exits (the exceptions: a limit reached, a compaction needed) are left to the full chart.
 */
function simplify(nodes: Map<string, GraphNode>, transitions: Transition[]): Transition[] {
  const fallback = new Map<string, string>();
  for (const node of nodes.values()) {
    if (node.type !== "atomic" || node.invokes.length > 0) continue;
    const out = transitions.filter((t) => t.source === node.id);
    if (out.length === 0 || !out.every((t) => t.eventless)) continue;
    const plain = out.filter((t) => t.label === "always").at(-1);
    if (plain) fallback.set(node.id, plain.target);
  }
  const onward = (id: string): string => {
    for (let hops = 0; fallback.has(id) && hops < 16; hops++) id = fallback.get(id)!;
    return id;
  };
  for (const node of nodes.values()) if (node.initial) node.initial = onward(node.initial);
  for (const id of fallback.keys()) nodes.delete(id);
  // A state with one child is always in that child: its edges leave from the child, one arrow each.
  const only = new Map<string, string>();
  for (const node of nodes.values()) {
    const children = [...nodes.values()].filter((child) => child.parent === node.id);
    if (node.parent !== undefined && children.length === 1) only.set(node.id, children[0]!.id);
  }
  return transitions
    .filter((t) => !fallback.has(t.source))
    .map((t) => ({
      ...t,
      source: only.get(t.source) ?? t.source,
      target: onward(t.target),
      label: inWords(t.label),
    }))
    .filter((t) => nodes.has(t.target));
}

/**
 * A transition's label in words: `STREAM_DONE [hasToolCalls]` → `stream done if has tool calls`,
 * `always [limitReached]` → `if limit reached`.
 *
 * @example
 * ```ts
 * inWords("CHECK [nextTurnStreams]"); // "check if next turn streams"
 * ```
 */
export function inWords(label: string): string {
  const match = /^(\S+)(?: \[(.+)\])?$/.exec(label);
  if (!match) return label;
  const words = (name: string) =>
    name
      .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
      .replace(/_/g, " ")
      .toLowerCase();
  const event = match[1] === "always" ? "" : words(match[1]!);
  if (!match[2]) return event || "always";
  return `${event ? `${event} ` : ""}if ${words(match[2])}`;
}

/** How far up and down an edge and its label reach. */
function extentOf(edge: GraphEdge): { top: number; bottom: number } {
  const numbers = edge.path.match(/-?\d+(\.\d+)?/g)!.map(Number);
  const ys = numbers.filter((_, i) => i % 2 === 1);
  const lines = Math.max(1, edge.lines.length);
  if (edge.route === "above") {
    return { top: Math.min(edge.labelY - LINE_HEIGHT * lines, ...ys), bottom: Math.max(...ys) };
  }
  if (edge.route === "below") {
    return { top: Math.min(...ys), bottom: Math.max(edge.labelY + LINE_HEIGHT * (lines - 1) + 4, ...ys) };
  }
  return { top: Math.min(edge.labelY - LINE_HEIGHT * lines, ...ys), bottom: Math.max(...ys) };
}

/** Moves every y coordinate of a path made of `M x y`, `L x y` and `C x y, x y, x y`. */
function shiftPath(path: string, dy: number): string {
  let index = 0;
  return path.replace(/-?\d+(\.\d+)?/g, (number) =>
    index++ % 2 === 1 ? String(Number(number) + dy) : number,
  );
}

/** Grows each compound state's box to hold the arcs that run between its own states. */
function encloseArcs(nodes: Map<string, GraphNode>, edges: GraphEdge[]): void {
  const compounds = [...nodes.values()].filter((n) => n.parent !== undefined && n.type === "compound");
  // Innermost first, so an outer box also holds its inner boxes once they have grown.
  const depth = (n: GraphNode): number => (n.parent ? depth(nodes.get(n.parent)!) + 1 : 0);
  compounds.sort((a, b) => depth(b) - depth(a));
  for (const compound of compounds) {
    let top = compound.y + HEADER;
    let bottom = compound.y + compound.height - PAD;
    for (const edge of edges) {
      if (!isAncestor(compound.id, edge.source, nodes) || !isAncestor(compound.id, edge.target, nodes))
        continue;
      const extent = extentOf(edge);
      top = Math.min(top, extent.top - 6);
      bottom = Math.max(bottom, extent.bottom + 8);
    }
    for (const child of nodes.values()) {
      if (child.parent !== compound.id) continue;
      top = Math.min(top, child.y - 10);
      bottom = Math.max(bottom, child.y + child.height + PAD);
    }
    const newTop = Math.min(compound.y, top - HEADER);
    compound.height = Math.max(compound.y + compound.height, bottom) - newTop;
    compound.y = newTop;
  }
}

function actionName(action: unknown): string {
  if (typeof action === "string") return action;
  if (typeof action === "function") return (action as { type?: string }).type ?? action.name ?? "";
  if (action && typeof action === "object" && "type" in action) return String(action.type);
  return "";
}

/**
 * XState's `and`, `or` and `not` guards by their evaluator, which every guard of a kind shares: a
 * bundler renames the guard functions themselves (`and2`), never what they are.
 */
const COMBINATOR_CHECKS = new Map<unknown, string>([
  [(and([]) as unknown as { check: unknown }).check, "and"],
  [(or([]) as unknown as { check: unknown }).check, "or"],
  [(not("guard") as unknown as { check: unknown }).check, "not"],
]);

/** `and`, `or` or `not` for a guard that combines others (it carries `guards` and their evaluator). */
function combinatorName(guard: object): string | undefined {
  if (!("guards" in guard) || !("check" in guard) || typeof guard.check !== "function") return undefined;
  return COMBINATOR_CHECKS.get(guard.check);
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === "string") return guard;
  if (typeof guard === "function") return combinatorName(guard) ?? (guard.name || "guard");
  if (guard && typeof guard === "object" && "type" in guard) return String(guard.type);
  return "guard";
}

function transitionLabel(transition: TransitionLike): string {
  const event = transition.eventType;
  const name = event.startsWith("xstate.done.actor.")
    ? "done"
    : event.startsWith("xstate.error.actor.")
      ? "error"
      : event === ""
        ? "always"
        : event;
  const guard = guardName(transition.guard);
  return guard ? `${name} [${guard}]` : name;
}

/** The child of `ancestorId` that contains (or is) `id`, if any. */
function childUnder(id: string, ancestorId: string, nodes: Map<string, GraphNode>): string | undefined {
  let current = nodes.get(id);
  while (current?.parent !== undefined) {
    if (current.parent === ancestorId) return current.id;
    current = nodes.get(current.parent);
  }
  return undefined;
}

/** Columns of a compound state's children: longest path from the initial child, back edges ignored. */
function columnsOf(
  id: string,
  nodes: Map<string, GraphNode>,
  childrenOf: (id: string) => GraphNode[],
  transitions: { source: string; target: string }[],
): GraphNode[][] {
  const children = childrenOf(id);
  const successors = new Map<string, string[]>(children.map((c) => [c.id, []]));
  for (const t of transitions) {
    const from = childUnder(t.source, id, nodes);
    const to = childUnder(t.target, id, nodes);
    if (from && to && from !== to && !successors.get(from)!.includes(to)) successors.get(from)!.push(to);
  }
  // Depth-first from the initial child marks back edges; the rest is a DAG ranked by longest path.
  // Successors are visited in the order the states are declared (the flow's order, as a machine
  // reads), not the order of the transitions: a shortcut back to an early state (steeringCheck
  // straight to streaming) must not pull that state after the one it comes from.
  const declared = new Map(children.map((c, index) => [c.id, index]));
  for (const next of successors.values()) next.sort((a, b) => declared.get(a)! - declared.get(b)!);
  const forward = new Map<string, string[]>(children.map((c) => [c.id, []]));
  const state = new Map<string, "open" | "done">();
  const visit = (node: string) => {
    state.set(node, "open");
    for (const next of successors.get(node)!) {
      if (state.get(next) === "open") continue;
      forward.get(node)!.push(next);
      if (!state.has(next)) visit(next);
    }
    state.set(node, "done");
  };
  const initial = nodes.get(id)?.initial;
  if (initial) visit(initial);
  for (const child of children) if (!state.has(child.id)) visit(child.id);

  const rank = new Map<string, number>();
  const rankOf = (node: string): number => {
    const known = rank.get(node);
    if (known !== undefined) return known;
    let best = 0;
    for (const [from, tos] of forward) if (tos.includes(node)) best = Math.max(best, rankOf(from) + 1);
    rank.set(node, best);
    return best;
  };
  const columns: GraphNode[][] = [];
  for (const child of children) {
    const rank = rankOf(child.id);
    columns[rank] ??= [];
    columns[rank].push(child);
  }
  return columns.filter(Boolean);
}

type Transition = { source: string; target: string; label: string; eventless: boolean };

/** The lines a label is drawn on: the event, then its guard. */
export function labelLines(label: string): string[] {
  const at = label.indexOf(" [");
  return at < 0 ? [label] : [label.slice(0, at), label.slice(at + 1)];
}

/** Guards that only combine others: they name nothing a reader looks for. */
const COMBINATORS = new Set(["and", "or", "not"]);

/**
 * The one line an edge shows at first look, so that a state with many ways out does not pile its
 * labels up: the first transition's event (an eventless one: its guard, in brackets), then `+N`
 * for the N other transitions of the edge. Every transition is in `labels`, shown on hover.
 *
 * @example
 * ```ts
 * edgeCaption(["STREAM_DONE [callsNotToRun]", "STREAM_DONE", "error", "ABORT"]); // "STREAM_DONE +3"
 * edgeCaption(["always [and]", "always [turnNeedsCompaction]"]); // "[turnNeedsCompaction] +1"
 * ```
 */
export function edgeCaption(labels: readonly string[]): string {
  if (labels.length === 0) return "";
  const named = (label: string) => {
    const [event, guard] = labelLines(label);
    return event === "always" ? guard : event;
  };
  const first =
    labels.find((label) => {
      const guard = labelLines(label)[1]?.slice(1, -1);
      return !label.startsWith("always") || (guard !== undefined && !COMBINATORS.has(guard));
    }) ?? labels[0]!;
  return labels.length > 1 ? `${named(first)} +${labels.length - 1}` : named(first)!;
}

/** The labels of every drawn edge, by `source->target` (unguarded `always` hops say nothing beyond the arrow). */
function labelsByEdge(transitions: Transition[]): Map<string, string[]> {
  const byEdge = new Map<string, string[]>();
  for (const t of transitions) {
    const key = `${t.source}->${t.target}`;
    const labels = byEdge.get(key) ?? [];
    if (t.label !== "always" && !labels.includes(t.label)) labels.push(t.label);
    byEdge.set(key, labels);
  }
  return byEdge;
}

/** Gaps between columns, wide enough for the labels of the straight edges that cross them. */
function gapsOf(
  id: string,
  columns: GraphNode[][],
  nodes: Map<string, GraphNode>,
  transitions: Transition[],
): number[] {
  const columnOf = new Map<string, number>();
  columns.forEach((column, index) => {
    for (const node of column) columnOf.set(node.id, index);
  });
  const gaps = columns.slice(1).map(() => GAP_X);
  for (const [key, labels] of labelsByEdge(transitions)) {
    const [source, target] = key.split("->") as [string, string];
    const from = childUnder(source, id, nodes);
    const to = childUnder(target, id, nodes);
    if (!from || !to || labels.length === 0) continue;
    const a = columnOf.get(from)!;
    if (columnOf.get(to) !== a + 1) continue;
    gaps[a] = Math.max(gaps[a]!, Math.ceil(edgeCaption(labels).length * CHAR_WIDTH + 16));
  }
  return gaps;
}

function measure(
  id: string,
  nodes: Map<string, GraphNode>,
  childrenOf: (id: string) => GraphNode[],
  transitions: Transition[],
): void {
  const node = nodes.get(id)!;
  const children = childrenOf(id);
  if (children.length === 0) {
    const subtitle = node.invokes.length ? `⇢ ${node.invokes.join(", ")}` : "";
    node.width = Math.max(96, node.key.length * 7.8 + 28, subtitle.length * 6.4 + 24);
    node.height = subtitle ? LEAF_HEIGHT + 10 : LEAF_HEIGHT;
    return;
  }
  for (const child of children) measure(child.id, nodes, childrenOf, transitions);
  const columns = columnsOf(id, nodes, childrenOf, transitions);
  const gaps = gapsOf(id, columns, nodes, transitions);
  let width = gaps.reduce((sum, gap) => sum + gap, 0);
  let height = 0;
  for (const column of columns) {
    width += Math.max(...column.map((c) => c.width));
    height = Math.max(height, column.reduce((sum, c) => sum + c.height, 0) + GAP_Y * (column.length - 1));
  }
  const isRoot = node.parent === undefined;
  node.width = width + (isRoot ? 0 : PAD * 2);
  node.height = height + (isRoot ? 0 : HEADER + PAD + ARC_ROOM * 2);
}

function place(
  id: string,
  x: number,
  y: number,
  nodes: Map<string, GraphNode>,
  childrenOf: (id: string) => GraphNode[],
  transitions: Transition[],
): void {
  const node = nodes.get(id)!;
  node.x = x;
  node.y = y;
  const children = childrenOf(id);
  if (children.length === 0) return;
  const isRoot = node.parent === undefined;
  const top = isRoot ? y : y + HEADER + ARC_ROOM;
  const inner = isRoot ? node.height : node.height - HEADER - PAD - ARC_ROOM * 2;
  let cursor = isRoot ? x : x + PAD;
  const columns = columnsOf(id, nodes, childrenOf, transitions);
  const gaps = gapsOf(id, columns, nodes, transitions);
  for (const [index, column] of columns.entries()) {
    const columnWidth = Math.max(...column.map((c) => c.width));
    const columnHeight = column.reduce((sum, c) => sum + c.height, 0) + GAP_Y * (column.length - 1);
    let cy = top + (inner - columnHeight) / 2;
    for (const child of column) {
      place(child.id, cursor + (columnWidth - child.width) / 2, cy, nodes, childrenOf, transitions);
      cy += child.height + GAP_Y;
    }
    cursor += columnWidth + (gaps[index] ?? 0);
  }
}

function isAncestor(ancestor: string, id: string, nodes: Map<string, GraphNode>): boolean {
  let current = nodes.get(id);
  while (current?.parent !== undefined) {
    if (current.parent === ancestor) return true;
    current = nodes.get(current.parent);
  }
  return false;
}

function routeEdges(transitions: Transition[], nodes: Map<string, GraphNode>): GraphEdge[] {
  const merged = new Map<string, { source: string; target: string; labels: string[]; eventless: boolean }>();
  for (const t of transitions) {
    if (t.source === t.target) continue;
    const key = `${t.source}->${t.target}`;
    const entry = merged.get(key) ?? { source: t.source, target: t.target, labels: [], eventless: true };
    if (!entry.labels.includes(t.label)) entry.labels.push(t.label);
    entry.eventless &&= t.eventless;
    merged.set(key, entry);
  }
  // Unguarded `always` hops say nothing beyond the arrow itself.
  for (const entry of merged.values()) {
    entry.labels = entry.labels.filter((l) => l !== "always");
  }

  const boxes = [...nodes.values()].filter((n) => n.parent !== undefined);
  const edges: GraphEdge[] = [];
  const arcs: {
    base: Omit<GraphEdge, "path" | "labelX" | "labelY" | "lines" | "route" | "anchor">;
    sx: number;
    tx: number;
    sy: number;
    ty: number;
    above: boolean;
    bound: number;
  }[] = [];
  for (const { source, target, labels, eventless } of merged.values()) {
    const s = nodes.get(source)!;
    const t = nodes.get(target)!;
    const base = { id: `${source}->${target}`, source, target, labels, eventless };
    if (isAncestor(source, target, nodes) || isAncestor(target, source, nodes)) continue;

    const obstacles = boxes.filter(
      (b) =>
        b.id !== source &&
        b.id !== target &&
        !isAncestor(b.id, source, nodes) &&
        !isAncestor(b.id, target, nodes) &&
        !isAncestor(source, b.id, nodes),
    );
    const forward = t.x >= s.x + s.width - 1;
    const backward = t.x + t.width <= s.x + 1;
    if (forward || backward) {
      const overlapTop = Math.max(s.y, t.y);
      const overlapBottom = Math.min(s.y + s.height, t.y + t.height);
      const lineY = (overlapTop + overlapBottom) / 2;
      const x1 = forward ? s.x + s.width : s.x;
      const x2 = forward ? t.x : t.x + t.width;
      const blocked =
        overlapBottom - overlapTop < 12 ||
        obstacles.some(
          (b) =>
            b.x < Math.max(x1, x2) &&
            b.x + b.width > Math.min(x1, x2) &&
            // the label sits above the line: a box in its band would be written over
            b.y < lineY + 2 &&
            b.y + b.height > lineY - 6 - LINE_HEIGHT * Math.max(1, labels.flatMap(labelLines).length),
        );
      if (forward && !blocked) {
        edges.push({
          ...base,
          path: `M ${x1} ${lineY} L ${x2} ${lineY}`,
          labelX: (x1 + x2) / 2,
          lines: labels.length ? [edgeCaption(labels)] : [],
          labelY: lineY - 6,
          route: "straight",
          anchor: "middle",
        });
        continue;
      }
      const above = forward;
      const sx = s.x + s.width / 2 + (above ? 10 : -10);
      const tx = t.x + t.width / 2 + (above ? -10 : 10);
      const sy = above ? s.y : s.y + s.height;
      const ty = above ? t.y : t.y + t.height;
      const between = obstacles.filter((b) => b.x + b.width > Math.min(sx, tx) && b.x < Math.max(sx, tx));
      const bound = above
        ? Math.min(sy, ty, ...between.map((b) => b.y))
        : Math.max(sy, ty, ...between.map((b) => b.y + b.height));
      arcs.push({ base, sx, tx, sy, ty, above, bound });
      continue;
    }
    // Stacked boxes in one column: a straight vertical line between the facing sides.
    const down = t.y > s.y;
    const x = (Math.max(s.x, t.x) + Math.min(s.x + s.width, t.x + t.width)) / 2;
    const y1 = down ? s.y + s.height : s.y;
    const y2 = down ? t.y : t.y + t.height;
    edges.push({
      ...base,
      path: `M ${x} ${y1} L ${x} ${y2}`,
      lines: labels.length ? [edgeCaption(labels)] : [],
      labelX: x + 6,
      labelY: (y1 + y2) / 2,
      route: "straight",
      anchor: "start",
    });
  }
  edges.push(...placeArcs(arcs));
  return edges;
}

/**
 * Places arcs shortest first, each clear of the boxes it passes and of the arcs (with their labels)
 * already placed over the same stretch, so nested arcs and their labels do not overlap.
 */
function placeArcs(
  arcs: {
    base: Omit<GraphEdge, "path" | "labelX" | "labelY" | "lines" | "route" | "anchor">;
    sx: number;
    tx: number;
    sy: number;
    ty: number;
    above: boolean;
    bound: number;
  }[],
): GraphEdge[] {
  const placed: { above: boolean; from: number; to: number; extent: number }[] = [];
  const edges: GraphEdge[] = [];
  for (const arc of [...arcs].sort((a, b) => Math.abs(a.tx - a.sx) - Math.abs(b.tx - b.sx))) {
    const { sx, tx, sy, ty, above, base } = arc;
    const lines = base.labels.length ? [edgeCaption(base.labels)] : [];
    const labelX = (sx + tx) / 2;
    const labelWidth = Math.max(0, ...lines.map((line) => line.length * CHAR_WIDTH));
    const from = Math.min(sx, tx, labelX - labelWidth / 2);
    const to = Math.max(sx, tx, labelX + labelWidth / 2);
    const crossing = placed.filter((p) => p.above === above && p.from < to && p.to > from);
    const apex = above
      ? Math.min(arc.bound - 14, ...crossing.map((p) => p.extent - 6))
      : Math.max(arc.bound + 14, ...crossing.map((p) => p.extent + 6));
    // A cubic with both control points at `cy` peaks at 3/4 of the way from its ends to `cy`.
    const edgeY = above ? Math.min(sy, ty) : Math.max(sy, ty);
    const cy = edgeY + (apex - edgeY) / 0.75;
    const peak = 0.125 * (sy + ty) + 0.75 * cy;
    const labelY = above ? peak - 4 : peak + 13;
    const extent = above
      ? labelY - LINE_HEIGHT * lines.length + 2
      : labelY + LINE_HEIGHT * Math.max(0, lines.length - 1) + 4;
    placed.push({ above, from, to, extent: lines.length ? extent : apex });
    edges.push({
      ...base,
      path: `M ${sx} ${sy} C ${sx} ${cy}, ${tx} ${cy}, ${tx} ${ty}`,
      lines,
      labelX,
      labelY,
      route: above ? "above" : "below",
      anchor: "middle",
    });
  }
  return edges;
}

/** Ids of the active state nodes for a state value, e.g. `{ running: "executing" }` → `["agent.running", "agent.running.executing"]`. */
export function activeStateIds(rootId: string, value: unknown): string[] {
  const ids: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (typeof v === "string") {
      ids.push(`${prefix}.${v}`);
      return;
    }
    if (v && typeof v === "object") {
      for (const [key, child] of Object.entries(v)) {
        ids.push(`${prefix}.${key}`);
        walk(`${prefix}.${key}`, child);
      }
    }
  };
  walk(rootId, value);
  return ids;
}
