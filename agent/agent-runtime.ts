import { CHARS_PER_TOKEN, estimateRequestOverhead } from "../context/tokens.js";
import { type CallCostModel, callCostModel, RESERVE_CHARS_PER_TOKEN } from "../providers/call-cost.js";
import { createLlmMessages } from "../core/llm-messages.js";
import { createCacheRetention } from "../core/prompt-cache.js";
import { defaultConvertToLlm } from "../core/messages.js";
import type { EffectJournal } from "../core/effect-journal.js";
import type { AgentOptions } from "../core/options.js";
import type { ToolSpec } from "../core/provider.js";
import { type AgentRuntime, defaultRetryPolicy, defaultStallTimeout } from "../core/runtime.js";
import { checkedBudget, type Tool, toToolSpec } from "../tools/define-tool.js";
import { DEFAULT_TOOL_RESULT_MAX_CHARS } from "../tools/result-budget.js";
import { MessageIds, PROCESS_MESSAGE_IDS } from "../core/message-id.js";
import { handoffProfiles, MAIN_AGENT } from "./handoff.js";

// What an agent's actors get from its options: the runtime (functions and objects, never in a
// snapshot) and the machine's input (data only, in every snapshot).

/**
 * What an agent's actors need that must not live in machine context (see `AgentRuntime`): the
 * provider, the tools, hooks and policies, with the defaults filled in.
 *
 * @example
 * ```ts
 * const runtime = createRuntime(options, undefined, tools, (event) => events.next(event), transcript);
 * ```
 */
export function createRuntime(
  options: AgentOptions,
  journal: EffectJournal | undefined,
  tools: Map<string, Tool>,
  publish: AgentRuntime["publish"],
  transcript: AgentRuntime["transcript"],
): AgentRuntime {
  // With handoffs, the main agent's tools include its transfer tools; each agent has its own set.
  const agents = options.handoffs?.length
    ? handoffProfiles(
        { provider: options.provider, systemPrompt: options.systemPrompt, tools },
        options.handoffs,
      )
    : undefined;
  const base = agents?.get(MAIN_AGENT)?.tools ?? tools;
  const runtime: AgentRuntime = {
    provider: options.provider,
    tools: base,
    baseTools: base,
    toolSpecs: [...base.values()].map(toolSpecOf),
    ...(agents && { agents, activeAgent: MAIN_AGENT }),
    systemPrompt: options.systemPrompt,
    hooks: options.hooks ?? noHooks,
    permissions: options.permissions,
    retry: options.retry ? { ...defaultRetryPolicy, ...options.retry } : defaultRetryPolicy,
    stallTimeout:
      options.stallTimeout === false
        ? undefined
        : options.stallTimeout
          ? { ...defaultStallTimeout, ...options.stallTimeout }
          : defaultStallTimeout,
    toolTimeoutMs: options.toolTimeoutMs,
    toolResultMaxChars:
      options.toolResultBudget === false
        ? Infinity
        : (checkedBudget("createAgent toolResultBudget.maxChars", options.toolResultBudget?.maxChars) ??
          DEFAULT_TOOL_RESULT_MAX_CHARS),
    spillWorkspace:
      options.toolResultBudget !== false && options.toolResultBudget?.spill !== false
        ? tools.get("read_file")?.workspace
        : undefined,
    // A journaled model call is one step whose final message is recorded: its calls start after it.
    eagerToolExecution: journal ? false : (options.eagerToolExecution ?? false),
    cacheRetention: createCacheRetention(options.promptCache, options),
    options,
    convertToLlm: options.convertToLlm ?? defaultConvertToLlm,
    llmMessages: createLlmMessages(options.convertToLlm),
    publish,
    transcript,
    now: journal ? () => journal.now() : Date.now,
    messageIds: journal?.idPrefix !== undefined ? new MessageIds(journal.idPrefix) : PROCESS_MESSAGE_IDS,
    ...(journal && { journal }),
  };
  // The machine's handoff action switches agents through the runtime (machines/ cannot import agent/).
  if (agents) runtime.activate = (name) => activateAgent(runtime, name);
  return runtime;
}

/**
 * The machine's input, from the options (used when the agent starts without a snapshot).
 *
 * @example
 * ```ts
 * createActor(agentMachine, { input: machineInput(options, runtime.tools) });
 * ```
 */
export function machineInput(options: AgentOptions, tools: ReadonlyMap<string, Tool>, storedUsd?: number) {
  return {
    messages: options.messages,
    strategy: options.toolExecution,
    steeringMode: options.steeringMode,
    followUpMode: options.followUpMode,
    limits: options.limits,
    ...(costLimited(options.limits) && {
      costModel: costModelOf(options, tools),
      spentUsd: Math.max(storedUsd ?? 0, transcriptUsd(options.messages)),
    }),
    ...(options.loopDetection !== undefined && { loopDetection: options.loopDetection }),
    contextBudget: options.context && dataOnly(options.context),
    concurrencySafeTools: [...tools.values()].filter((t) => t.concurrencySafe).map((t) => t.name),
  };
}

/**
 * What the calls of a transcript the agent starts from cost: a transcript reloaded without its
 * snapshot does not start the agent's lifetime budget again (compaction may have dropped older
 * calls, so this is a floor; a spend store keeps the whole).
 */
function transcriptUsd(messages: AgentOptions["messages"]): number {
  let usd = 0;
  for (const message of messages ?? [])
    if (message.role === "assistant") usd += message.usage?.cost?.total ?? 0;
  return usd;
}

function costLimited(limits: AgentOptions["limits"]): boolean {
  return limits?.maxCostUsd !== undefined || limits?.maxSessionCostUsd !== undefined;
}

/** The worst-case prices of the agent's calls, with its system prompt and tools as the fixed prompt. */
function costModelOf(options: AgentOptions, tools: ReadonlyMap<string, Tool>): CallCostModel {
  const fixed = estimateRequestOverhead({
    systemPrompt: options.systemPrompt,
    tools: [...tools.values()].map(toolSpecOf),
  });
  return callCostModel(options.provider, Math.ceil((fixed * CHARS_PER_TOKEN) / RESERVE_CHARS_PER_TOKEN));
}

/**
 * Checks a run's own tools (`prompt(input, { tools })`) against the agent's: each must be a tool
 * (`defineTool` / `defineClientTool`) with a name no other tool has. Throws a `TypeError` saying
 * which one is wrong; returns the tools of the run, the agent's first.
 *
 * @example
 * ```ts
 * const tools = runToolsOf(agentTools, [pickColor]); // Map { ...agent's, "pick_color" => pickColor }
 * ```
 */
export function runToolsOf(
  agentTools: ReadonlyMap<string, Tool>,
  runTools: readonly Tool[],
): ReadonlyMap<string, Tool> {
  if (!Array.isArray(runTools)) throw new TypeError("run option tools must be an array of tools");
  const tools = new Map(agentTools);
  for (const tool of runTools as unknown[]) {
    const candidate = tool as Partial<Tool> | null;
    if (
      candidate === null ||
      typeof candidate !== "object" ||
      typeof candidate.name !== "string" ||
      typeof candidate.jsonSchema !== "object" ||
      typeof candidate.execute !== "function"
    ) {
      throw new TypeError(
        "run option tools: each must be a tool made with defineTool or defineClientTool, got " +
          (candidate === null ? "null" : typeof candidate),
      );
    }
    if (tools.has(candidate.name)) {
      throw new TypeError(
        `run option tools: a tool named "${candidate.name}" is already ${
          agentTools.has(candidate.name) ? "one of the agent's tools" : "in this run's tools"
        }`,
      );
    }
    tools.set(candidate.name, candidate as Tool);
  }
  return tools;
}

/**
 * Gives the runtime the tools of a run (the agent's plus its own), or the agent's alone again.
 *
 * @example
 * ```ts
 * useRunTools(runtime, runToolsOf(agentTools, [pickColor]));
 * ```
 */
export function useRunTools(runtime: AgentRuntime, tools: ReadonlyMap<string, Tool>): void {
  if (runtime.tools === tools) return;
  runtime.tools = tools;
  runtime.toolSpecs = [...tools.values()].map(toolSpecOf);
}

/**
 * Gives the runtime another agent's own tools (a handoff), keeping the current run's tools besides.
 *
 * @example
 * ```ts
 * setBaseTools(runtime, billing.tools);
 * ```
 */
export function setBaseTools(runtime: AgentRuntime, tools: ReadonlyMap<string, Tool>): void {
  const old = runtime.baseTools;
  runtime.baseTools = tools;
  if (runtime.tools === old) return useRunTools(runtime, tools);
  const withRun = new Map(tools);
  for (const [name, tool] of runtime.tools) if (!old.has(name) && !withRun.has(name)) withRun.set(name, tool);
  useRunTools(runtime, withRun);
}

/**
 * Every tool of every agent of the set (for what the machine must know of each, e.g. which may run
 * side by side): the runtime's tools without handoffs.
 *
 * @example
 * ```ts
 * machineInput(options, allTools(runtime));
 * ```
 */
export function allTools(runtime: AgentRuntime): ReadonlyMap<string, Tool> {
  if (!runtime.agents) return runtime.tools;
  const all = new Map(runtime.tools);
  for (const profile of runtime.agents.values())
    for (const [name, tool] of profile.tools) all.set(name, tool);
  return all;
}

/**
 * Makes `name` the active agent of a runtime (its provider, system prompt and tools); a no-op
 * for an agent without handoffs. Throws for a name the set does not have.
 *
 * @example
 * ```ts
 * activateAgent(runtimeOf(self), "billing");
 * ```
 */
export function activateAgent(runtime: AgentRuntime, name: string | undefined): void {
  if (!runtime.agents) return;
  const profile = runtime.agents.get(name ?? MAIN_AGENT);
  if (!profile) throw new Error(`No handoff agent named "${name}" in this agent's set`);
  runtime.activeAgent = profile.name;
  runtime.provider = profile.provider;
  runtime.systemPrompt = profile.systemPrompt;
  setBaseTools(runtime, profile.tools);
}

const noHooks = Object.freeze({});

/** Tool specs are the same for every agent that has the tool: made once per tool. */
const toolSpecs = new WeakMap<Tool, ToolSpec>();
function toolSpecOf(tool: Tool): ToolSpec {
  let spec = toolSpecs.get(tool);
  if (!spec) toolSpecs.set(tool, (spec = toToolSpec(tool)));
  return spec;
}

/** A copy without functions, fit for machine context (and so for persisted snapshots). */
function dataOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v !== "function")) as T;
}
