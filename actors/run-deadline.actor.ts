import { fromCallback } from "xstate";
import { runtimeOf } from "../core/runtime.js";

/**
 * Sends `DEADLINE` after `ms` (nothing when `ms` is undefined). Restarting it restarts the clock.
 * A durable agent's deadline is its journal's timer, so a replay sees it fire at the same point.
 */
export const runDeadlineActor = fromCallback<{ type: "noop" }, { ms?: number }, { type: "DEADLINE" }>(
  ({ input, self, sendBack }) => {
    if (input.ms === undefined || !Number.isFinite(input.ms)) return;
    const ms = Math.max(0, input.ms);
    const { journal } = runtimeOf(self);
    if (journal) {
      let stopped = false;
      journal.timer(ms).then(() => {
        if (!stopped) sendBack({ type: "DEADLINE" });
      });
      return () => {
        stopped = true;
      };
    }
    const timer = setTimeout(() => sendBack({ type: "DEADLINE" }), ms);
    return () => clearTimeout(timer);
  },
);
