import { enqueueActions } from "xstate";
import type { CompactionResult } from "../../../context/compact.js";
import {
  contextOverflowText,
  learnContextWindow,
  withLearnedWindow,
} from "../../../context/context-window.js";
import { estimateTokens } from "../../../context/tokens.js";
import { withMessageIds } from "../../../core/message-id.js";
import { messageIdsFor, nowFor } from "../../../core/runtime.js";
import { emptyAssistant, runMessages } from "../../../rules/agent.logic.js";
import { appendToTranscript, readTranscript } from "../../../rules/transcript.js";
import type { StreamDone } from "../context.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions of a context that no longer fits: a compaction's result taken in, and a request the
 * provider refused as too long (the window learned from its error, the turn retried after a
 * forced compaction, or failed plainly when compacting cannot help).
 *
 * @example
 * ```ts
 * setup({ actions: { ...compactionActions } }); // compacting.reducing's onDone: `applyCompaction`
 * ```
 */
export const compactionActions = defineAgentActions({
  applyCompaction: enqueueActions(({ context, enqueue, self }, result: CompactionResult | undefined) => {
    enqueue.assign({ run: { ...context.run, needsCompaction: false, forceCompaction: false } });
    if (!result) return;
    const { level, tokensBefore, tokensAfter, summaryUsage } = result;
    enqueue.emit({
      type: "compaction",
      level,
      tokensBefore,
      tokensAfter,
      ...(summaryUsage && { summaryUsage }),
    });
    // The run's messages so far are kept as they were, for agent_end; new ones follow the compacted transcript.
    const rewritten = runMessages(context.messages, context.run);
    // A budget counts the summary call, as it counts the model's (a cost limit's fields only).
    const summaryUsd = context.costModel ? (summaryUsage?.cost?.total ?? 0) : 0;
    enqueue.assign({
      // The summary and marker a compaction writes get their ids as they enter.
      messages: withMessageIds(result.messages, messageIdsFor(self)),
      run: {
        ...context.run,
        needsCompaction: false,
        forceCompaction: false,
        firstMessage: result.messages.length,
        rewritten,
        ...(summaryUsd > 0 && { summaryUsd: (context.run.summaryUsd ?? 0) + summaryUsd }),
      },
      ...(summaryUsd > 0 && { spentUsd: (context.spentUsd ?? 0) + summaryUsd }),
    });
  }),
  // A compaction asked between runs (`agent.compact()`): the same event and ids as the loop's, no run to touch.
  applyIdleCompaction: enqueueActions(({ context, enqueue, self }, result: CompactionResult) => {
    const { level, tokensBefore, tokensAfter, summaryUsage } = result;
    enqueue.emit({
      type: "compaction",
      level,
      tokensBefore,
      tokensAfter,
      ...(summaryUsage && { summaryUsage }),
    });
    const summaryUsd = context.costModel ? (summaryUsage?.cost?.total ?? 0) : 0;
    enqueue.assign({
      messages: withMessageIds(result.messages, messageIdsFor(self)),
      // Between runs only the agent's lifetime budget has something to count it against.
      ...(summaryUsd > 0 && { spentUsd: (context.spentUsd ?? 0) + summaryUsd }),
    });
  }),
  learnContextWindow: enqueueActions(({ context, enqueue }, done: StreamDone) => {
    if (done.errorKind !== "context_overflow") return;
    const config = withLearnedWindow(context.contextBudget, context.learnedMaxContextTokens);
    const learned = learnContextWindow({
      config: config ?? { maxContextTokens: Number.MAX_SAFE_INTEGER },
      current: config?.maxContextTokens ?? Number.MAX_SAFE_INTEGER,
      messages: readTranscript(context.messages),
      calibration: context.calibration,
      errorMessage: done.message.errorMessage,
    });
    if (learned.maxContextTokens >= learned.previous) return;
    const { maxContextTokens, previous, refusedTokens, providerMaximum } = learned;
    enqueue.emit({
      type: "context_window_learned",
      maxContextTokens,
      // An agent without a budget had no window to speak of: the refused request was its bound.
      previous: config ? previous : refusedTokens,
      refusedTokens,
      ...(providerMaximum !== undefined && { providerMaximum }),
    });
    enqueue.assign({ learnedMaxContextTokens: maxContextTokens });
  }),
  prepareOverflowRetry: enqueueActions(({ context, enqueue }, done: StreamDone) => {
    // The failed attempt's message was announced: close it before the retry opens another.
    if (done.started) enqueue.emit({ type: "message_end", message: done.message, discarded: true });
    enqueue.assign({
      run: {
        ...context.run,
        overflowRetried: true,
        overflowRetries: (context.run.overflowRetries ?? 0) + 1,
        overflowError: done.message.errorMessage,
        needsCompaction: true,
        forceCompaction: true,
      },
    });
  }),
  recordOverflowFailure: enqueueActions(({ context, enqueue, self }) => {
    const transcript = readTranscript(context.messages);
    const error = contextOverflowText({
      providerMessage: context.run.overflowError ?? "context overflow",
      messages: transcript.length,
      tokens: estimateTokens(transcript),
      maxContextTokens: context.learnedMaxContextTokens ?? context.contextBudget?.maxContextTokens ?? 0,
    });
    const message = emptyAssistant("error", error, nowFor(self), messageIdsFor(self).next());
    enqueue.emit({ type: "message_start", message });
    enqueue.emit({ type: "message_end", message });
    enqueue.assign({
      messages: appendToTranscript(context.messages, [message]),
      run: {
        ...context.run,
        needsCompaction: false,
        forceCompaction: false,
        turnMessage: message,
        endReason: context.run.endReason ?? "error",
        errorMessage: error,
        errorKind: "context_overflow",
      },
    });
  }),
});
