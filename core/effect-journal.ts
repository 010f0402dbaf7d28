import type { CompactionResult } from "./context-config.js";
import type { ProviderErrorKind } from "./provider.js";
import type { Tool, ToolResult } from "./tool.js";
import type { AgentMessage, AssistantMessage } from "./messages.js";
import type { PermissionDecision } from "./options.js";

/** What one model call ends with: the final assistant message, and why it failed when it did. */
export interface ModelCallOutcome {
  message: AssistantMessage;
  errorKind?: ProviderErrorKind;
}

/** A tool call that waits for a person's decision. */
export interface ApprovalRequest {
  toolCallId: string;
  toolName: string;
  args: unknown;
}

/** A decision on an {@link ApprovalRequest}. */
/** `args`: the arguments a human corrected, already checked by the tool's schema. */
export type ApprovalDecision = { approved: true; args?: unknown } | { approved: false; reason?: string };

/** A call of a client-run tool (`defineClientTool`) that waits for the client's result. */
export interface ClientResultRequest {
  toolCallId: string;
  toolName: string;
  /** The validated arguments the client runs the tool with. */
  args: unknown;
  /** When the tool (or `toolTimeoutMs`) bounds the wait: after `ms`, the call is answered with `result`. */
  timeout?: { ms: number; result: ToolResult };
}

/** Which queue a check drains: steering at `steeringCheck`, follow-ups at `followUpCheck`. */
export type InboxKind = "steering" | "followUp";

/**
 * The seam through which a durable engine journals the loop's effects (`agent-machine/restate`
 * provides one). An agent without a journal (every agent `createAgent` makes) runs its effects
 * directly and never calls any of this.
 *
 * The loop calls these methods in an order that depends only on what earlier calls answered, so a
 * replay that answers the same asks the same: that is what lets an engine replay a run from its
 * journal. Each `run` callback is the effect itself; the journal runs it once and records what it
 * resolved with, or answers from the record without running it.
 *
 * @example
 * ```ts
 * // A journal that records nothing: every effect runs at once (what an agent without one does).
 * const direct: EffectJournal = {
 *   now: Date.now,
 *   modelCall: (_turn, run) => run(),
 *   toolCall: (_id, run) => run(),
 *   permission: (_id, run) => run(),
 *   approval: () => new Promise(() => {}),
 *   compaction: (_turn, run) => run(),
 *   drain: async () => [],
 *   timer: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
 * };
 * ```
 */
export interface EffectJournal {
  /**
   * A prefix unique to this journal (a Restate invocation id): the run's message ids are counted
   * under it, so a replay mints the same ids as the first execution did.
   */
  readonly idPrefix?: string;
  /** The clock of every timestamp the loop writes (in process: `Date.now`). */
  now(): number;
  /** One model call (`turn` counts the run's turns): `run` streams it, publishing its deltas, and resolves with the outcome. */
  modelCall(turn: number, run: () => Promise<ModelCallOutcome>): Promise<ModelCallOutcome>;
  /** One tool call, named by its id: `run` runs the hooks, the tool and its timeout, and never rejects. */
  toolCall(toolCallId: string, run: () => Promise<ToolResult>): Promise<ToolResult>;
  /** The permission checker's decision on one call. */
  permission(toolCallId: string, run: () => Promise<PermissionDecision>): Promise<PermissionDecision>;
  /** Waits for a decision on a call the permission checker asked about; resolvable from outside. */
  approval(request: ApprovalRequest): Promise<ApprovalDecision>;
  /**
   * Waits for the client's result of a client-run call, resolvable from outside, and answers with
   * `request.timeout.result` when the timeout comes first. A journal without it answers such a call
   * with an error result at once (the client cannot reach a run it does not serve).
   */
  clientResult?(request: ClientResultRequest): Promise<ToolResult>;
  /** One compaction of the transcript (`undefined`: nothing changed). */
  compaction(
    turn: number,
    run: () => Promise<CompactionResult | undefined>,
  ): Promise<CompactionResult | undefined>;
  /** The messages queued from outside that this check takes (as `steeringMode` / `followUpMode` say). */
  drain(kind: InboxKind): Promise<AgentMessage[]>;
  /** Resolves after `ms` (the run's `maxDurationMs`, a sub-agent call's timeout). */
  timer(ms: number): Promise<void>;
  /**
   * The journal of a sub-agent run by call `callId` of tool `toolName`: its steps are journaled
   * under the call's path (`<callId>/model:1`, `<callId>/tool:<id>`), so a replay answers the
   * child's finished steps and it never runs them again; its waiting calls are named by their path
   * (`<callId>/<childCall>`), as its parent lists them. A journal without it journals a sub-agent's
   * call as one step, as any tool's (a crash then runs the whole sub-agent again).
   */
  child?(callId: string, toolName: string): EffectJournal;
  /**
   * The tools an agent on this journal runs, given the ones it was made with: a durable engine
   * swaps those it runs its own way (a tool that answers later keeps its handle in the engine). An
   * agent made on the journal (the run's, or a sub-agent's on a `child` journal) asks it once.
   */
  tools?(tools: readonly Tool[]): Tool[];
  /**
   * What a sub-agent starts from, when its context filter did work of its own (a summary, a
   * function): recorded once (only on a journal made by `child`).
   */
  context?(run: () => Promise<AgentMessage[]>): Promise<AgentMessage[]>;
}
