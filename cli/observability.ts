import type { Agent } from "../core/create-agent.js";

/** An inspection hook for `createAgent({ inspect })`, and how to tell the user where to look. */
export interface InspectorHandle {
  inspect: unknown;
  url?: string;
}

/** A running visualizer page. */
export interface VisualizerHandle {
  url?: string;
  close?: () => unknown;
}

/**
 * The visualizer area exports `createStatelyInspector` and `visualize` from the public API; the CLI
 * looks them up at run time so it builds and runs without them and says so plainly when asked for
 * one that is missing.
 */
async function publicApi(): Promise<Record<string, unknown>> {
  return (await import("../index.js")) as Record<string, unknown>;
}

function urlOf(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return undefined;
  const url = (value as { url?: unknown }).url;
  return typeof url === "string" ? url : undefined;
}

/**
 * Creates the Stately inspector hook for `--inspect`.
 *
 * @example
 * ```ts
 * const inspector = await createInspectorForCli();
 * const agent = createAgent({ provider, inspect: inspector.inspect as never });
 * ```
 */
export async function createInspectorForCli(): Promise<InspectorHandle> {
  const factory = (await publicApi()).createStatelyInspector;
  if (typeof factory !== "function") {
    throw new Error("--inspect is not available: this build has no createStatelyInspector (visualizer/)");
  }
  const created = await factory({});
  if (typeof created === "function") return { inspect: created };
  const inspect = (created as { inspect?: unknown }).inspect;
  if (inspect) return { inspect, url: urlOf(created) };
  return { inspect: created, url: urlOf(created) };
}

/**
 * Serves the live visualizer page for `--visualize` on 127.0.0.1.
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
  const visualize = (await publicApi()).visualize;
  if (typeof visualize !== "function") {
    throw new Error("--visualize is not available: this build has no visualize() (visualizer/)");
  }
  const handle = await visualize(agent, { port: port ?? 0 });
  return {
    url: urlOf(handle),
    close: (handle as { close?: () => unknown } | undefined)?.close?.bind(handle),
  };
}
