import { z } from "zod";
import { defineTool } from "../index.js";

/**
 * The tools the benchmarks give both runtimes, defined once for each: an instant `noop` and a
 * `sleep` that waits `ms` milliseconds (honouring the abort signal). Each runtime validates the
 * arguments with its own schema library (zod for agent-machine, TypeBox or JSON Schema for pi), as its users would. pi's twins live in
 * `pi-adapter.ts`, which loads the pi release the running Node supports.
 */
export const noopTool = defineTool({
  name: "noop",
  description: "Does nothing and says ok",
  parameters: z.object({}),
  readOnly: true,
  execute: () => "ok",
});

/** Resolves after `ms`, or at once when the signal fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Waits `ms` milliseconds, then says slept. */
export const sleepTool = defineTool({
  name: "sleep",
  description: "Waits some milliseconds",
  parameters: z.object({ ms: z.number() }),
  readOnly: true,
  execute: async ({ ms }, ctx) => {
    await sleep(ms, ctx.signal);
    return "slept";
  },
});

/** Usage every scripted step reports, so that no one estimates it from the request. */
export const stepUsage = { input: 10, output: 5 };
