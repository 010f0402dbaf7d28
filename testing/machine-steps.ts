import { type AnyMachineSnapshot, initialTransition, transition } from "xstate";
import type { AgentEvent } from "../core/events.js";
import { type AssistantMessage, emptyUsage, type ToolCall } from "../core/messages.js";
import type { AgentOptions } from "../core/options.js";
import {
  type AgentContext,
  type AgentMachineEvent,
  type AgentMachineInput,
  agentMachine,
} from "../machines/agent.machine.js";

/** One step of the agent machine: where it is, and what it would do on the way (nothing ran). */
export interface MachineStep {
  /** The snapshot after the step: pass it to the next `stepAgentMachine`. */
  snapshot: AnyMachineSnapshot;
  /** The active state, e.g. `{ running: "streaming" }` or `"idle"`. */
  value: AnyMachineSnapshot["value"];
  context: AgentContext;
  /** The events the step would publish on `agent.events$`, in order. */
  emitted: AgentEvent[];
  /**
   * The actions it would execute, by name; the actors it would start as `spawn:<id>`
   * (`spawn:modelStream`, `spawn:toolExecution`, `spawn:<toolCallId>`), `sendTo:<event>`, `stopChild`.
   */
  actions: string[];
}

/** What the machine is configured with: the options of `createAgent` it reads. */
export type MachineOptions = Pick<
  AgentOptions,
  | "messages"
  | "toolExecution"
  | "steeringMode"
  | "followUpMode"
  | "limits"
  | "loopDetection"
  | "context"
  | "tools"
>;

/**
 * The agent machine's input for these `createAgent` options, as `createAgent` makes it: the
 * strategy, queue modes, limits, loop detection, compaction budget (without its functions), and
 * which tools may run side by side.
 *
 * @example
 * ```ts
 * const [snapshot] = initialTransition(agentMachine, agentMachineInput({ limits: { maxTurns: 2 } }));
 * ```
 */
export function agentMachineInput(options: MachineOptions = {}): AgentMachineInput {
  return {
    messages: options.messages,
    strategy: options.toolExecution,
    steeringMode: options.steeringMode,
    followUpMode: options.followUpMode,
    limits: options.limits,
    ...(options.loopDetection !== undefined && { loopDetection: options.loopDetection }),
    contextBudget:
      options.context &&
      (Object.fromEntries(
        Object.entries(options.context).filter(([, v]) => typeof v !== "function"),
      ) as AgentMachineInput["contextBudget"]),
    concurrencySafeTools: (options.tools ?? []).filter((t) => t.concurrencySafe).map((t) => t.name),
  };
}

/**
 * The agent machine configured with your options, before anything happens: the first step.
 * Pure: no actor starts, no model is called, no clock is read.
 *
 * @example
 * ```ts
 * let step = startAgentMachine({ limits: { maxTurns: 1 }, tools: [add] });
 * step = stepAgentMachine(step, { type: "PROMPT", messages: [userMessage("hi")] });
 * step.value; // { running: "streaming" }
 * step.actions; // [..., "spawn:modelStream"]
 * ```
 */
export function startAgentMachine(options: MachineOptions = {}): MachineStep {
  const [snapshot, actions] = initialTransition(agentMachine, agentMachineInput(options));
  return describeStep(snapshot, actions);
}

/**
 * The next step: what the machine does with one event (`PROMPT`, `STREAM_DONE` from the model
 * stream, `GROUP_DONE` from the tool execution, `ABORT`, `CHECK`, …), without running anything.
 * Build the model's answers with {@link modelAnswer}.
 *
 * @example
 * ```ts
 * step = stepAgentMachine(step, { type: "STREAM_DONE", message: modelAnswer({ text: "hi" }), started: true });
 * step.emitted.map((e) => e.type); // ["message_end", "turn_end"]
 * ```
 */
export function stepAgentMachine(step: MachineStep, event: AgentMachineEvent): MachineStep {
  const [snapshot, actions] = transition(agentMachine, step.snapshot as never, event);
  return describeStep(snapshot, actions);
}

/**
 * A model's answer as the model stream hands it to the machine: text and/or tool calls (ids
 * `call_<n>` unless given), `toolUse` when it has calls, else `stop`.
 *
 * @example
 * ```ts
 * modelAnswer({ toolCalls: [{ name: "read_file", arguments: { path: "a.md" } }] });
 * ```
 */
export function modelAnswer(answer: {
  text?: string;
  toolCalls?: { name: string; arguments?: Record<string, unknown>; id?: string }[];
  stopReason?: AssistantMessage["stopReason"];
  errorMessage?: string;
}): AssistantMessage {
  const calls: ToolCall[] = (answer.toolCalls ?? []).map((c, i) => ({
    type: "toolCall",
    id: c.id ?? `call_${i}`,
    name: c.name,
    arguments: c.arguments ?? {},
  }));
  return {
    role: "assistant",
    content: [...(answer.text ? [{ type: "text" as const, text: answer.text }] : []), ...calls],
    stopReason: answer.stopReason ?? (calls.length > 0 ? "toolUse" : "stop"),
    usage: emptyUsage(),
    timestamp: 0,
    ...(answer.errorMessage !== undefined && { errorMessage: answer.errorMessage }),
  };
}

function describeStep(
  snapshot: AnyMachineSnapshot,
  actions: readonly { type: string; params?: unknown }[],
): MachineStep {
  return {
    snapshot,
    value: snapshot.value,
    context: snapshot.context as AgentContext,
    emitted: actions
      .filter((a) => a.type === "xstate.emit")
      .map((a) => (a.params as { event: AgentEvent }).event),
    actions: actions.map((a) => {
      const params = a.params as { id?: string; event?: { type: string } } | undefined;
      if (a.type === "xstate.spawnChild") return `spawn:${params?.id}`;
      if (a.type === "xstate.sendTo") return `sendTo:${params?.event?.type}`;
      if (a.type === "xstate.stopChild") return "stopChild";
      return a.type;
    }),
  };
}
