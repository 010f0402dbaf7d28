import { assign, enqueueActions, raise, stopChild } from "xstate";
import { messageIdsFor, nowFor } from "../../../core/runtime.js";
import { addUsage } from "../../../core/messages.js";
import { durationLimitText, newRun, runMessages, stopNotice } from "../../../rules/agent.logic.js";
import { answeredAtLimit, limitNotice } from "../../../rules/limit-answer.logic.js";
import { isLoopNotice } from "../../../rules/loop-detection.logic.js";
import { outputOfRun } from "../../../rules/output.logic.js";
import { appendToTranscript } from "../../../rules/transcript.js";
import { verdictOf } from "../guards.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions of a run as a whole (a prompt or a continue, to its `agent_end`): how it begins, the
 * limits, deadline and aborts that end it, and how it ends.
 *
 * @example
 * ```ts
 * setup({ actions: { ...runActions } }); // `beginRun` on PROMPT, `finishRun` on entering `ending`
 * ```
 */
export const runActions = defineAgentActions({
  beginRun: enqueueActions(({ context, event, enqueue }) => {
    const output = event.type === "PROMPT" || event.type === "CONTINUE" ? event.outputSpec : undefined;
    enqueue.assign({ run: newRun(context.messages.length, output) });
    enqueue.emit({ type: "agent_start" });
    // Only a run with a duration limit has a deadline actor: a child the run does not need
    // would be copied by XState with the agent's children on every spawn and stop of a turn.
    const ms = context.limits.maxDurationMs;
    if (ms !== undefined) enqueue.spawnChild("runDeadline", { id: "runDeadline", input: { ms } });
  }),
  rejectInput: enqueueActions(({ context, enqueue }, reason: string) => {
    enqueue.emit({ type: "agent_start" });
    enqueue.emit({ type: "input_rejected", reason });
    enqueue.emit({
      type: "agent_end",
      messages: [],
      reason: "rejected",
      usage: newRun().usage,
      rejection: reason,
    });
    enqueue.assign({ run: { ...context.run, endReason: "rejected" } });
  }),

  noteLimit: enqueueActions(({ context, enqueue }) => {
    const verdict = verdictOf(context)!;
    enqueue.emit({ type: "limit_reached", limit: verdict.limit, action: "stop", text: verdict.text });
    enqueue.assign({ run: { ...context.run, endReason: "limit", limitText: verdict.text } });
  }),
  askForAnswer: enqueueActions(({ context, enqueue, self }) => {
    const verdict = verdictOf(context)!;
    enqueue.emit({ type: "limit_reached", limit: verdict.limit, action: "answer", text: verdict.text });
    // The run ends after this turn whatever the model does; the notice joins the turn's messages.
    enqueue.assign({
      pending: [...context.pending, limitNotice(verdict, nowFor(self), messageIdsFor(self).next())],
      run: { ...context.run, endReason: "limit", limitText: verdict.text, answeringLimit: true },
    });
  }),
  noteDeadline: enqueueActions(({ context, enqueue }) => {
    if (context.run.endReason) return;
    const text = durationLimitText(context.limits.maxDurationMs ?? 0);
    enqueue.emit({ type: "limit_reached", limit: "maxDurationMs", action: "stop", text });
    enqueue.assign({ run: { ...context.run, endReason: "limit", limitText: text } });
  }),
  noteAbort: assign({
    run: ({ context }) => (context.run.endReason ? context.run : { ...context.run, endReason: "aborted" }),
  }),
  raiseAbort: raise({ type: "ABORT" }),
  stopRunDeadline: stopChild("runDeadline"),

  finishRun: enqueueActions(({ context, enqueue, self }) => {
    const { run } = context;
    let { messages } = context;
    const answered = run.answeringLimit && answeredAtLimit(run.turnMessage);
    if ((run.endReason === "limit" || run.endReason === "loop") && run.limitText && !answered) {
      const notice = stopNotice(run.limitText, nowFor(self), messageIdsFor(self).next());
      enqueue.emit({ type: "message_start", message: notice });
      enqueue.emit({ type: "message_end", message: notice });
      messages = appendToTranscript(messages, [notice]);
    }
    enqueue.emit({
      type: "agent_end",
      messages: runMessages(messages, run),
      reason: run.endReason ?? "stop",
      // The tree's: the run's own calls and its sub-agents' (at every depth); its own apart when they ran.
      ...(run.subAgentUsage
        ? { usage: addUsage(run.usage, run.subAgentUsage), ownUsage: run.usage }
        : { usage: run.usage }),
      ...(run.errorMessage !== undefined && run.endReason === "error" && { errorMessage: run.errorMessage }),
      ...(run.errorKind !== undefined && run.endReason === "error" && { errorKind: run.errorKind }),
      ...outputOfRun(run),
    });
    enqueue.assign({
      messages,
      run: { ...run, endReason: run.endReason ?? "stop" },
      // A loop notice belongs to the run that looped, not to the next one.
      pending: context.pending.some(isLoopNotice)
        ? context.pending.filter((message) => !isLoopNotice(message))
        : context.pending,
    });
  }),
});
