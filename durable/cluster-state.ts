// What a local Restate cluster's nodes say in their logs about leadership and membership, read
// back: which node leads the partition now, and whether the cluster has settled. A node that
// restarts moves things for a few seconds after it serves (its cluster controller takes over,
// the partition's replicas move, leadership moves once or twice), and each move re-runs the steps
// in flight: work that must not be re-run starts once that is over (durable/restate-cluster.ts).

/** One line of a node's JSON log about leadership or membership: when, and what it says. */
export interface ClusterLogEvent {
  /** Restate's timestamp (ISO 8601, UTC). */
  at: string;
  message: string;
}

/** What one node's log says, as {@link settledLeader} reads it. */
export interface NodeLogState {
  running: boolean;
  /** Whether the node was started again after a kill (the others must see its new generation). */
  restarted: boolean;
  /** When it last started (ms since the epoch): only nodes up before it report seeing it come back. */
  startedAt: number;
  /** Its leadership and membership events since it last started, oldest first. */
  events: readonly ClusterLogEvent[];
  /** When it was last killed (ms since the epoch), if it was: a node's death moves leadership. */
  killedAt?: number;
}

/** Options of {@link settledLeader}. */
export interface SettleOptions {
  /**
   * Settle on the nodes that run, with a node down: a killed node's death counts as a change, and
   * the rest must lead and be quiet as usual. Default false: every node must run.
   */
  survivors?: boolean;
}

const BECAME_LEADER = /Processor became Leader/;
/** This node's processor no longer leads: it stopped, or conceded to a newer epoch. */
const STEPPED_DOWN = /Partition processor stopped|Every reign must end/;
/**
 * Changes that move leadership or the partition's replicas. (A failure detector's verdicts are
 * not: a loaded machine makes nodes flap between suspect and alive without moving anything, and
 * what a verdict does move logs a line of its own.)
 */
const CHANGE =
  /Processor became Leader|Partition processor stopped|Every reign must end|Partition configuration transitions|Reconciling partition processors|Cluster controller switching/;
/** A failure detector's verdict on a node, and the node's own id. */
const MEMBERSHIP = /transitioned from |^My Node ID is /;
const NODE_ID = /^My Node ID is (\S+)/;

/**
 * The leadership or membership event a log line reports, or `undefined` for any other line (or
 * one that is not JSON).
 *
 * @example
 * ```ts
 * clusterLogEvent('{"timestamp":"2026-01-01T00:00:00Z","fields":{"message":"Processor became Leader of epoch e3"}}');
 * // { at: "2026-01-01T00:00:00Z", message: "Processor became Leader of epoch e3" }
 * ```
 */
export function clusterLogEvent(line: string): ClusterLogEvent | undefined {
  if (!line.includes('"timestamp"')) return undefined;
  let parsed: { timestamp?: unknown; fields?: { message?: unknown } };
  try {
    parsed = JSON.parse(line) as typeof parsed;
  } catch {
    return undefined;
  }
  const message = parsed.fields?.message;
  if (typeof parsed.timestamp !== "string" || typeof message !== "string") return undefined;
  return CHANGE.test(message) || MEMBERSHIP.test(message) ? { at: parsed.timestamp, message } : undefined;
}

/**
 * When the node last became the partition's leader, if it still leads: `undefined` once its
 * processor stopped or conceded after that (a node that stepped down is not the leader, even
 * while no other has taken over yet).
 *
 * @example
 * ```ts
 * leaderSinceIn([{ at: "t1", message: "Processor became Leader of epoch e3" }]); // "t1"
 * ```
 */
export function leaderSinceIn(events: readonly ClusterLogEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const { at, message } = events[i]!;
    if (STEPPED_DOWN.test(message)) return undefined;
    if (BECAME_LEADER.test(message)) return at;
  }
  return undefined;
}

/** The node's generational id since it last started (`N1:7`), from its log. */
function generationIn(events: readonly ClusterLogEvent[]): string | undefined {
  for (const { message } of events) {
    const match = NODE_ID.exec(message);
    if (match) return match[1];
  }
  return undefined;
}

/**
 * When the node's latest failure-detector verdict on `generation` said alive, or `undefined`
 * when it has none, or its latest says otherwise.
 */
function seenAliveAt(events: readonly ClusterLogEvent[], generation: string): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const { at, message } = events[i]!;
    if (message.startsWith(`${generation} transitioned from `)) {
      return / to Alive\b/.test(message) ? at : undefined;
    }
  }
  return undefined;
}

/**
 * The partition's leader once the cluster has settled, else why not yet: every node runs; each
 * restarted node's new generation is seen alive by itself and by every node up before it (a
 * restart moves leadership only once they see it back); a node leads; and neither such a sighting
 * nor a leadership, placement or cluster-controller change has come for `quietMs`. `now` is in ms
 * since the epoch. With `survivors`, a node may be down: its death counts as a change, and the
 * rules hold for the nodes that run.
 *
 * @example
 * ```ts
 * const state = settledLeader(nodes.map(readState), Date.now(), 3_000);
 * if ("leader" in state) return state.leader; // the index of the leading node
 * ```
 */
export function settledLeader(
  nodes: readonly NodeLogState[],
  now: number,
  quietMs: number,
  options: SettleOptions = {},
): { leader: number } | { waiting: string } {
  if (!options.survivors && !nodes.every((node) => node.running)) return { waiting: "every node to run" };
  // A restarted node's return counts as a change from the moment it is seen: the moves follow it.
  const changes: string[] = [];
  for (const [i, node] of nodes.entries()) {
    if (!node.running) {
      if (node.killedAt !== undefined) changes.push(new Date(node.killedAt).toISOString());
      continue;
    }
    if (!node.restarted) continue;
    const generation = generationIn(node.events);
    if (!generation) return { waiting: `node ${i + 1} to report its id` };
    // A node started later saw it alive from its own start, without a transition to log.
    const earlier = nodes.filter((other) => other.running && other.startedAt <= node.startedAt);
    const seen = earlier.map((other) => seenAliveAt(other.events, generation));
    if (seen.includes(undefined)) return { waiting: `every node to see ${generation} alive` };
    changes.push(...(seen as string[]));
  }
  const leader = currentLeader(nodes);
  if (leader === undefined) return { waiting: "a partition leader" };
  for (const node of nodes) {
    const change = node.events.findLast((event) => CHANGE.test(event.message));
    if (change) changes.push(change.at);
  }
  const lastChange = changes.reduce((a, b) => (a > b ? a : b), "");
  const quietFor = now - Date.parse(lastChange);
  if (lastChange && quietFor < quietMs) {
    return { waiting: `no change for ${quietMs} ms (${quietFor} ms so far)` };
  }
  return { leader };
}

/**
 * The index of the node that leads the partition now, if one does: the running node with the
 * newest claim of leadership (epochs only grow), unless it has stepped down since (then none
 * leads until another claims it; an older claim by another node is stale).
 *
 * @example
 * ```ts
 * currentLeader([{ running: true, events: [{ at: "t1", message: "Processor became Leader of epoch e3" }] }]); // 0
 * ```
 */
export function currentLeader(
  nodes: readonly Pick<NodeLogState, "running" | "events">[],
): number | undefined {
  let newest: { index: number; at: string } | undefined;
  for (const [index, node] of nodes.entries()) {
    if (!node.running) continue;
    const claim = node.events.findLast((event) => BECAME_LEADER.test(event.message));
    if (claim && (!newest || claim.at > newest.at)) newest = { index, at: claim.at };
  }
  if (!newest) return undefined;
  return leaderSinceIn(nodes[newest.index]!.events) === newest.at ? newest.index : undefined;
}
