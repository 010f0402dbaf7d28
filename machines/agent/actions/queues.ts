import { assign, enqueueActions, sendTo } from "xstate";
import { enteredAs } from "../../../core/message-id.js";
import type { AgentMessage } from "../../../core/messages.js";
import { messageIdsFor } from "../../../core/runtime.js";
import { noItems, takeFromQueue } from "../../../rules/agent.logic.js";
import { isWakeMessage } from "../../../rules/wake-message.js";
import { defineAgentActions } from "./define.js";

/**
 * Made once, here, not per STEER (`enqueue.sendTo` makes one each time): `steer()` is often called
 * from a subscriber of an event another actor's action publishes (a call's `tool_execution_end`),
 * and the agent then handles STEER inside that action, where XState's development build takes any
 * `sendTo()` made for an action as a custom action calling it imperatively, and warns.
 */
const steeringQueuedToExecution = sendTo("toolExecution", { type: "STEERING_QUEUED" });

/**
 * The actions of the messages waiting for a turn: a prompt's, and the steering and follow-up
 * messages a user queues while the agent works, taken by the checks between turns.
 *
 * @example
 * ```ts
 * setup({ actions: { ...queueActions } }); // STEER: `enqueueSteering`; steeringCheck: `takeSteering`
 * ```
 */
export const queueActions = defineAgentActions({
  queueMessages: assign({
    pending: ({ context, self }, messages: AgentMessage[]) => [
      ...context.pending,
      ...messages.map((message) => enteredAs(message, "prompt", messageIdsFor(self))),
    ],
  }),
  queueContinuation: enqueueActions(({ context, enqueue }) => {
    // Continuing after an assistant message needs something new for the model: a queued message.
    // Otherwise steering queued while idle joins the first turn, as it does with a prompt.
    const afterAssistant = context.messages.at(-1)?.role === "assistant";
    const fromSteering = context.steeringQueue.length > 0;
    if (!afterAssistant && !fromSteering) return;
    const source = fromSteering ? context.steeringQueue : context.followUpQueue;
    const { taken, rest } = takeFromQueue(source, fromSteering ? context.steeringMode : context.followUpMode);
    enqueue.assign(fromSteering ? { steeringQueue: rest } : { followUpQueue: rest });
    enqueue.assign({ pending: ({ context }) => [...context.pending, ...taken] });
  }),
  enqueueSteering: assign({
    steeringQueue: ({ context, self }, message: AgentMessage) => [
      ...context.steeringQueue,
      enteredAs(message, "steer", messageIdsFor(self)),
    ],
  }),
  enqueueFollowUp: assign({
    followUpQueue: ({ context, self }, message: AgentMessage) => [
      ...context.followUpQueue,
      enteredAs(message, "followUp", messageIdsFor(self)),
    ],
  }),
  tellExecutionAboutSteering: enqueueActions(({ context, enqueue }) => {
    if (context.run.executionSpawned) enqueue(steeringQueuedToExecution);
  }),
  takeSteering: assign(({ context }) => {
    const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
    return { steeringQueue: rest, pending: [...context.pending, ...taken] };
  }),
  /** A prompt takes the steering queued while the agent was idle into its first turn. */
  takeQueuedSteering: enqueueActions(({ context, enqueue }) => {
    if (context.steeringQueue.length === 0) return;
    const { taken, rest } = takeFromQueue(context.steeringQueue, context.steeringMode);
    enqueue.assign({ steeringQueue: rest, pending: [...context.pending, ...taken] });
  }),
  /**
   * `agent.abort()`: what a person queued is dropped with the run. A wake's message (a schedule's
   * slot, an event, a late result) stays for the next run: nothing would send it again. The
   * aborted run does not take it (a run with an end reason goes to its end, past the checks).
   */
  clearQueues: assign({
    steeringQueue: ({ context }) => wakesOf(context.steeringQueue),
    followUpQueue: ({ context }) => wakesOf(context.followUpQueue),
  }),
  takeFollowUp: assign(({ context }) => {
    const { taken, rest } = takeFromQueue(context.followUpQueue, context.followUpMode);
    return { followUpQueue: rest, pending: [...context.pending, ...taken] };
  }),
  // Agents with a journal drain the queue of this check (`params`) first: see journaled-agent.machine.ts.
  scheduleCheck: sendTo(({ self }) => self, { type: "CHECK" }),
});

/** The wake messages of a queue (an abort keeps them), or a fresh empty queue. */
function wakesOf(queue: readonly AgentMessage[]): AgentMessage[] {
  return queue.some(isWakeMessage) ? queue.filter(isWakeMessage) : noItems<AgentMessage>();
}
