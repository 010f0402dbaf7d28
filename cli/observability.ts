import type { Agent } from "../agent/create-agent.js";
import type { AgentOptions } from "../core/options.js";

/** The `--inspect` hook: pass `inspect` to `createAgent`, show `url`, `stop` on exit. */
export interface InspectorHandle {
  inspect: AgentOptions["inspect"];
  url?: string;
  stop(): Promise<void>;
}

/** The `--visualize` page. */
export interface VisualizerHandle {
  url: string;
  close(): Promise<void>;
}

/**
 * Starts the Stately inspector relay for `--inspect` (the visualizer area's
 * `createStatelyInspector`). Loaded on demand: a plain run never pays for it.
 *
 * @example
 * ```ts
 * const inspector = await createInspectorForCli();
 * const agent = createAgent({ provider, inspect: inspector.inspect });
 * ```
 */
export async function createInspectorForCli(): Promise<InspectorHandle> {
  const { createStatelyInspector } = await import("../visualizer/stately.js");
  const inspector = await createStatelyInspector();
  return { inspect: inspector.inspect, url: inspector.url, stop: () => inspector.stop() };
}

/**
 * Serves the live visualizer page for `--visualize` on 127.0.0.1 (`port` 0: a free one).
 *
 * @example
 * ```ts
 * const page = await startVisualizerForCli(agent, 0);
 * console.log(page.url);
 * ```
 */
export async function startVisualizerForCli(
  agent: Agent,
  port: number | undefined,
): Promise<VisualizerHandle> {
  const { visualize } = await import("../visualizer/server.js");
  const server = await visualize(agent, { port: port ?? 0 });
  return { url: server.url, close: () => server.close() };
}
