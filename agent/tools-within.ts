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
      visit(childToolsOf.get(tool) ?? []);
    }
  };
  visit(tools);
  return [...names];
}
