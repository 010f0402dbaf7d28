import type { ActionFunction, ParameterizedObject } from "xstate";
import type { AgentEvent } from "../../../core/events.js";
import type { AgentActor } from "../actors.js";
import type { AgentContext, AgentMachineEvent } from "../context.js";

/** One action of the agent machine, with the params its transitions give it. */
export type AgentAction<TParams extends ParameterizedObject["params"] | undefined> = ActionFunction<
  AgentContext,
  AgentMachineEvent,
  AgentMachineEvent,
  TParams,
  AgentActor,
  // Action and guard names, delays: an action here names none of the machine's (it would need the
  // whole setup's types), and `any` lets setup() take it under its own.
  any,
  any,
  any,
  AgentEvent
>;

/**
 * Types a group of the agent machine's actions as `setup()` would type them in place (context,
 * events, emitted events, actors), so that each group can live in a file of its own and be spread
 * into the machine's `setup()` (see `agent-setup.ts`). Returns `actions` unchanged.
 *
 * @example
 * ```ts
 * export const queueActions = defineAgentActions({
 *   enqueueSteering: assign({
 *     steeringQueue: ({ context }, message: AgentMessage) => [...context.steeringQueue, message],
 *   }),
 * });
 * ```
 */
export function defineAgentActions<
  T extends Record<string, ParameterizedObject["params"] | undefined>,
>(actions: {
  [K in keyof T]: AgentAction<T[K]>;
}): { [K in keyof T]: AgentAction<T[K]> } {
  return actions;
}
