import { enqueueActions, sendTo } from "xstate";
import { contextOverflowText } from "../../../context/context-window.js";
import { estimateTokens, reportedPromptTokens } from "../../../context/tokens.js";
import { addUsage, type AssistantMessage } from "../../../core/messages.js";
import { withMessageId } from "../../../core/message-id.js";
import { messageIdsFor, nowFor } from "../../../core/runtime.js";
import { withCost } from "../../../providers/pricing.js";
import { emptyAssistant, ensureUniqueToolCallIds, markInterrupted } from "../../../rules/agent.logic.js";
import { appendToTranscript, readTranscript, transcriptTokens } from "../../../rules/transcript.js";
import type { AgentContext, StreamDone } from "../context.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions of the model's answer: the assistant message recorded (with the run's usage, its end
 * reason and the budget's calibration), an empty one where the model never answered (a failed
 * stream or compaction, an abort), and an abort passed on to the stream.
 *
 * @example
 * ```ts
 * setup({ actions: { ...modelAnswerActions } }); // streaming's STREAM_DONE: `recordAssistant`
 * ```
 */
export const modelAnswerActions = defineAgentActions({
  recordAssistant: enqueueActions(({ context, enqueue, self }, done: StreamDone) => {
    // The model stream draws the id; a message sent to the machine by hand gets one here.
    const message = pricedForBudget(
      context,
      withMessageId(
        markInterrupted(explainOverflow(context, ensureUniqueToolCallIds(done.message), done)),
        messageIdsFor(self),
      ),
    );
    if (!done.started) enqueue.emit({ type: "message_start", message });
    enqueue.emit({ type: "message_end", message });
    const usage = message.usage;
    const endReason =
      context.run.endReason ??
      (message.stopReason === "error" ? "error" : message.stopReason === "aborted" ? "aborted" : undefined);
    enqueue.assign({
      // What the provider counted beyond our estimate of the messages sent (system prompt, tools).
      // Only agents with a budget need it (`calibrationFromUsage`, with the transcript's running estimate).
      calibration:
        (context.contextBudget !== undefined || context.learnedMaxContextTokens !== undefined) &&
        usage.input + usage.cacheRead + usage.cacheWrite > 0
          ? { estimated: transcriptTokens(context.messages), reported: reportedPromptTokens(usage) }
          : context.calibration,
      messages: appendToTranscript(context.messages, [message]),
      ...(context.spentUsd !== undefined && { spentUsd: context.spentUsd + (usage.cost?.total ?? 0) }),
      run: {
        ...context.run,
        usage: addUsage(context.run.usage, usage),
        turnMessage: message,
        endReason,
        errorMessage: message.stopReason === "error" ? message.errorMessage : context.run.errorMessage,
        ...(message.stopReason === "error" && done.errorKind && { errorKind: done.errorKind }),
      },
    });
  }),
  recordEmptyTurn: enqueueActions(
    ({ context, enqueue, self }, failure: { stopReason: "aborted" | "error"; error: string }) => {
      const message = emptyAssistant(
        failure.stopReason,
        failure.error,
        nowFor(self),
        messageIdsFor(self).next(),
      );
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
      enqueue.assign({
        messages: appendToTranscript(context.messages, [message]),
        run: {
          ...context.run,
          turnMessage: message,
          endReason: context.run.endReason ?? failure.stopReason,
          errorMessage: failure.stopReason === "error" ? failure.error : context.run.errorMessage,
        },
      });
    },
  ),
  forwardAbortToStream: sendTo("modelStream", { type: "ABORT" }),
});

/**
 * A budgeted agent's answer whose provider reported tokens but no `cost` (a custom provider,
 * `scripted`) is priced here from its model's price: otherwise the budget would count it as free
 * and never stop the run, although `createAgent` checked that the model has a price.
 */
function pricedForBudget(context: AgentContext, message: AssistantMessage): AssistantMessage {
  if (!context.costModel || message.usage.cost !== undefined || !message.model) return message;
  const usage = withCost(message.usage, message.model);
  return usage === message.usage ? message : { ...message, usage };
}

/**
 * A model call refused as too long after every retry: its message says so plainly (what was kept,
 * what to do), with the provider's words last.
 */
function explainOverflow(
  context: AgentContext,
  message: AssistantMessage,
  done: StreamDone,
): AssistantMessage {
  if (done.errorKind !== "context_overflow" || message.stopReason !== "error") return message;
  const transcript = readTranscript(context.messages);
  const errorMessage = contextOverflowText({
    providerMessage: message.errorMessage ?? "context overflow",
    messages: transcript.length,
    tokens: estimateTokens(transcript),
    maxContextTokens: context.learnedMaxContextTokens ?? context.contextBudget?.maxContextTokens ?? 0,
  });
  return { ...message, errorMessage };
}

/**
 * An error's message for the empty turn that records it (`recordEmptyTurn`).
 *
 * @example
 * ```ts
 * `Model stream failed: ${errorText(event.error)}`;
 * ```
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
