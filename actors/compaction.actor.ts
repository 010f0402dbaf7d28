import { fromPromise } from "xstate";
import { type CompactionResult, compactContext } from "../context/compact.js";
import type { TokenCalibration } from "../context/config.js";
import { withLearnedWindow } from "../context/context-window.js";
import { runtimeOf } from "../core/runtime.js";

export interface CompactionInput {
  /** The provider said the context overflowed: compact even if our estimate says it fits. */
  force: boolean;
  minLevel?: 1 | 2 | 3;
  calibration?: TokenCalibration;
  /** The window learned from overflow errors, when lower than the configured one. */
  maxContextTokens?: number;
  /** The run's turn (names the step in a durable agent's journal). */
  turn: number;
}

/** Compacts the agent's transcript to its context budget; `undefined` when nothing changed. */
export const compactionActor = fromPromise<CompactionResult | undefined, CompactionInput>(
  async ({ input, self, signal }) => {
    const runtime = runtimeOf(self);
    // The configured budget (with its summariser), its window lowered to what overflows taught.
    const config = withLearnedWindow(runtime.options.context, input.maxContextTokens);
    if (!config) return undefined;
    const compact = () =>
      compactContext(runtime.transcript(), config, {
        force: input.force,
        minLevel: input.minLevel,
        calibration: input.calibration,
        signal,
      });
    return runtime.journal ? runtime.journal.compaction(input.turn, compact) : compact();
  },
);
