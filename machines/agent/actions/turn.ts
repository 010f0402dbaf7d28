import { assign, emit, enqueueActions } from "xstate";
import type { AgentMessage } from "../../../core/messages.js";
import { nowFor } from "../../../core/runtime.js";
import { emptyAssistant, noItems, openedRun } from "../../../rules/agent.logic.js";
import { appendToTranscript } from "../../../rules/transcript.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions that open and close a turn. A turn opens with three (`START_TURN` in
 * agent.machine.ts): `turn_start`, the queued messages announced, then both enter the context. Not
 * one enqueueActions: the usual turn has nothing queued and skips the middle one, and
 * enqueueActions costs XState a list of closures each time.
 *
 * @example
 * ```ts
 * setup({ actions: { ...turnActions } }); // turnGate: ["announceTurnStart", "announceQueued", "openTurn"]
 * ```
 */
export const turnActions = defineAgentActions({
  announceTurnStart: emit(({ context }) => ({ type: "turn_start" as const, turn: context.run.turn + 1 })),
  announceQueued: enqueueActions(({ context, enqueue }) => {
    for (const message of context.pending) {
      enqueue.emit({ type: "message_start", message });
      enqueue.emit({ type: "message_end", message });
    }
  }),
  openTurn: assign(({ context }) => ({
    messages: appendToTranscript(context.messages, context.pending),
    pending: noItems<AgentMessage>(),
    // The turn gate measured it: compacting is entered only when it was over budget.
    run: openedRun(context.run),
  })),
  publishTurnEnd: emit(({ context, self }) => ({
    type: "turn_end" as const,
    turn: context.run.turn,
    message:
      context.run.turnMessage ??
      emptyAssistant("aborted", "The turn ended before the model answered", nowFor(self)),
    toolResults: context.run.turnResults,
  })),
});
