// What a hosted thread drives, read synchronously: any AgentHandle through handle-backend.ts (the
// agent in this process, whatever `threads` opens, the `durable` alias's session handle).
// hosted-thread.ts speaks only to this interface, so the quiescence detector, the response periods, the reconnects and the side routes
// are the same code for every agent.
import type { Observable } from "rxjs";
import type { Agent, PendingApproval } from "../../agent/agent.js";
import type { SequencedEvent } from "../../agent/event-log.js";
import type { AgentEvent } from "../../core/events.js";
import type { AgentMessage, UserMessage } from "../../core/messages.js";
import type { Tool } from "../../core/tool.js";
import { answerShapeRefusal } from "../../tools/call-answers.js";
import type { ApprovalAnswer, ThreadAgent, ToolCallAnswer } from "../protocol.js";

/** The operations a hosted thread needs of what runs its agent. */
export interface ThreadBackend extends ThreadAgent {
  /** The run's events, each published once, in order (the host numbers them per run). */
  readonly events$: Observable<AgentEvent>;
  /** Messages queued by steer / follow-up that no turn has taken yet (what the backend knows of). */
  readonly queued: { steering: readonly AgentMessage[]; followUp: readonly AgentMessage[] };
  /** The events of run `runId` from `seq` (0 = its `agent_start`), then live; as `agent.eventsSince`. */
  eventsSince(runId: string, seq: number): Observable<SequencedEvent>;
  /**
   * Starts a run with `message`. Resolves once `agent_start` has been published (`undefined`), or
   * with the reason the run was refused (nothing started).
   */
  start(message: UserMessage, tools: readonly Tool[] | undefined): Promise<string | undefined>;
  steer(message: UserMessage): Promise<void>;
  followUp(message: UserMessage): Promise<void>;
  /** Aborts the active run; whether one was active. */
  abort(): Promise<boolean>;
  /**
   * Checks answers to pending calls as the agent will when they are applied (edited arguments
   * against the tool's schema, a client-run tool's result), applying none: throws the
   * `AgentCallError` of the first it would refuse. The host applies a request's answers only
   * when all pass, so a request is taken whole or not at all.
   */
  checkAnswers(approvals: readonly ApprovalAnswer[], toolResults: readonly ToolCallAnswer[]): Promise<void>;
  /**
   * Applies answers in one go, approvals first, in order; the first the agent refuses stops it. One
   * call, so a backend that holds back the run's events while answers are applied (a durable
   * session) holds them across all of a request's answers: the run is not seen moving on (and
   * going quiescent) between two of them.
   */
  answer(approvals: readonly ApprovalAnswer[], toolResults: readonly ToolCallAnswer[]): Promise<void>;
  /** Brings what the backend knows up to date before a request is checked against it. */
  refresh(): Promise<void>;
  /**
   * Brings the view up to date before the thread reads it between requests (the run going
   * quiescent, a replay's end), for a backend whose view is read asynchronously.
   */
  settle?(): Promise<void>;
  /** The thread's snapshot for a `ThreadStore` (in process only). */
  persistedSnapshot(): unknown;
  /** Stops it (the host is closing). */
  stop(): void;
  /** The in-process agent, when there is one. */
  readonly local: Agent | undefined;
}

/**
 * Why the agent would refuse one of these answers when applied, checked as it checks them
 * (`checkEditedArgs` for edited arguments, `clientResultOf` for a client-run tool's result), or
 * `undefined` when it would take them all. `pending` are the calls waiting for approval;
 * `toolNamed` finds a call's tool (a tool it does not find refuses the edit, as the agent does;
 * no `toolNamed` at all: edited arguments are left to the caller, who checks them elsewhere).
 */
export function refusalOf(
  approvals: readonly ApprovalAnswer[],
  toolResults: readonly ToolCallAnswer[],
  pending: readonly PendingApproval[],
  toolNamed: ((name: string) => Tool | undefined) | undefined,
): string | undefined {
  for (const answer of approvals) {
    if (!answer.approved || answer.args === undefined || !toolNamed) continue;
    const toolName = pending.find((p) => p.toolCallId === answer.toolCallId)?.toolName ?? "";
    const refusal = answerShapeRefusal(
      { toolCallId: answer.toolCallId, approve: { args: answer.args } },
      toolName,
      toolNamed,
    );
    if (refusal !== undefined) return refusal;
  }
  for (const answer of toolResults) {
    if ("error" in answer) continue;
    const refusal = answerShapeRefusal(answer, "", () => undefined);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}
