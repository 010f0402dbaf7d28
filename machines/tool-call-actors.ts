import type { AnyActorRef } from "xstate";
import { type ToolExecutionContext, toolExecutionMachine } from "./tool-execution.machine.js";
import { toolShardLogic } from "./tool-shard.js";
import { toolCallMachine } from "../actors/tool-call.machine.js";

type Children = Record<string, AnyActorRef | undefined>;

const executionOf = (agentActor: AnyActorRef) =>
  (agentActor.getSnapshot().children as Children).toolExecution;

/**
 * The actor of one tool call of the agent's current turn, wherever it runs (a child of the agent
 * when the turn has one call, else of the execution machine or of one of its shards), or `undefined`.
 *
 * @example
 * ```ts
 * toolCallActorOf(agent.actor, "call_1")?.send({ type: "APPROVE" });
 * ```
 */
export function toolCallActorOf(agentActor: AnyActorRef, toolCallId: string): AnyActorRef | undefined {
  const execution = executionOf(agentActor);
  if (!execution) return directCallOf(agentActor, toolCallId);
  const snapshot = execution.getSnapshot();
  const host = (snapshot.context as ToolExecutionContext | undefined)?.hosts?.[toolCallId];
  if (host === undefined) return undefined;
  const children = snapshot.children as Children;
  if (host === "") return children[toolCallId];
  return (children[host]?.getSnapshot().children as Children | undefined)?.[toolCallId];
}

/**
 * Every tool-call actor of the agent's current turn that is still running, in the order they started.
 *
 * @example
 * ```ts
 * const waiting = toolCallActorsOf(agent.actor).filter((a) => a.getSnapshot().matches("awaitingApproval"));
 * ```
 */
export function toolCallActorsOf(agentActor: AnyActorRef): AnyActorRef[] {
  const execution = executionOf(agentActor);
  if (!execution) {
    const children = Object.values(agentActor.getSnapshot().children as Children);
    return children.filter((child): child is AnyActorRef => isCallActor(child));
  }
  const context = execution.getSnapshot().context as ToolExecutionContext;
  const actors: AnyActorRef[] = [];
  for (const toolCallId of Object.keys(context.hosts)) {
    const actor = toolCallActorOf(agentActor, toolCallId);
    if (actor) actors.push(actor);
  }
  return actors;
}

/**
 * Whether an actor is a tool call of this agent itself (not of a sub-agent running in its tree):
 * its parent is the agent, the agent's execution machine, or a shard of it.
 */
export function isToolCallOf(agentActor: AnyActorRef, actor: AnyActorRef): boolean {
  let parent = actor._parent as (AnyActorRef & { logic?: unknown }) | undefined;
  if (parent === agentActor) return true;
  if (parent?.logic === toolShardLogic) parent = parent._parent;
  return parent?.logic === toolExecutionMachine && parent._parent === agentActor;
}

function directCallOf(agentActor: AnyActorRef, toolCallId: string): AnyActorRef | undefined {
  const child = (agentActor.getSnapshot().children as Children)[toolCallId];
  return child && isCallActor(child) ? child : undefined;
}

function isCallActor(actor: AnyActorRef | undefined): boolean {
  return (actor as { logic?: unknown } | undefined)?.logic === toolCallMachine;
}
