import type { CallCostModel } from "../../providers/call-cost.js";
import type { ModelStreamEvent } from "../../actors/model-stream.actor.js";
import type { ToolCallOutput } from "../../actors/tool-call.machine.js";
import type { CompactionResult } from "../../context/compact.js";
import type { ContextConfig, TokenCalibration } from "../../context/config.js";
import { withMessageIds } from "../../core/message-id.js";
import type { AgentMessage, ToolResultMessage } from "../../core/messages.js";
import type { OutputSpec } from "../../core/output.js";
import type {
  AgentLimits,
  LoopDetectionOptions,
  QueueMode,
  ToolExecutionStrategy,
} from "../../core/options.js";
import { newRun, noItems, type RunState } from "../../rules/agent.logic.js";
import type { GroupDoneEvent } from "../tool-execution.machine.js";

export interface AgentMachineInput {
  messages?: AgentMessage[];
  /** The data of the compaction budget (functions such as a summariser stay in the runtime). */
  contextBudget?: ContextConfig;
  /** Names of the tools that may run side by side (strategy `"auto"`). */
  concurrencySafeTools?: string[];
  strategy?: ToolExecutionStrategy;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  limits?: AgentLimits;
  /** The worst-case prices of a model call, when a cost limit is set. */
  costModel?: CallCostModel;
  /**
   * With `costModel`: the USD the agent spent before this actor (its spend store's record, or what
   * the transcript it starts from cost), so a reload does not start its life's budget again.
   */
  spentUsd?: number;
  /** Loop detection thresholds, or `false` for none; absent = the defaults. */
  loopDetection?: LoopDetectionOptions | false;
  /**
   * The context of this agent's previous actor, released while idle (see the agent's resting in
   * `agent/create-agent.ts`): the new actor starts idle with it, as if it had never stopped.
   */
  resume?: AgentContext;
}

export interface AgentContext {
  /** The transcript (a read-only view that costs no copy per message: see `transcript.ts`). */
  messages: AgentMessage[];
  /** Messages the next turn appends before it calls the model. */
  pending: AgentMessage[];
  steeringQueue: AgentMessage[];
  followUpQueue: AgentMessage[];
  strategy: ToolExecutionStrategy;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  limits: AgentLimits;
  contextBudget?: ContextConfig;
  concurrencySafeTools: string[];
  run: RunState;
  calibration?: TokenCalibration;
  /**
   * The context window learned from the provider's overflow errors, when lower than the configured
   * one (absent until the first overflow): kept for the rest of the session, and in snapshots.
   */
  learnedMaxContextTokens?: number;
  /** Absent = the default thresholds (see `LOOP_DETECTION_DEFAULTS`). */
  loopDetection?: LoopDetectionOptions | false;
  /**
   * With a cost limit: what a call may cost at worst (plain data, kept in snapshots), and the USD
   * the agent has spent over its life. Absent without one, so the context keeps its older shape.
   */
  costModel?: CallCostModel;
  spentUsd?: number;
  /** With handoffs: the name of the active agent (absent: the main one, and no handoff yet). */
  activeAgent?: string;
}

export type AgentMachineEvent =
  /** `outputSpec`: the run's output schema (see `createAgent({ output })`). */
  | { type: "PROMPT"; messages: AgentMessage[]; outputSpec?: OutputSpec }
  | { type: "CONTINUE"; outputSpec?: OutputSpec }
  | { type: "PROMPT_REJECTED"; reason: string }
  | { type: "STEER"; message: AgentMessage }
  | { type: "FOLLOW_UP"; message: AgentMessage }
  | { type: "ABORT" }
  /** Drops every queued steering and follow-up message (`agent.abort()` sends it). */
  | { type: "CLEAR_QUEUES" }
  /** A compaction asked while idle (`agent.compact()`), done outside the machine: its result. */
  | { type: "COMPACTED"; result: CompactionResult }
  | { type: "DEADLINE" }
  | { type: "CHECK" }
  | ModelStreamEvent
  | GroupDoneEvent
  /** The tool execution machine finished: its output is the results it had not reported yet. */
  | { type: "xstate.done.actor.toolExecution"; output?: ToolResultMessage[] }
  | { type: "xstate.error.actor.toolExecution"; error: unknown }
  /** The call actor of a turn with one call finished (its id is the tool call id). */
  | { type: `xstate.done.actor.${string}`; output?: ToolCallOutput | ToolResultMessage[] }
  | { type: `xstate.error.actor.${string}`; error: unknown };

/** The model stream's last event of a turn: the assistant message, how it ended, and whether it was announced. */
export type StreamDone = Extract<ModelStreamEvent, { type: "STREAM_DONE" }>;

/** A tool call the model stream finished before the message did (started eagerly). */
export type StreamReady = Extract<ModelStreamEvent, { type: "TOOL_CALL_READY" }>;

/** The limits of an agent that sets none: one frozen object for all of them. */
const NO_LIMITS: AgentLimits = Object.freeze({});

/**
 * The context a new agent actor starts with: its input's, or the resting agent's it resumes.
 *
 * @example
 * ```ts
 * initialContext({ strategy: "sequential" }).run.turn; // 0
 * ```
 */
export function initialContext(input: AgentMachineInput): AgentContext {
  return (
    input.resume ?? {
      messages: withMessageIds(input.messages ?? []),
      pending: noItems(),
      steeringQueue: noItems(),
      followUpQueue: noItems(),
      strategy: input.strategy ?? "parallel",
      steeringMode: input.steeringMode ?? "one-at-a-time",
      followUpMode: input.followUpMode ?? "one-at-a-time",
      limits: input.limits ?? NO_LIMITS,
      contextBudget: input.contextBudget,
      concurrencySafeTools: input.concurrencySafeTools?.length ? input.concurrencySafeTools : noItems(),
      run: newRun(),
      // Only when set: the context's shape (and so the snapshot version) stays that of older releases.
      ...(input.loopDetection !== undefined && { loopDetection: input.loopDetection }),
      ...(input.costModel !== undefined && { costModel: input.costModel, spentUsd: input.spentUsd ?? 0 }),
    }
  );
}
