import type { CompactionResult } from "../../context/compact.js";
import { tokensOverBudget } from "../../context/compact.js";
import { estimateMessageTokens, estimateTokens } from "../../context/tokens.js";
import { withLearnedWindow } from "../../context/context-window.js";
import { hasCalls, isTruncated } from "../../rules/agent.logic.js";
import {
  costVerdict,
  type LimitVerdict,
  limitNotice,
  limitVerdict,
  nextCallTokens,
  nextPromptTokens,
  type RunSpend,
} from "../../rules/limit-answer.logic.js";
import { type CallCostModel, worstCaseCallUsd } from "../../providers/call-cost.js";
import { loopMayStop, resolveLoopDetection } from "../../rules/loop-detection.logic.js";
import { transcriptTokens } from "../../rules/transcript.js";
import type { AgentContext, StreamDone } from "./context.js";
import type { ToolResultMessage } from "../../core/messages.js";
import { handoffIn } from "../../rules/handoff.logic.js";

type Args = { context: AgentContext };

/**
 * Times one turn is retried after a context overflow, each after learning a smaller window and
 * compacting to it (a window the error states is learned at once; one it does not is approached in
 * steps of 10 %).
 */
const MAX_OVERFLOW_RETRIES = 3;

/**
 * The agent machine's guards, by the names its transitions use: each a question about the context
 * (and the event's params where a transition gives them), callable on its own in a test.
 *
 * @example
 * ```ts
 * agentGuards.hasSteering({ context }); // true when a steering message is queued
 * ```
 */
export const agentGuards = {
  limitWantsAnswer: ({ context }: Args) =>
    !context.run.answeringLimit && verdictOf(context)?.action === "answer",
  limitReached: ({ context }: Args) => verdictOf(context) !== undefined,
  /** The turn about to start is over the context budget (with the limit's notice when one is asked for). */
  turnNeedsCompaction: ({ context }: Args) => turnOverBudget(context),
  answerNeedsCompaction: ({ context }: Args) => turnOverBudget(context, verdictOf(context)),
  /** After an overflow, a compaction that found nothing to remove: the same request would be refused. */
  compactionCannotHelp: ({ context }: Args, output: CompactionResult | undefined) =>
    context.run.forceCompaction && output === undefined,
  /**
   * With a cost limit: the compaction's summary call spent what the turn's model call needed (the
   * turn gate reserved the call before the summary was made); the call is not made.
   */
  summaryLeavesNoCall: ({ context }: Args, output: CompactionResult | undefined) => {
    const usd = output?.summaryUsage?.cost?.total ?? 0;
    if (!context.costModel || !output || usd <= 0) return false;
    const after: AgentContext = {
      ...context,
      messages: output.messages,
      run: { ...context.run, summaryUsd: (context.run.summaryUsd ?? 0) + usd },
      spentUsd: (context.spentUsd ?? 0) + usd,
    };
    return costVerdict(context.limits, spendOf(after, context.costModel))?.action === "stop";
  },
  overflowRetryable: ({ context }: Args, done: StreamDone) =>
    done.errorKind === "context_overflow" &&
    (context.run.overflowRetries ?? 0) < MAX_OVERFLOW_RETRIES &&
    !context.run.executionSpawned,
  hasToolCalls: (_: Args, done: StreamDone) => hasCalls(done.message),
  // Calls that must not run: those of a failed or aborted message, of an answer cut off at the
  // output limit (a call may be unfinished), or of the answer a limit asked for. Unless one already
  // started eagerly (then the execution machine stops them), they are answered at once and never
  // spawned: a spawned call starts running before an ABORT can reach it.
  callsNotToRun: ({ context }: Args, done: StreamDone) =>
    hasCalls(done.message) &&
    !context.run.executionSpawned &&
    (context.run.answeringLimit ||
      context.run.endReason !== undefined ||
      done.message.stopReason === "error" ||
      done.message.stopReason === "aborted" ||
      isTruncated(done.message)),
  runMustEnd: ({ context }: Args) => context.run.endReason !== undefined,
  /**
   * Whether the run may end with the turn whose tool results are coming in (checked before they
   * are recorded): it is ending already, or loop detection could stop it. When not, the turn
   * goes straight to `steeringCheck`, as `turnEnd` would send it, without a step through `turnEnd`.
   */
  runMayEndWithTurn: ({ context }: Args) =>
    context.run.endReason !== undefined ||
    (resolveLoopDetection(context.loopDetection) !== undefined && loopMayStop(context.run.loop)),
  hasSteering: ({ context }: Args) => context.steeringQueue.length > 0,
  turnHadToolCalls: ({ context }: Args) => hasCalls(context.run.turnMessage),
  /**
   * The turn had tool calls, nothing is queued for the next one (a loop notice), and it meets no
   * limit and fits the budget: it opens and streams at once, as `turnGate` would send it, without
   * a step through `turnGate`.
   */
  nextTurnStreams: ({ context }: Args) =>
    context.pending.length === 0 &&
    hasCalls(context.run.turnMessage) &&
    verdictOf(context) === undefined &&
    !turnOverBudget(context),
  hasFollowUp: ({ context }: Args) => context.followUpQueue.length > 0,
  /** The final answer was not taken (invalid output, or an output filter's reject) and may be tried again. */
  answerNeedsRetry: ({ context }: Args) =>
    context.run.answer?.problem !== undefined && context.run.endReason === undefined,
  executionSpawned: ({ context }: Args) => context.run.executionSpawned,
  /** A call of the turn transferred the conversation to another agent (see `agent/handoff.ts`). */
  handsOff: ({ context }: Args, results: readonly ToolResultMessage[]) =>
    context.run.endReason === undefined && handoffIn([...context.run.turnResults, ...results]) !== undefined,
};

/**
 * Whether the turn about to start goes over the context budget: the transcript, the messages the
 * turn will append, and the limit's notice when the turn is the answer a limit asks for.
 */
function turnOverBudget(context: AgentContext, answering?: LimitVerdict): boolean {
  const config = withLearnedWindow(context.contextBudget, context.learnedMaxContextTokens);
  if (config === undefined) return false;
  // The transcript's estimate is kept as it grows: no walk over the whole history per turn.
  let tokens = transcriptTokens(context.messages) + estimateTokens(context.pending);
  if (answering) tokens += estimateMessageTokens(limitNotice(answering, 0));
  return tokensOverBudget(tokens, config, context.calibration);
}

/**
 * What the limits say at the turn gate (see `limitVerdict`): the guards ask whether a limit is met,
 * the actions of the turn gate what it says.
 *
 * @example
 * ```ts
 * verdictOf(context)?.limit; // "maxTurns" when the run has made its last allowed turn
 * ```
 */
export function verdictOf(context: AgentContext) {
  return limitVerdict(
    context.limits,
    context.run,
    () => nextCallTokens(context.messages, context.pending),
    context.costModel && spendOf(context, context.costModel),
  );
}

/**
 * What a run has spent (its calls, its sub-agents, its compaction summaries), and what its next
 * call may cost at worst.
 *
 * @example
 * ```ts
 * spendOf(context, context.costModel).runUsd; // e.g. 0.0182
 * ```
 */
export function spendOf(context: AgentContext, model: CallCostModel): RunSpend {
  return {
    runUsd:
      (context.run.usage.cost?.total ?? 0) + (context.run.subAgentUsd ?? 0) + (context.run.summaryUsd ?? 0),
    sessionUsd: context.spentUsd ?? 0,
    nextCallUsd: () =>
      worstCaseCallUsd(model, nextPromptTokens(context.messages, context.pending, model.fixedPromptTokens)),
  };
}
