import type { Tool } from "../tools/define-tool.js";

/** The tools a tool's own agent can call (a `subAgentTool`'s child tools), by tool. */
const childToolsOf = new WeakMap<Tool, readonly Tool[]>();

/**
 * Records the tools a tool runs an agent with, so that the names of the calls an agent's run can
 * make (its permission rules apply inside its sub-agents too) include them.
 *
 * @example
 * ```ts
 * recordChildTools(researcher, [readFile, grep]);
 * toolNamesWithin([researcher]); // ["researcher", "read_file", "grep"]
 * ```
 */
export function recordChildTools(tool: Tool, children: readonly Tool[]): void {
  childToolsOf.set(tool, children);
}

/** A tool's child tools, also for a wrapper made with `Object.create(tool)` (as the test kit watches tools). */
function recordedChildTools(tool: Tool): readonly Tool[] {
  for (let at: object | null = tool; at !== null; at = Object.getPrototypeOf(at) as object | null) {
    const children = childToolsOf.get(at as Tool);
    if (children) return children;
  }
  return [];
}

/**
 * The names of every tool a run with these tools can call, at every depth: the tools themselves and,
 * for a sub-agent tool, its child's tools (and theirs).
 *
 * @example
 * ```ts
 * toolNamesWithin([readFile, researcher]); // ["read_file", "researcher", "grep"]
 * ```
 */
export function toolNamesWithin(tools: readonly Tool[]): string[] {
  const names = new Set<string>();
  const seen = new Set<Tool>();
  const visit = (list: readonly Tool[]) => {
    for (const tool of list) {
      if (seen.has(tool)) continue;
      seen.add(tool);
      names.add(tool.name);
      visit(recordedChildTools(tool));
    }
  };
  visit(tools);
  return [...names];
}

/**
 * The tool a sub-agent's call runs: `via` names the sub-agent tools from `tools` down to the agent
 * that makes the call (none: a call of `tools` itself). `undefined` when a name on the way is unknown.
 *
 * @example
 * ```ts
 * toolOnPath([researcher], ["researcher"], "grep"); // the researcher's grep tool
 * ```
 */
export function toolOnPath(
  tools: readonly Tool[],
  via: readonly string[],
  toolName: string,
): Tool | undefined {
  let level = tools;
  for (const name of via) {
    const tool = level.find((t) => t.name === name);
    if (!tool) return undefined;
    level = recordedChildTools(tool);
  }
  return level.find((t) => t.name === toolName);
}
