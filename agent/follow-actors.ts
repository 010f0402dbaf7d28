import type { Agent, AgentActor } from "./agent.js";
import { AgentLifecycle } from "./agent-lifecycle.js";

/**
 * Follows an agent from actor to actor: calls `onActor` with its actor now, when it is awake, and
 * with each actor it wakes with later (a hibernating agent gets a new one each time), before that
 * actor starts, so its first inspection events are seen too. Reading `agent.actor` would wake a
 * hibernated agent; this never does. Returns the function that stops following. For tools that
 * watch an agent over its life (`visualize`, the Stately inspector's `attach`), not for apps.
 *
 * @example
 * ```ts
 * const stop = followActors(agent, (actor) => actor.system.inspect(observer));
 * ```
 */
export function followActors(agent: Agent, onActor: (actor: AgentActor) => void): () => void {
  if (agent instanceof AgentLifecycle) return agent.followActors(onActor);
  // Not ours: all we can follow is the actor it has.
  onActor(agent.actor);
  return () => undefined;
}
