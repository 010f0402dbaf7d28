import type { ProviderErrorKind } from "./provider.js";
import type { ToolResult } from "./tool.js";
import type { AgentMessage, AssistantMessage, ToolResultMessage, Usage } from "./messages.js";

/** Why a run ended. */
export type AgentEndReason = "stop" | "aborted" | "error" | "limit" | "rejected" | "loop";

/** Every event `agent.events$` publishes, discriminated by `type`. */
export type AgentEvent =
  | { type: "agent_start" }
  | { type: "turn_start"; turn: number }
  | { type: "message_start"; message: AgentMessage }
  | {
      type: "message_update";
      message: AssistantMessage;
      delta: string;
      kind: "text_delta" | "thinking_delta";
    }
  | {
      /**
       * A tool call of the streaming message opened, grew or completed. `toolCallId` names the call
       * the update belongs to (the provider's id): providers may interleave the deltas of two calls,
       * so the last call block of `message` is not necessarily this one.
       */
      type: "message_update";
      message: AssistantMessage;
      delta: string;
      kind: "toolcall_start" | "toolcall_delta" | "toolcall_end";
      toolCallId: string;
    }
  | {
      type: "message_end";
      message: AgentMessage;
      /**
       * The message never enters the transcript: a model call's attempt that failed and is tried
       * again (a transient error, a stall, a context overflow). It carries what the attempt said,
       * with `stopReason: "error"` and the failure in `errorMessage`; the retry opens a new message.
       */
      discarded?: true;
    }
  | { type: "tool_execution_start"; toolCallId: string; toolName: string; args: unknown }
  | { type: "tool_execution_update"; toolCallId: string; toolName: string; partialResult: ToolResult }
  | { type: "tool_progress"; toolCallId: string; toolName: string; text: string }
  | {
      type: "tool_execution_end";
      toolCallId: string;
      toolName: string;
      result: ToolResult;
      isError: boolean;
      childAgentId?: string;
    }
  | { type: "turn_end"; turn: number; message: AssistantMessage; toolResults: ToolResultMessage[] }
  | {
      type: "agent_end";
      messages: AgentMessage[];
      reason: AgentEndReason;
      /** What the run used: its own model calls and its sub-agents' runs, at every depth. */
      usage: Usage;
      /** The run's own model calls' usage, without its sub-agents'; present when a sub-agent ran. */
      ownUsage?: Usage;
      errorMessage?: string;
      /**
       * With reason `"error"` from the model: what failed, machine-readable (`"context_overflow"`
       * when even the smallest compacted context was refused, `"auth"`, `"rate_limit"`, ...).
       */
      errorKind?: ProviderErrorKind;
      /** The validated object, when the run has an output schema and ended with reason `"stop"`. */
      output?: unknown;
      /** The warnings of the output filters on the final answer (`createAgent({ outputFilters })`). */
      outputWarnings?: string[];
      /** With reason `"rejected"`: why (an input filter refused the prompt, or an output filter the last answer). */
      rejection?: string;
      /** The model's last answer when it was never valid output, or was rejected (withheld from `output`). */
      rawOutput?: string;
    }
  | { type: "input_rejected"; reason: string }
  /**
   * The object of the answer streaming, as far as it has arrived (a best-effort parse of the
   * partial JSON): for UIs that render its fields as they come. Only runs with an output schema.
   */
  | { type: "output_delta"; partial: unknown }
  /**
   * The final answer did not parse or failed the output schema: `retry` when the model is told the
   * error and answers again (attempt `attempt` of `maxRepairs + 1`), `fail` when the run ends with it.
   */
  | {
      type: "output_invalid";
      error: string;
      raw: string;
      attempt: number;
      maxRepairs: number;
      action: "retry" | "fail";
    }
  /**
   * One output filter's verdict on the final answer. A `reject` either goes back to the model
   * (`action: "retry"`) or ends the run with reason `"rejected"` (`action: "end"`).
   */
  | {
      type: "output_filter";
      filter: string;
      verdict: "pass" | "warn" | "reject";
      reason?: string;
      action?: "retry" | "end";
    }
  | {
      type: "compaction";
      level: 1 | 2 | 3;
      tokensBefore: number;
      tokensAfter: number;
      /** What the summariser's model calls used, when it reported it (counted in a session's totals). */
      summaryUsage?: Usage;
    }
  | {
      /**
       * The provider refused a request as too long for its context window: the agent lowers its
       * `maxContextTokens` to this for the rest of the session (it is kept in the snapshot).
       */
      type: "context_window_learned";
      maxContextTokens: number;
      /** The window in force before (configured or learned earlier). */
      previous: number;
      /** Our estimate of the refused request (messages, system prompt and tools). */
      refusedTokens: number;
      /** The maximum the provider's error stated, in its tokens, when it stated one. */
      providerMaximum?: number;
    }
  | {
      type: "retry";
      attempt: number;
      delayMs: number;
      error: string;
      /**
       * Set when a `fallback` chain hands the call to its next model: that model's provider id and
       * model (the failed attempt's partial answer was withdrawn, as for any retry).
       */
      provider?: string;
      model?: string;
    }
  /**
   * A limit ended the run's work: `answer` when one more call, without tools, asks the model for its
   * answer (the notice it gets follows as a message); `stop` when the run ends without one.
   */
  | {
      type: "limit_reached";
      limit: "maxTurns" | "maxTokens" | "maxDurationMs" | "maxCostUsd" | "maxSessionCostUsd";
      action: "answer" | "stop";
      text: string;
    }
  | ({ type: "approval_requested"; toolCallId: string; toolName: string; args: unknown } & NestedPath)
  /**
   * The conversation passed to another agent (`createAgent({ handoffs })`): `to` answers from the
   * next turn. `before`/`after`: the messages before the transfer and those that crossed (with
   * what the context filter added); `removedIds`: what the filter removed.
   */
  | {
      type: "handoff";
      from: string;
      to: string;
      toolCallId: string;
      before: number;
      after: number;
      removedIds: string[];
    }
  /**
   * A call of a client-run tool (`defineClientTool`) waits for its result: answer it with
   * `agent.resolveToolCall(toolCallId, result)` or `agent.rejectToolCall(toolCallId, reason)`.
   */
  | ({ type: "tool_result_requested"; toolCallId: string; toolName: string; args: unknown } & NestedPath)
  /** `agent.approve` / `agent.deny` answered a pending call (published just before the call goes on). */
  | {
      type: "approval_decided";
      toolCallId: string;
      /** For a call in a sub-agent: the ids of the calls from this agent's down to it. */
      path?: string[];
      /** For a call in a sub-agent: the ids of the sub-agents down to the one it waits in. */
      agents?: string[];
      toolName: string;
      approved: boolean;
      /** The arguments a human corrected, when approved with `{ args }` (what the call runs with). */
      editedArgs?: unknown;
    }
  | {
      /** A tool call repeats: `warned` (the model is told), then `stopped` (the run ends with reason `loop`). */
      type: "loop_detected";
      action: "warned" | "stopped";
      toolCallId: string;
      toolName: string;
      /** `repeated`: same call, same result; `failing`: same call, an error each time. */
      kind: "repeated" | "failing";
      count: number;
    };

export type AgentEventType = AgentEvent["type"];

/** The event of a given type. */
export type AgentEventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/**
 * Where a waiting call is, when it waits in a sub-agent (at any depth) rather than in the agent
 * that reports it: then its `toolCallId` is the `path` joined by `/`, and `approve`, `deny`,
 * `resolveToolCall` of this agent answer it by that id.
 *
 * @example
 * ```ts
 * const where: NestedPath = { path: ["call_research", "call_refund"], agents: ["researcher-call_research"] };
 * ```
 */
export interface NestedPath {
  /** The ids of the calls from this agent's down to the waiting one (its own id last). */
  path?: string[];
  /** The ids of the sub-agents from this agent's child down to the one the call waits in. */
  agents?: string[];
}
