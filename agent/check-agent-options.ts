import { callCostModel } from "../providers/call-cost.js";
import { checkOptionKeys } from "../core/option-keys.js";
import {
  checkInteger,
  checkNumber,
  checkOneOf,
  checkType,
  describeValue,
  refuseValue,
} from "../core/option-values.js";
import {
  AGENT_HOOK_KEYS,
  AGENT_LIMIT_KEYS,
  AGENT_OPTION_KEYS,
  EVENT_REPLAY_KEYS,
  type AgentOptions,
  LOOP_DETECTION_KEYS,
  RETRY_POLICY_KEYS,
  STALL_TIMEOUT_KEYS,
  TELEMETRY_KEYS,
  TOOL_RESULT_BUDGET_KEYS,
} from "../core/options.js";
import { PROMPT_CACHE_KEYS } from "../core/prompt-cache.js";
import { isSpendStore } from "../core/spend-store.js";
import { checkLoopDetection } from "../rules/loop-detection.logic.js";
import { outputSpecOf } from "../rules/output.logic.js";
import type { PermissionChecker } from "../core/options.js";
import { toolNamesWithin } from "./tools-within.js";
import { MAIN_AGENT } from "../core/handoff.js";
import type { Tool } from "../core/tool.js";

const WHERE = "createAgent";

/**
 * Refuses unknown keys in the options and their nested option objects (a typo must be an error,
 * never an option silently left at its default), and values the agent cannot use (a missing
 * provider, `toolExecution: "paralel"`, `limits.maxTurns: "5"`): each a `TypeError` from
 * `createAgent` naming the option and what it accepts, never a crash or a hang inside the first run.
 *
 * @example
 * ```ts
 * checkAgentOptions({ provider: "openai" } as never);
 * // TypeError: createAgent: provider must be a Provider (an object with id, model and stream(), ...
 * ```
 */
export function checkAgentOptions(options: AgentOptions): void {
  if (options === null || typeof options !== "object") {
    throw new TypeError("createAgent: options must be an object with at least a provider");
  }
  checkOptionKeys(WHERE, options, AGENT_OPTION_KEYS);
  checkProvider(options.provider);
  checkType(WHERE, "systemPrompt", options.systemPrompt, "string");
  checkTools(options.tools);
  if (options.messages !== undefined && !Array.isArray(options.messages)) {
    refuseValue(WHERE, "messages", "an array of messages (a transcript to start from)", options.messages);
  }
  checkToolExecution(options.toolExecution);
  checkOneOf(WHERE, "steeringMode", options.steeringMode, ["one-at-a-time", "all"]);
  checkOneOf(WHERE, "followUpMode", options.followUpMode, ["one-at-a-time", "all"]);
  checkHooks(options.hooks);
  checkInputFilters(options.inputFilters);
  if (options.output !== undefined) outputSpecOf(options.output, `${WHERE}: output`);
  if (options.outputFilters !== undefined) {
    if (!Array.isArray(options.outputFilters)) {
      refuseValue(WHERE, "outputFilters", "an array of functions", options.outputFilters);
    }
    options.outputFilters.forEach((filter, i) => checkType(WHERE, `outputFilters[${i}]`, filter, "function"));
  }
  checkInteger(WHERE, "outputFilterRetries", options.outputFilterRetries, 0);
  checkLimits(options.limits);
  // A budget in money needs a price for every model the provider may use: refused now, not mid-run.
  if (options.limits?.maxCostUsd !== undefined || options.limits?.maxSessionCostUsd !== undefined) {
    callCostModel(options.provider, 0);
  }
  checkNumber(WHERE, "toolTimeoutMs", options.toolTimeoutMs, { min: 0, exclusive: true, infinite: true });
  if (options.toolResultBudget !== false) {
    checkObject("toolResultBudget", options.toolResultBudget, "false or an object");
    checkOptionKeys("createAgent toolResultBudget", options.toolResultBudget, TOOL_RESULT_BUDGET_KEYS);
    checkType(WHERE, "toolResultBudget.spill", options.toolResultBudget?.spill, "boolean");
  }
  checkType(WHERE, "eagerToolExecution", options.eagerToolExecution, "boolean");
  if (options.permissions !== undefined && typeof options.permissions?.check !== "function") {
    refuseValue(
      WHERE,
      "permissions",
      "a permission checker (an object with check(), e.g. createPermissions())",
      options.permissions,
    );
  }
  // Rules may name the tools of the agents a conversation can be handed to, and the transfers.
  const handoffTools = Array.isArray(options.handoffs)
    ? options.handoffs.flatMap((agent) => [
        ...(Array.isArray(agent?.tools) ? agent.tools : []),
        { name: `transfer_to_${agent?.name}` } as Tool,
      ])
    : [];
  checkPermissionToolNames(
    WHERE,
    options.permissions,
    toolNamesWithin([...(options.tools ?? []), ...handoffTools]).concat(
      options.handoffs?.length ? [`transfer_to_${MAIN_AGENT}`] : [],
    ),
  );
  checkRetry(options.retry);
  checkStallTimeout(options.stallTimeout);
  if (options.loopDetection !== false) {
    checkOptionKeys("createAgent loopDetection", options.loopDetection, LOOP_DETECTION_KEYS);
  }
  checkLoopDetection(options.loopDetection);
  if (options.telemetry !== false) {
    checkObject("telemetry", options.telemetry, "false or an object");
    checkOptionKeys("createAgent telemetry", options.telemetry, TELEMETRY_KEYS);
  }
  checkType(WHERE, "convertToLlm", options.convertToLlm, "function");
  if (options.snapshotMigrations !== undefined && !Array.isArray(options.snapshotMigrations)) {
    refuseValue(WHERE, "snapshotMigrations", "an array of migrations", options.snapshotMigrations);
  }
  checkOneOf(WHERE, "hibernate", options.hibernate, ["whenIdle", "manual"]);
  if (options.eventReplay !== undefined && options.eventReplay !== false) {
    checkObject("eventReplay", options.eventReplay, "false or { maxEvents?, maxBytes? }");
    checkOptionKeys("createAgent eventReplay", options.eventReplay, EVENT_REPLAY_KEYS);
    checkInteger(WHERE, "eventReplay.maxEvents", options.eventReplay.maxEvents, 1);
    checkInteger(WHERE, "eventReplay.maxBytes", options.eventReplay.maxBytes, 1);
  }
  checkType(WHERE, "id", options.id, "string");
  checkPromptCache(options.promptCache);
  if (options.spendStore !== undefined) {
    if (!isSpendStore(options.spendStore)) {
      refuseValue(
        WHERE,
        "spendStore",
        "a spend store ({ spent, record }), e.g. createMemorySpendStore()",
        options.spendStore,
      );
    }
    if (options.id === undefined) {
      throw new TypeError(
        "createAgent: spendStore needs an id: the store keeps the agent's spending by its id",
      );
    }
  }
}

function checkPromptCache(promptCache: AgentOptions["promptCache"]): void {
  if (promptCache === undefined) return;
  checkObject("promptCache", promptCache, "{ retention?, expectedPauseMs? }");
  checkOptionKeys("createAgent promptCache", promptCache, PROMPT_CACHE_KEYS);
  const { retention, expectedPauseMs } = promptCache;
  if (retention !== undefined && typeof retention !== "function") {
    checkOneOf(WHERE, "promptCache.retention", retention, ["auto", "short", "long"]);
  }
  if (expectedPauseMs === undefined) return;
  checkObject("promptCache.expectedPauseMs", expectedPauseMs, "{ approval?, clientTool?, idle? } in ms");
  checkOptionKeys("createAgent promptCache.expectedPauseMs", expectedPauseMs, {
    approval: true,
    clientTool: true,
    idle: true,
  });
  for (const pause of ["approval", "clientTool", "idle"] as const) {
    checkNumber(WHERE, `promptCache.expectedPauseMs.${pause}`, expectedPauseMs[pause], { min: 0 });
  }
}

/**
 * The provider is required and must stream: a string (`provider: "openai"`), `undefined` (a
 * forgotten option, `cond ? p : undefined`) or an object without `stream()` is refused here.
 */
function checkProvider(provider: unknown): void {
  const what =
    'a Provider (an object with id, model and stream(), e.g. openai({ model: "gpt-4.1" }), ' +
    'anthropic({ model: "claude-sonnet-4-6" }), openaiCompatible({ baseURL, model }) or scripted([...]))';
  if (provider === undefined) refuseValue(WHERE, "provider is required:", what, provider);
  if (typeof provider === "string") {
    throw new TypeError(
      `${WHERE}: provider must be ${what}, got ${describeValue(provider)}: a provider is made by its ` +
        `factory, not named`,
    );
  }
  const candidate = provider as { stream?: unknown; id?: unknown; model?: unknown } | null;
  if (candidate === null || typeof candidate !== "object" || typeof candidate.stream !== "function") {
    refuseValue(WHERE, "provider", what, provider);
  }
  if (typeof candidate.id !== "string" || typeof candidate.model !== "string") {
    refuseValue(WHERE, "provider", `${what}; its id and model are strings`, {
      id: candidate.id,
      model: candidate.model,
    });
  }
}

function checkTools(tools: unknown): void {
  if (tools === undefined) return;
  if (!Array.isArray(tools)) refuseValue(WHERE, "tools", "an array of tools (made with defineTool)", tools);
  tools.forEach((tool: unknown, i) => {
    const candidate = tool as { name?: unknown; execute?: unknown } | null;
    if (
      candidate === null ||
      typeof candidate !== "object" ||
      typeof candidate.name !== "string" ||
      typeof candidate.execute !== "function"
    ) {
      refuseValue(WHERE, `tools[${i}]`, "a tool made with defineTool (a name and an execute())", tool);
    }
  });
}

/**
 * Lets a permission checker refuse rules that name no tool of the run (`createPermissions` does):
 * its error, prefixed with where it was found, is the caller's `TypeError`.
 *
 * @example
 * ```ts
 * checkPermissionToolNames("createAgent", createPermissions({ rules: { ask: ["Write_File"] } }), ["write_file"]);
 * // TypeError: createAgent: permissions: the ask rule "Write_File" names no tool of this agent (did you mean "write_file"?) ...
 * ```
 */
export function checkPermissionToolNames(
  where: string,
  permissions: PermissionChecker | undefined,
  names: readonly string[],
): void {
  if (typeof permissions?.checkToolNames !== "function") return;
  try {
    permissions.checkToolNames(names);
  } catch (error) {
    throw new TypeError(`${where}: permissions: ${(error as Error).message}`, { cause: error });
  }
}

function checkToolExecution(strategy: unknown): void {
  if (strategy === undefined) return;
  const accepts = '"parallel", "sequential", "auto" or { batched: n } with n a whole number ≥ 1';
  if (typeof strategy === "string") {
    if (strategy === "parallel" || strategy === "sequential" || strategy === "auto") return;
    refuseValue(WHERE, "toolExecution", accepts, strategy);
  }
  if (strategy === null || typeof strategy !== "object")
    refuseValue(WHERE, "toolExecution", accepts, strategy);
  checkOptionKeys("createAgent toolExecution", strategy, { batched: true });
  const { batched } = strategy as { batched?: unknown };
  if (typeof batched !== "number" || !Number.isInteger(batched) || batched < 1) {
    refuseValue(WHERE, "toolExecution", accepts, strategy);
  }
}

function checkHooks(hooks: AgentOptions["hooks"]): void {
  if (hooks === undefined) return;
  checkObject("hooks", hooks, "an object of hook functions");
  checkOptionKeys("createAgent hooks", hooks, AGENT_HOOK_KEYS);
  for (const [name, hook] of Object.entries(hooks)) checkType(WHERE, `hooks.${name}`, hook, "function");
}

function checkInputFilters(filters: unknown): void {
  if (filters === undefined) return;
  if (!Array.isArray(filters)) refuseValue(WHERE, "inputFilters", "an array of functions", filters);
  filters.forEach((filter, i) => checkType(WHERE, `inputFilters[${i}]`, filter, "function"));
}

function checkLimits(limits: AgentOptions["limits"]): void {
  if (limits === undefined) return;
  checkObject("limits", limits, "an object");
  checkOptionKeys("createAgent limits", limits, AGENT_LIMIT_KEYS);
  checkInteger(WHERE, "limits.maxTurns", limits.maxTurns, 1);
  checkInteger(WHERE, "limits.maxHandoffs", limits.maxHandoffs, 0);
  checkInteger(WHERE, "limits.maxTokens", limits.maxTokens, 1);
  // A timer cannot wait for Infinity (Node fires it at once): leave the option out for no limit.
  checkNumber(WHERE, "limits.maxDurationMs", limits.maxDurationMs, { min: 0, exclusive: true });
  checkNumber(WHERE, "limits.maxCostUsd", limits.maxCostUsd, { min: 0, exclusive: true });
  checkNumber(WHERE, "limits.maxSessionCostUsd", limits.maxSessionCostUsd, { min: 0, exclusive: true });
  const onLimit = limits.onLimit;
  if (onLimit !== undefined && onLimit !== "answer" && onLimit !== "stop") {
    throw new TypeError(
      `createAgent limits.onLimit must be "answer" or "stop", got ${JSON.stringify(onLimit)}`,
    );
  }
}

function checkRetry(retry: AgentOptions["retry"]): void {
  if (retry === undefined) return;
  checkObject("retry", retry, "an object");
  checkOptionKeys("createAgent retry", retry, RETRY_POLICY_KEYS);
  checkInteger(WHERE, "retry.maxRetries", retry.maxRetries, 0);
  checkInteger(WHERE, "retry.maxConnectRetries", retry.maxConnectRetries, 0);
  checkNumber(WHERE, "retry.baseDelayMs", retry.baseDelayMs, { min: 0 });
  checkNumber(WHERE, "retry.maxDelayMs", retry.maxDelayMs, { min: 0 });
  checkNumber(WHERE, "retry.jitter", retry.jitter, { min: 0, max: 1 });
}

function checkStallTimeout(stallTimeout: AgentOptions["stallTimeout"]): void {
  if (stallTimeout === undefined || stallTimeout === false) return;
  checkObject("stallTimeout", stallTimeout, "false or an object");
  checkOptionKeys("createAgent stallTimeout", stallTimeout, STALL_TIMEOUT_KEYS);
  // 0 or Infinity turns a check off.
  checkNumber(WHERE, "stallTimeout.firstEventMs", stallTimeout.firstEventMs, { min: 0, infinite: true });
  checkNumber(WHERE, "stallTimeout.idleMs", stallTimeout.idleMs, { min: 0, infinite: true });
}

function checkObject(option: string, value: unknown, accepts: string): void {
  if (value !== undefined && (value === null || typeof value !== "object" || Array.isArray(value))) {
    refuseValue(WHERE, option, accepts, value);
  }
}
