import { enteredAs, newMessageId, withMessageIds } from "../core/message-id.js";
import type { AgentMessage, MessageSource } from "../core/messages.js";
import type { PersistedSnapshotData, SnapshotMigration } from "../core/snapshot-version.js";

/**
 * The migrations this release ships, oldest first: one for every change of the agent machine's
 * structure hash (or of `SNAPSHOT_FORMAT`) since snapshots were first stamped, so a snapshot written
 * by any earlier release restores. The rule for adding one is in docs/snapshots.md.
 */
export const BUILT_IN_MIGRATIONS: readonly SnapshotMigration[] = [
  {
    from: { format: 1, machine: "ea7b3c902275" },
    to: { format: 1, machine: "25385449ca03" },
    description:
      "the tool execution keeps where each call runs (hosts, shards of 50 calls) and counts instead of scanning",
    migrate: (snapshot) => withToolExecution(snapshot, shardedExecutionContext),
  },
  {
    from: { format: 1, machine: "25385449ca03" },
    to: { format: 1, machine: "8150e99e6dd6" },
    description: "a run keeps where its messages begin in the transcript instead of a copy of them",
    migrate: (snapshot) => {
      const { newMessages = [], ...run } = snapshot.context.run as Json;
      const firstMessage = (snapshot.context.messages as unknown[]).length;
      // The run's messages so far stay as they were (what agent_end reports), any new ones follow.
      return {
        ...snapshot,
        context: { ...snapshot.context, run: { ...run, firstMessage, rewritten: newMessages } },
      };
    },
  },
  {
    from: { format: 1, machine: "8150e99e6dd6" },
    to: { format: 1, machine: "5f2e203a9ab0" },
    description: "the run knows whether its turn is the answer a limit asked for (run.answeringLimit)",
    // No snapshot of an older release was taken during such a turn: false is always right.
    migrate: (snapshot) => ({
      ...snapshot,
      context: { ...snapshot.context, run: { ...snapshot.context.run, answeringLimit: false } },
    }),
  },
  {
    from: { format: 1, machine: "5f2e203a9ab0" },
    to: { format: 1, machine: "d8ecffce6b46" },
    description:
      "a tool runs in its call's actor (no executeTool child); the tool execution reports its last group as its output",
    migrate: (snapshot) =>
      withToolExecution(snapshot, (context) => ({
        ...context,
        // Every group before the current one was reported with GROUP_DONE.
        reported: context.groupIndex ?? 0,
      })),
  },
  {
    from: { format: 1, machine: "d8ecffce6b46" },
    to: { format: 1, machine: "006059d3292c" },
    description:
      "the turn gate measures the context budget and enters compacting only to reduce (compacting.measuring, a transient state no snapshot rests in, is gone)",
    migrate: (snapshot) => snapshot,
  },
  {
    from: { format: 1, machine: "006059d3292c" },
    to: { format: 1, machine: "de9a26fead63" },
    description:
      "a run's deadline actor is spawned only when the run has a duration limit, no longer invoked by every run (a snapshot's runDeadline child still restores, and is stopped when the run ends)",
    migrate: (snapshot) => snapshot,
  },
  {
    from: { format: 1, machine: "de9a26fead63" },
    to: { format: 2, machine: "de9a26fead63" },
    description:
      "every message carries an id (the transcript, the queues, the messages of the turn about to open, the run's own)",
    migrate: withMessageIdsEverywhere,
  },
  {
    from: { format: 2, machine: "de9a26fead63" },
    to: { format: 2, machine: "572ade2359a6" },
    description:
      "a tool call can wait for a client's result (awaitingResult, for client-run tools); its context says whether its tool is client-run (external)",
    // No earlier tool was client-run: a saved call reads as external: false (absent).
    migrate: (snapshot) => snapshot,
  },
  {
    from: { format: 2, machine: "572ade2359a6" },
    to: { format: 2, machine: "758445c0ed2e" },
    description:
      "a transfer to another agent passes through running.handingOff (transient: no snapshot rests in it); the context may name the active agent (activeAgent)",
    // No earlier agent had handoffs: absent means the main agent, as before.
    migrate: (snapshot) => snapshot,
  },
  {
    from: { format: 2, machine: "758445c0ed2e" },
    to: { format: 2, machine: "fc209063c136" },
    description:
      "a shard of a big fan-out is an actor of its own logic, no longer a statechart; it persists as the chart did (running or done, the same context, its calls as children)",
    // The persisted shard is unchanged: it restores as it was written.
    migrate: (snapshot) => snapshot,
  },
];

type Json = Record<string, any>;

/**
 * Format 2: messages have ids. Every message the snapshot holds gets one; the run's `turnMessage`
 * (a copy of the transcript's last assistant message in JSON) takes its original's. Tool results
 * recorded by running calls get theirs as they enter the transcript.
 */
function withMessageIdsEverywhere(snapshot: PersistedSnapshotData): PersistedSnapshotData {
  const context = snapshot.context as Json;
  const ids = (list: unknown): unknown =>
    Array.isArray(list) ? withMessageIds(list as AgentMessage[]) : list;
  const messages = ids(context.messages) as AgentMessage[];
  const queued = (list: unknown, source: MessageSource): unknown =>
    Array.isArray(list) ? (list as AgentMessage[]).map((message) => enteredAs(message, source)) : list;
  const run = context.run as Json | undefined;
  let migratedRun = run;
  if (run) {
    migratedRun = { ...run };
    if (Array.isArray(run.rewritten)) migratedRun.rewritten = ids(run.rewritten);
    if (run.turnMessage && typeof run.turnMessage === "object") {
      const turn = run.turnMessage as AgentMessage;
      const original = [...messages]
        .reverse()
        .find((m) => m.role === "assistant" && m.timestamp === turn.timestamp);
      migratedRun.turnMessage = { ...turn, id: original?.id ?? newMessageId() };
    }
  }
  return {
    ...snapshot,
    context: {
      ...context,
      messages,
      pending: ids(context.pending),
      // A queue says how its messages came in; the transcript's older messages keep no source.
      steeringQueue: queued(context.steeringQueue, "steer"),
      followUpQueue: queued(context.followUpQueue, "followUp"),
      ...(migratedRun && { run: migratedRun }),
    },
  };
}

/**
 * The snapshot with its running tool execution's context rewritten (nothing to do when idle), and
 * the tool-call actors below it without an `executeTool` child (it left the machine: a restored call
 * in `executing` runs its tool again).
 */
function withToolExecution(snapshot: PersistedSnapshotData, rewrite: (context: Json) => Json) {
  const execution = snapshot.children?.toolExecution as Json | undefined;
  if (!execution?.snapshot?.context) return snapshot;
  return {
    ...snapshot,
    children: {
      ...snapshot.children,
      toolExecution: {
        ...execution,
        snapshot: {
          ...execution.snapshot,
          context: rewrite(execution.snapshot.context),
          children: withoutExecuteTool(execution.snapshot.children ?? {}),
        },
      },
    },
  };
}

/** Children with every tool-call snapshot (shards' too) rid of its `executeTool` child. */
function withoutExecuteTool(children: Json): Json {
  return Object.fromEntries(
    Object.entries(children).map(([id, child]) => {
      const snapshot = child?.snapshot;
      if (!snapshot?.children) return [id, child];
      const { executeTool: _executeTool, ...rest } = snapshot.children as Json;
      return [id, { ...child, snapshot: { ...snapshot, children: withoutExecuteTool(rest) } }];
    }),
  );
}

/** Before shards, every started call was a child of the execution machine, listed in `started`. */
function shardedExecutionContext(old: Json): Json {
  const { started = [], ...rest } = old as { started?: string[] } & Json;
  const results = (old.results ?? {}) as Json;
  const groups = (old.groups ?? []) as string[][];
  const groupOf: Record<string, number> = {};
  groups.forEach((group, index) => {
    for (const id of group) groupOf[id] = index;
  });
  const ready = (old.ready ?? []) as { concurrencySafe?: boolean }[];
  return {
    ...rest,
    groupOf,
    open: (groups[old.groupIndex ?? 0] ?? []).filter((id) => !results[id]).length,
    hosts: Object.fromEntries(started.map((id) => [id, ""])),
    hosted: started.filter((id) => !results[id]).length,
    shards: [],
    shardCount: 0,
    eagerShards: [],
    eagerShardSize: 0,
    readyAllSafe: ready.every((call) => call.concurrencySafe === true),
  };
}
