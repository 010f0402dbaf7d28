import { fromCallback } from "xstate";

/** Sends `DEADLINE` after `ms` (nothing when `ms` is undefined). Restarting it restarts the clock. */
export const runDeadlineActor = fromCallback<{ type: "noop" }, { ms?: number }, { type: "DEADLINE" }>(
  ({ input, sendBack }) => {
    if (input.ms === undefined || !Number.isFinite(input.ms)) return;
    const timer = setTimeout(() => sendBack({ type: "DEADLINE" }), Math.max(0, input.ms));
    return () => clearTimeout(timer);
  },
);
