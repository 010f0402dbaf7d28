import { setMaxListeners } from "node:events";
import type { AgentTool as PiAgentTool } from "@mariozechner/pi-agent-core";
import { Type } from "@mariozechner/pi-ai";
import { z } from "zod";
import { defineTool } from "../index.js";

/**
 * The tools the benchmarks give both runtimes, defined once for each: an instant `noop` and a
 * `sleep` that waits `ms` milliseconds (honouring the abort signal). Each runtime validates the
 * arguments with its own schema library (zod for agent-machine, TypeBox for pi), as its users would.
 */
export const noopTool = defineTool({
  name: "noop",
  description: "Does nothing and says ok",
  parameters: z.object({}),
  readOnly: true,
  execute: () => "ok",
});

/** pi-agent-core's twin of {@link noopTool}. */
export const piNoopTool: PiAgentTool<any> = {
  name: "noop",
  label: "noop",
  description: "Does nothing and says ok",
  parameters: Type.Object({}),
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
};

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

const piSleepParameters = Type.Object({ ms: Type.Number() });

/** pi-agent-core's twin of {@link sleepTool}. */
export const piSleepTool: PiAgentTool<typeof piSleepParameters> = {
  name: "sleep",
  label: "sleep",
  description: "Waits some milliseconds",
  parameters: piSleepParameters,
  execute: async (_id, params, signal) => {
    // pi hands every call of a run the same signal: 100 waiting calls are expected, not a leak.
    if (signal) setMaxListeners(0, signal);
    await sleep(params.ms, signal);
    return { content: [{ type: "text", text: "slept" }], details: {} };
  },
};

/** Usage every scripted step reports, so that no one estimates it from the request. */
export const stepUsage = { input: 10, output: 5 };
