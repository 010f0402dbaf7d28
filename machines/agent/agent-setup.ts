import { setup } from "xstate";
import type { AgentEvent } from "../../core/events.js";
import { compactionActions } from "./actions/compaction.js";
import { handoffActions } from "./actions/handoff.js";
import { modelAnswerActions } from "./actions/model-answer.js";
import { outputActions } from "./actions/output.js";
import { queueActions } from "./actions/queues.js";
import { runActions } from "./actions/run.js";
import { toolCallActions } from "./actions/tool-calls.js";
import { turnActions } from "./actions/turn.js";
import { agentActors } from "./actors.js";
import type { AgentContext, AgentMachineEvent, AgentMachineInput } from "./context.js";
import { agentGuards } from "./guards.js";

/**
 * The agent machine's `setup()`: its types, the actors it invokes and spawns, and every guard and
 * action its statechart names (each group in a file named for what it does). The statechart
 * itself is `agentMachine` in agent.machine.ts, made with `agentSetup.createMachine(...)`.
 *
 * @example
 * ```ts
 * const machine = agentSetup.createMachine({ id: "agent", initial: "idle", states: { idle: {} } });
 * ```
 */
export const agentSetup = setup({
  types: {
    input: {} as AgentMachineInput,
    context: {} as AgentContext,
    events: {} as AgentMachineEvent,
    emitted: {} as AgentEvent,
  },
  actors: agentActors,
  guards: agentGuards,
  actions: {
    ...runActions,
    ...queueActions,
    ...turnActions,
    ...compactionActions,
    ...modelAnswerActions,
    ...toolCallActions,
    ...outputActions,
    ...handoffActions,
  },
});
