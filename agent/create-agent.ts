// Creating an agent: its options checked (check-agent-options.ts), its tools and snapshot
// prepared. The agent itself is an AgentSession (agent-session.ts: the live agent's methods) on
// an AgentLifecycle (agent-lifecycle.ts: its actor made, rested, hibernated and woken); the
// public types are in agent.ts, what its actors need from the options in agent-runtime.ts.
import { resolveContextConfig } from "../context/config.js";
import type { EffectJournal } from "../core/effect-journal.js";
import { withMessageIds } from "../core/message-id.js";
import type { AgentOptions } from "../core/options.js";
import type { InferOutput, OutputOption } from "../core/output.js";
import { agentMachine } from "../machines/agent.machine.js";
import type { Tool } from "../tools/define-tool.js";
import type { Agent } from "./agent.js";
import { AgentSession } from "./agent-session.js";
import { checkAgentOptions } from "./check-agent-options.js";
import { BUILT_IN_MIGRATIONS } from "./snapshot-migrations.js";
import { prepareSnapshotForRestore } from "./snapshot-version.js";

export type {
  Agent,
  AgentActor,
  AgentSnapshot,
  CompactNowOptions,
  CompactNowResult,
  PendingApproval,
} from "./agent.js";
export { followActors } from "./follow-actors.js";
/**
 * Creates an agent whose loop is the agent statechart.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   provider: scripted([{ text: "Hello!" }]),
 *   systemPrompt: "You are terse.",
 * });
 * agent.events$.subscribe((e) => console.log(e.type));
 * const { reason, messages } = await agent.prompt("Hi");
 * ```
 */
export function createAgent<O extends OutputOption | undefined = undefined>(
  options: AgentOptions & { output?: O },
): Agent<undefined extends O ? unknown : InferOutput<O>> {
  return buildAgent(options, undefined) as Agent<undefined extends O ? unknown : InferOutput<O>>;
}

/**
 * An agent whose effects (model calls, tool calls, approvals, checks, time) all go through
 * `journal`: what a durable engine runs (`agent-machine/restate`). Not part of the public API.
 *
 * @example
 * ```ts
 * const agent = createJournaledAgent({ ...options, eagerToolExecution: false }, restateJournal);
 * await agent.prompt("Hi");
 * ```
 */
export function createJournaledAgent(options: AgentOptions, journal: EffectJournal): Agent {
  return buildAgent(options, journal);
}

function buildAgent(given: AgentOptions, journal: EffectJournal | undefined): Agent {
  checkAgentOptions(given);
  // A durable engine runs some tools its own way (durable/wake-tools.ts), at every depth.
  const options = journal?.tools && given.tools ? { ...given, tools: journal.tools(given.tools) } : given;
  const tools = new Map<string, Tool>();
  for (const tool of options.tools ?? []) {
    if (tools.has(tool.name)) throw new Error(`Two tools are named "${tool.name}"`);
    tools.set(tool.name, tool);
  }
  // A bad compaction budget is a setup error: report it here, not from inside the first turn.
  if (options.context) resolveContextConfig(options.context);
  // A snapshot of another machine version is migrated or refused (SnapshotVersionError) here.
  const snapshot =
    options.snapshot === undefined
      ? undefined
      : prepareSnapshotForRestore(options.snapshot, agentMachine, [
          ...BUILT_IN_MIGRATIONS,
          ...(options.snapshotMigrations ?? []),
        ]);
  // Messages given up front get their ids now, so `agent.messages` shows them before the actor exists.
  const withIds = options.messages ? { ...options, messages: withMessageIds(options.messages) } : options;
  return new AgentSession(withIds, journal, tools, snapshot);
}
