import {
  type ActorLogic,
  type ActorSystem,
  type AnyActorLogic,
  type AnyActorRef,
  type AnyActorScope,
  createActor,
  type Snapshot,
} from "xstate";
import { type ToolCallOutput, toolCallMachine } from "../actors/tool-call.machine.js";
import type { ToolResultMessage } from "../core/messages.js";
import { messageIdsFor, nowFor } from "../core/runtime.js";
import { abortedText, doneActorId, type PlannedCall } from "../rules/tool-execution.logic.js";
import { answerUnran, type EnqueueEffect } from "./unran-calls.js";

export interface ToolShardInput {
  /** The calls the shard starts at once. */
  calls: PlannedCall[];
  /** A sealed shard finishes when its calls are answered; an open one waits for `SEAL` (eager calls may still join). */
  sealed: boolean;
}

export interface ToolShardContext {
  /** Its calls, in the order they joined. */
  calls: PlannedCall[];
  /** Results by call id, filled in place as calls finish (a copy per call would make a shard quadratic). */
  results: Record<string, ToolResultMessage>;
  /** Calls still running. */
  open: number;
  sealed: boolean;
}

export type ToolShardEvent =
  | { type: "ADD"; call: PlannedCall }
  | { type: "SEAL" }
  | { type: "ABORT" }
  /** Stops one call (an eager call the final message no longer has) and answers it as aborted. */
  | { type: "DROP"; toolCallId: string }
  | { type: `xstate.done.actor.${string}`; output: ToolCallOutput }
  | { type: `xstate.error.actor.${string}`; error: unknown }
  | { type: "xstate.stop" };

/**
 * A shard's snapshot, in the shape of the statechart it was (`running` → `done`), so that a
 * persisted one restores either way.
 */
export interface ToolShardSnapshot {
  status: "active" | "done" | "error" | "stopped";
  value: "running" | "done";
  output: ToolResultMessage[] | undefined;
  error: unknown;
  context: ToolShardContext;
  /** Its running call actors by call id: the actor tree's view of them (the inspector's, `toolCallActorOf`'s). */
  children: Record<string, AnyActorRef>;
}

/** The shard's logic, with its snapshot typed as the shard keeps it (XState's `Snapshot` is a union by status). */
type ShardLogic = ActorLogic<
  ToolShardSnapshot & Snapshot<ToolResultMessage[]>,
  ToolShardEvent,
  ToolShardInput,
  ActorSystem<any>
>;

interface ShardLogicImpl {
  getInitialSnapshot(scope: AnyActorScope, input: ToolShardInput): ToolShardSnapshot;
  start(snapshot: ToolShardSnapshot): void;
  transition(snapshot: ToolShardSnapshot, event: ToolShardEvent, scope: AnyActorScope): ToolShardSnapshot;
  getPersistedSnapshot(snapshot: ToolShardSnapshot, options?: unknown): unknown;
  restoreSnapshot(persisted: unknown, scope: AnyActorScope): ToolShardSnapshot;
}

/** What a persisted call actor looks like in a persisted shard (as XState persists a machine's children). */
interface PersistedChild {
  snapshot: unknown;
  src: string;
  syncSnapshot?: boolean;
}

/** The `src` of every call actor: the name the execution machine and the agent give `toolCallMachine`. */
const CALL_SRC = "toolCall";

/**
 * A shard of the tool execution: the parent of up to `SHARD_SIZE` tool-call actors, each its own
 * child actor (id = the tool call id). The shard finishes, once sealed, when every call is
 * answered; its output is their results, in the order the calls joined.
 *
 * Not a state machine: XState copies a machine's `children` on every spawn and stop, and with keys
 * that are new each time (call ids) V8 builds new hidden classes for every copy, about a fifth of
 * a 3,000-call fan-out's CPU. This logic keeps its children in one record it changes in place,
 * and starts and stops them as XState does (a spawned call starts once the shard's step is
 * committed; a stopped one is stopped through the shard's scope).
 *
 * @example
 * ```ts
 * setup({ actors: { toolShard: toolShardLogic } }); // spawnChild("toolShard", { id: "shard:1", input: { calls, sealed: true } })
 * ```
 */
const shardLogic: ShardLogicImpl = {
  getInitialSnapshot(scope, input) {
    const snapshot: ToolShardSnapshot = {
      status: "active",
      value: "running",
      output: undefined,
      error: undefined,
      context: { calls: [...input.calls], results: {}, open: input.calls.length, sealed: input.sealed },
      children: {},
    };
    for (const call of input.calls) spawnCall(snapshot, call, scope, false);
    return settled(snapshot);
  },

  start(snapshot) {
    // Fresh calls, and calls restored from a persisted shard, start with it.
    for (const child of Object.values(snapshot.children))
      if (child.getSnapshot().status === "active") child.start();
  },

  transition(snapshot, event, scope) {
    if (event.type === "xstate.stop") {
      for (const id of Object.keys(snapshot.children)) stopCall(snapshot, id, scope);
      return { ...snapshot, status: "stopped" };
    }
    if (snapshot.status !== "active") return snapshot;
    const { context } = snapshot;
    if (event.type === "ADD") {
      spawnCall(snapshot, event.call, scope, true);
      context.calls.push(event.call);
      context.open++;
      return { ...snapshot };
    }
    if (event.type === "SEAL") context.sealed = true;
    else if (event.type === "DROP") dropCall(snapshot, event.toolCallId, scope);
    else if (event.type === "ABORT") {
      for (const call of context.calls) dropCall(snapshot, call.id, scope);
      // What is still open finished in this very step: its output is on its way (see `dropCall`).
      context.open = context.calls.filter((call) => !context.results[call.id]).length;
      context.sealed = true;
    } else if (event.type.startsWith("xstate.done.actor.")) {
      const done = (event as { output?: ToolCallOutput }).output;
      // The first answer stands (a call dropped just as it finished is answered already).
      if (!done || context.results[done.toolCallId]) return snapshot;
      context.results[done.toolCallId] = done.message;
      context.open--;
      // A finished call has stopped already; it leaves the tree as `stopChild` would take it out.
      stopCall(snapshot, doneActorId(event), scope);
    } else if (event.type.startsWith("xstate.error.actor.")) {
      // A call actor that failed fails its shard, as an unhandled error event fails a machine.
      for (const id of Object.keys(snapshot.children)) stopCall(snapshot, id, scope);
      return { ...snapshot, status: "error", error: (event as { error?: unknown }).error };
    } else return snapshot;
    return settled({ ...snapshot });
  },

  getPersistedSnapshot(snapshot, options) {
    const children: Record<string, PersistedChild> = {};
    for (const [id, child] of Object.entries(snapshot.children)) {
      const persist = child.getPersistedSnapshot as (options?: unknown) => unknown;
      children[id] = { snapshot: persist.call(child, options), src: CALL_SRC, syncSnapshot: false };
    }
    const { status, value, output, error, context } = snapshot;
    return {
      status,
      value,
      output,
      error,
      historyValue: {},
      context: { ...context, calls: [...context.calls], results: { ...context.results } },
      children,
    };
  },

  restoreSnapshot(persisted, scope) {
    const saved = persisted as unknown as Omit<ToolShardSnapshot, "children"> & {
      children?: Record<string, PersistedChild>;
    };
    const children: Record<string, AnyActorRef> = {};
    for (const [id, child] of Object.entries(saved.children ?? {})) {
      // A restored call takes no input: its snapshot has everything.
      children[id] = createActor(toolCallMachine as AnyActorLogic, {
        id,
        parent: scope.self,
        snapshot: child.snapshot as never,
        src: child.src,
      });
    }
    const { context } = saved;
    return {
      status: saved.status,
      value: saved.value,
      output: saved.output,
      error: saved.error,
      context: { ...context, calls: [...context.calls], results: { ...context.results } },
      children,
    };
  },
};

export const toolShardLogic = shardLogic as unknown as ShardLogic;

/** A call actor joins the shard; `deferred`: it starts once the shard's step is committed. */
function spawnCall(
  snapshot: ToolShardSnapshot,
  call: PlannedCall,
  scope: AnyActorScope,
  deferred: boolean,
): void {
  const child = createActor(toolCallMachine, {
    id: call.id,
    parent: scope.self,
    input: { toolCallId: call.id, toolName: call.name, args: call.args },
    src: CALL_SRC,
  });
  snapshot.children[call.id] = child;
  if (deferred) scope.defer(() => snapshot.children[call.id] === child && child.start());
}

/** Takes a call actor out of the shard and stops it (after the step, as XState's `stopChild` does). */
function stopCall(snapshot: ToolShardSnapshot, toolCallId: string, scope: AnyActorScope): void {
  const child = snapshot.children[toolCallId];
  if (!child) return;
  delete snapshot.children[toolCallId];
  scope.defer(() => scope.stopChild(child));
}

/** Stops a call still running and answers it as aborted (with its end event). */
function dropCall(snapshot: ToolShardSnapshot, toolCallId: string, scope: AnyActorScope): void {
  const { context } = snapshot;
  const call = context.calls.find((c) => c.id === toolCallId);
  if (!call || context.results[toolCallId]) return;
  // A call that finished in this very step (its end published, an abort made from a subscriber of
  // it) keeps its result: its output arrives right after, as `xstate.done.actor.<id>`.
  if (snapshot.children[toolCallId]?.getSnapshot().status === "done") return;
  stopCall(snapshot, toolCallId, scope);
  const now: EnqueueEffect = (effect) => effect({ self: scope.self });
  context.results[toolCallId] = answerUnran(now, call, abortedText(call.name), {
    started: true,
    timestamp: nowFor(scope.self),
    ids: messageIdsFor(scope.self),
  });
  context.open--;
}

/** Done once sealed with every call answered: the results, in the order the calls joined. */
function settled(snapshot: ToolShardSnapshot): ToolShardSnapshot {
  const { context } = snapshot;
  if (snapshot.status !== "active" || !context.sealed || context.open > 0) return snapshot;
  return {
    ...snapshot,
    status: "done",
    value: "done",
    output: context.calls.map((call) => context.results[call.id]!),
  };
}
