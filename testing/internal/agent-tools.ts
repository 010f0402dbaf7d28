// The tools of an explored configuration: its own and its handoff agents'.
import type { AgentOptions } from "../../core/options.js";
import type { Tool } from "../../tools/define-tool.js";

/**
 * The tools of the agent and of each agent it may hand the conversation to (by name, the first
 * of a name): a handoff agent's calls are the run's as much as the agent's own.
 *
 * @example
 * ```ts
 * toolsOfEveryAgent({ provider, tools: [search], handoffs: [billing] }); // [search, refund]
 * ```
 */
export function toolsOfEveryAgent(config: AgentOptions): Tool[] {
  const byName = new Map<string, Tool>();
  for (const tool of [...(config.tools ?? []), ...(config.handoffs ?? []).flatMap((h) => h.tools ?? [])]) {
    if (!byName.has(tool.name)) byName.set(tool.name, tool);
  }
  return [...byName.values()];
}
