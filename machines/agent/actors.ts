import { compactionActor } from "../../actors/compaction.actor.js";
import { modelStreamActor } from "../../actors/model-stream.actor.js";
import { runDeadlineActor } from "../../actors/run-deadline.actor.js";
import { toolCallMachine } from "../../actors/tool-call.machine.js";
import { toolExecutionMachine } from "../tool-execution.machine.js";

/**
 * The actors the agent machine invokes (`modelStream`, `compaction`) and spawns (`toolExecution`,
 * `toolCall`, `runDeadline`), by the names its states and actions use.
 *
 * @example
 * ```ts
 * setup({ actors: agentActors }); // as agent-setup.ts does
 * ```
 */
export const agentActors = {
  modelStream: modelStreamActor,
  toolExecution: toolExecutionMachine,
  toolCall: toolCallMachine,
  compaction: compactionActor,
  runDeadline: runDeadlineActor,
};

/** The actors of {@link agentActors} as XState's `setup()` types them (one entry per name). */
export type AgentActor = {
  [K in keyof typeof agentActors]: { src: K; logic: (typeof agentActors)[K]; id: string | undefined };
}[keyof typeof agentActors];
