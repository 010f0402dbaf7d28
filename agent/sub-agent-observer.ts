import type { AgentOptions } from "../core/options.js";
import type { Tool } from "../tools/define-tool.js";
import type { Agent } from "./agent.js";

// How the test kit sees inside sub-agents: a `subAgentTool` builds its child agent inside the
// tool's execute, out of reach of whoever made the parent. An observer set on the parent's options
// (under a symbol, so it is no option a user can set or misspell) is asked, for each child, which
// tools the child gets and is handed the child before it runs; it passes itself on to the child's
// own sub-agents.

const SUB_AGENT_OBSERVER = Symbol("agent-machine.subAgentObserver");

/** What an observer decides for one child agent. */
export interface SubAgentWatch {
  /** The tools the child runs with (the observer's wrappers of the child's tools). */
  tools: Tool[];
  /** Called with the child once it exists, before its run starts. */
  agent(child: Agent): void;
  /** The observer of the child's own sub-agents (none: they are not observed). */
  observer?: SubAgentObserver;
}

/** Called by `subAgentTool` for each child agent it starts. */
export type SubAgentObserver = (call: {
  /** The sub-agent tool's name. */
  toolName: string;
  /** The id of the call that starts the child, in its parent's run. */
  toolCallId: string;
  /** The child's tools, as the sub-agent tool was given them. */
  tools: readonly Tool[];
}) => SubAgentWatch;

/**
 * The options with an observer of every sub-agent a run starts, at every depth.
 *
 * @example
 * ```ts
 * const agent = createAgent(observeSubAgents(options, ({ toolName, tools }) => ({
 *   tools: tools.map(watch),
 *   agent: (child) => child.events$.subscribe(log),
 * })));
 * ```
 */
export function observeSubAgents(options: AgentOptions, observer: SubAgentObserver): AgentOptions {
  return { ...options, [SUB_AGENT_OBSERVER]: observer } as AgentOptions;
}

/**
 * The observer set on these options with {@link observeSubAgents}, if any.
 *
 * @example
 * ```ts
 * const watch = subAgentObserverOf(runtime.options)?.({ toolName, toolCallId, tools });
 * ```
 */
export function subAgentObserverOf(options: AgentOptions | undefined): SubAgentObserver | undefined {
  return (options as { [SUB_AGENT_OBSERVER]?: SubAgentObserver } | undefined)?.[SUB_AGENT_OBSERVER];
}
