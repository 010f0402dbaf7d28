// What one explored path is and what running it showed: the types `exploreAgent`, the path runner
// and the properties share (in a file of their own, so none of them imports another for its types).
import type { AgentEvent } from "../core/events.js";
import type { AgentMessage } from "../core/messages.js";
import type { ToolExecutionStrategy } from "../core/options.js";
import type { Provider } from "../providers/provider.js";
import type { Tool } from "../tools/define-tool.js";
import type { ExploredCall } from "./adversarial-calls.js";

/** What `exploreAgent` hands your configuration for one path. */
export interface ExplorationSetup {
  /** The scripted model of this path: make it your agent's `provider`. */
  provider: Provider;
  /** The path's workspace root (a fresh temporary folder): give it to your tools and permissions. */
  cwd: string;
  /** A folder beside the workspace that no call may change. */
  outside: string;
}

/** One explored path: the calls the model makes turn by turn, the approvals' answers, the strategy. */
export interface ExplorationPath {
  /** The strategy the path ran under (absent: the configuration's own). */
  strategy?: ToolExecutionStrategy;
  /** The model's calls, turn by turn (after them it answers "done"). Paths use `$CWD` / `$OUTSIDE` for the path's folders. */
  turns: ExploredCall[][];
  /** The answers to the approvals, in the order they were asked: `true` approves. */
  decisions: boolean[];
  /** The answer to the approvals beyond `decisions`. Default `"approve"`. */
  otherwise?: "approve" | "deny";
  /** The user aborts the run when its first call starts running, or when the first approval is asked. */
  abortAt?: "execution" | "approval";
}

/** One call as the exploration saw it run (or not), at any depth. */
export interface ObservedCall {
  /** The call's id in its own agent's run (a sub-agent's ids are its own model's). */
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool's `execute` ran. */
  executed: boolean;
  /** The call was approved (`agent.approve`), denied, or never asked about. */
  approval?: "approved" | "denied";
  /** The tool, when the agent that made the call has one by that name. */
  tool?: Tool;
  /** 0: a call of the explored agent's model; 1: a call inside one of its sub-agents; 2: inside theirs... */
  depth: number;
  /** The sub-agent call this call was made inside (absent at depth 0). */
  parent?: ObservedCall;
  /**
   * The call was still running when its run had ended (a tool that ignores its abort signal). The
   * kit then waits up to a second for it, so what it does counts for this path.
   */
  outlivedRun?: boolean;
  /** Not finished even after that wait: it runs on, in this path's folders, which stay until the exploration ends. */
  unfinished?: boolean;
}

/** What a property sees of one explored path. */
export interface PathOutcome {
  path: ExplorationPath;
  /** Every event of the explored agent's run, in order (its sub-agents' are in `subAgents`). */
  events: AgentEvent[];
  /** Each sub-agent the run started, at every depth: the call that started it, its events and transcript. */
  subAgents: { call: ObservedCall; events: AgentEvent[]; transcript: AgentMessage[] }[];
  /** The transcript afterwards. */
  transcript: AgentMessage[];
  /** Every call the run made, at every depth: each sub-agent's calls right after the call that started it. */
  calls: ObservedCall[];
  /** The run ended (`agent_end`) within the exploration's `runTimeoutMs`. */
  ended: boolean;
  /**
   * Set when the run had not ended after `runTimeoutMs` and the kit aborted it: the index in
   * `events` of the first event that came after the kit's abort (the `agent_end` then is the kit's).
   */
  kitAbortedAt?: number;
  /** Approvals the run asked for. */
  approvalsAsked: number;
  /**
   * Changes to the guarded places — the folder beside the workspace, the workspace's `.git/` and
   * `node_modules/`, anything new beside the workspace — each with the calls that were running
   * (or had just run) when it was seen.
   */
  guardedChanges: { change: string; calls: ObservedCall[] }[];
  /** The workspace root and the folder beside it. */
  cwd: string;
  outside: string;
}

/**
 * A call as the kit prints it: its name and id, and for a call inside a sub-agent its depth and
 * the calls it was made inside, e.g. `deploy call_1_0 (depth 1, inside ops p1_1)`.
 *
 * @example
 * ```ts
 * outcome.calls.map(describeCall); // ["ops p1_1", "deploy call_1_0 (depth 1, inside ops p1_1)"]
 * ```
 */
export function describeCall(call: ObservedCall): string {
  if (!call.parent) return `${call.name} ${call.id}`;
  const chain: string[] = [];
  for (let at: ObservedCall | undefined = call.parent; at; at = at.parent) chain.push(`${at.name} ${at.id}`);
  return `${call.name} ${call.id} (depth ${call.depth}, inside ${chain.join(" inside ")})`;
}
