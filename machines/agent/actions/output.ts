import { assign, enqueueActions } from "xstate";
import { messageIdsFor, nowFor } from "../../../core/runtime.js";
import { outputCorrection, outputFailureText } from "../../../rules/output.logic.js";
import type { StreamDone } from "../context.js";
import { defineAgentActions } from "./define.js";

/**
 * The actions of the output checks (an output schema, output filters): each final answer's
 * verdicts published and recorded, the run ended when no retry is left, and the correction the
 * model reads when one is.
 *
 * @example
 * ```ts
 * setup({ actions: { ...outputActions } }); // STREAM_DONE: `recordAnswer`; followUpCheck: `askForBetterAnswer`
 * ```
 */
export const outputActions = defineAgentActions({
  recordAnswer: enqueueActions(({ context, enqueue }, done: StreamDone) => {
    const check = done.answer;
    if (!check) return;
    const { run } = context;
    const retries = run.outputRetries ?? { repairs: 0, rejections: 0 };
    const { problem } = check;
    const used = problem?.kind === "invalid" ? retries.repairs : retries.rejections;
    const retry = problem !== undefined && run.endReason === undefined && used < check.maxRetries;
    for (const verdict of check.verdicts) {
      enqueue.emit({
        type: "output_filter",
        filter: verdict.filter,
        verdict: verdict.verdict,
        ...(verdict.reason !== undefined && { reason: verdict.reason }),
        ...(verdict.verdict === "reject" && { action: retry ? ("retry" as const) : ("end" as const) }),
      });
    }
    if (problem?.kind === "invalid") {
      enqueue.emit({
        type: "output_invalid",
        error: problem.error,
        raw: check.raw,
        attempt: retries.repairs + 1,
        maxRepairs: check.maxRetries,
        action: retry ? "retry" : "fail",
      });
    }
    const ends = problem !== undefined && !retry && run.endReason === undefined;
    enqueue.assign({
      run: {
        ...run,
        answer: check,
        ...(ends &&
          problem.kind === "invalid" && {
            endReason: "error" as const,
            errorMessage: outputFailureText(problem.error, retries.repairs + 1),
          }),
        ...(ends && problem.kind === "rejected" && { endReason: "rejected" as const }),
      },
    });
  }),
  askForBetterAnswer: assign(({ context, self }) => {
    const { run } = context;
    const problem = run.answer!.problem!;
    const retries = run.outputRetries ?? { repairs: 0, rejections: 0 };
    return {
      pending: [
        ...context.pending,
        outputCorrection(problem, run.output, nowFor(self), messageIdsFor(self).next()),
      ],
      run: {
        ...run,
        outputRetries:
          problem.kind === "invalid"
            ? { ...retries, repairs: retries.repairs + 1 }
            : { ...retries, rejections: retries.rejections + 1 },
      },
    };
  }),
});
