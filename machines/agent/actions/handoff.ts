import { enqueueActions } from "xstate";
import { withMessageIds } from "../../../core/message-id.js";
import { messageIdsFor, runtimeOf } from "../../../core/runtime.js";
import { handoffIn } from "../../../rules/handoff.logic.js";
import { runMessages } from "../../../rules/agent.logic.js";
import { readTranscript } from "../../../rules/transcript.js";
import { defineAgentActions } from "./define.js";

/**
 * The action of `running.handingOff`: the agent a transfer named becomes active (machine context,
 * so snapshots restore with it; the runtime's provider, system prompt and tools), the transcript
 * becomes what its context filter let through, and the `handoff` event says what crossed.
 *
 * @example
 * ```ts
 * setup({ actions: { ...handoffActions } }); // handingOff's entry: `switchAgent`
 * ```
 */
export const handoffActions = defineAgentActions({
  switchAgent: enqueueActions(({ context, enqueue, self }) => {
    const found = handoffIn(context.run.turnResults);
    if (!found) return;
    const { toolCallId, handoff } = found;
    enqueue.assign({ activeAgent: handoff.to });
    enqueue(() => runtimeOf(self).activate?.(handoff.to));
    enqueue.emit({
      type: "handoff",
      from: handoff.from,
      to: handoff.to,
      toolCallId,
      before: handoff.before,
      after: handoff.after,
      removedIds: handoff.removedIds,
    });
    if (handoff.removedIds.length === 0 && handoff.added.length === 0) return;
    const removed = new Set(handoff.removedIds);
    const transcript = readTranscript(context.messages);
    const messages = [
      ...withMessageIds(handoff.added, messageIdsFor(self)),
      ...transcript.filter((m) => m.id === undefined || !removed.has(m.id)),
    ];
    // The run's messages so far are kept as they were, for agent_end; new ones follow (as after a compaction).
    enqueue.assign({
      messages,
      run: {
        ...context.run,
        firstMessage: messages.length,
        rewritten: runMessages(context.messages, context.run),
      },
    });
  }),
});
