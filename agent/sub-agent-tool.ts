import * as z from "zod";
import { lazy } from "../core/lazy.js";
import { createAgent, createJournaledAgent } from "./create-agent.js";
import { callRunsOwnSteps, markJournaledChild } from "../core/journaled-child.js";
import type { AgentEndReason, AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage, AssistantMessage, Usage } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import { AGENT_OPTION_KEYS, type AgentLimits, type AgentOptions } from "../core/options.js";
import { reserveSubAgentBudget, tokensLeftOf } from "./sub-agent-budget.js";
import { runtimeOf } from "../core/runtime.js";
import type { Provider } from "../providers/provider.js";
import { defineTool, type Tool, type ToolResult } from "../tools/define-tool.js";
import { narrowPermissions } from "../tools/narrow-permissions.js";
import { checkPermissionToolNames } from "./check-agent-options.js";
import { recordChildTools, toolNamesWithin } from "./tools-within.js";
import { observeSubAgents, subAgentObserverOf } from "./sub-agent-observer.js";
import { registerSubAgent, surfacedEvent } from "./nested-calls.js";
import { checkContextFilter, type ContextFilter, filterContext } from "./context-filter.js";
import type { InferOutput, OutputOption } from "../core/output.js";
import { runOutcomeOf, type RunOutcome } from "../core/run-outcome.js";
import { outputSpecOf } from "../rules/output.logic.js";
import type { ToolContext } from "../core/tool.js";

/**
 * What a sub-agent sees of its parent's transcript: `"isolated"` (nothing: its task alone, the
 * default), `"forked"` (the parent's transcript up to the call, then its task), `"summary"` (a
 * summary of it, written by the child's model), or any other {@link ContextFilter} of it.
 */
export type SubAgentContext = "isolated" | "forked" | Exclude<ContextFilter, "all">;

/** What a sub-agent's run gave, for {@link SubAgentToolOptions.resultText}. */
export interface SubAgentRun<TOutput = unknown> {
  /** The child's run, as `agent.prompt` resolves it (`output` typed with an output schema). */
  outcome: RunOutcome<TOutput>;
  /** What the parent's model reads by default: the child's last answer, or its partial work. */
  text: string;
}

/** Options of {@link subAgentTool}. */
export interface SubAgentToolOptions<O extends OutputOption | undefined = undefined> {
  /** The tool's name, e.g. `"researcher"`. */
  name: string;
  /** What the parent model reads to decide when to delegate. */
  description: string;
  /** The child agent's system prompt. */
  systemPrompt?: string;
  /** The child's tools. */
  tools?: Tool[];
  /** The child's provider (may be the parent's, or a cheaper model). */
  provider: Provider;
  /**
   * The child's limits. At `maxTurns` / `maxTokens` the child answers from what it has (its
   * `onLimit` default); with `onLimit: "stop"`, or at `maxDurationMs`, it returns its partial work
   * with the `[Agent stopped: …]` notice.
   */
  limits?: AgentLimits;
  /**
   * Anything else of the child's options (tool execution strategy, hooks, permissions...). The
   * child's `permissions` can only narrow what the parent allows: the parent's rules and mode always
   * apply inside the child as well. A child's call that needs approval (or a client's result) waits
   * in the child and surfaces in the parent: listed by its `pendingApprovals()` and answered by its
   * `approve`/`deny` under the id `<parent call>/<child call>`, at any depth.
   */
  agentOptions?: Omit<
    AgentOptions,
    "provider" | "systemPrompt" | "tools" | "limits" | "messages" | "snapshot" | "id" | "output"
  >;
  /** The tool is read-only (and may run in parallel with other safe calls). Default: all child tools are. */
  readOnly?: boolean;
  /** Minimum time between two streamed `tool_execution_update`s of the child's text. Default 100 ms. */
  updateIntervalMs?: number;
  /** Timeout of the whole sub-agent call; overrides the parent's `toolTimeoutMs`. */
  timeoutMs?: number;
  /** What the child sees of the parent's transcript (default `"isolated"`). See {@link SubAgentContext}. */
  context?: SubAgentContext;
  /**
   * The child's output schema: its run ends with a validated object, which the parent's model reads
   * as JSON and the app finds, typed, in the result's `details.output`.
   */
  output?: O;
  /**
   * What the parent's model reads of the child's run (a summary of it, say); default: the child's
   * last answer (its output as JSON, with a schema), or its partial work when it stopped early.
   */
  resultText?: (run: SubAgentRun<undefined extends O ? unknown : InferOutput<O>>) => string;
}

/** `details` of a sub-agent result (and of its partial results). */
export interface SubAgentDetails<TOutput = unknown> {
  /** The child's validated output, with an output schema and a run that ended with reason `"stop"`. */
  output?: TOutput;
  childAgentId: string;
  /** Why the child's run ended (`agent_end.reason`); absent in partial results. */
  reason?: AgentEndReason;
  /** The child's own model calls' usage (not its sub-agents'). */
  usage?: Usage;
  /**
   * What the child's run used with its own sub-agents' runs (at every depth) included: what the
   * parent's usage and `maxTokens` count.
   */
  treeUsage?: Usage;
  /**
   * What the child's run cost in USD with its own sub-agents' runs (at every depth) included:
   * what the parent's cost limits count. Absent when no cost is known.
   */
  costUsd?: number;
  /** Model calls the child made. */
  turns?: number;
}

/** Options set on the sub-agent tool itself, not inside `agentOptions`. */
type OwnAgentOptions =
  "provider" | "systemPrompt" | "tools" | "limits" | "messages" | "snapshot" | "id" | "output";

const SUB_AGENT_TOOL_KEYS: OptionKeys<SubAgentToolOptions> = {
  context: true,
  output: true,
  resultText: true,
  name: true,
  description: true,
  systemPrompt: true,
  tools: true,
  provider: true,
  limits: true,
  agentOptions: true,
  readOnly: true,
  updateIntervalMs: true,
  timeoutMs: true,
};

const {
  provider: _provider,
  systemPrompt: _systemPrompt,
  tools: _tools,
  limits: _limits,
  messages: _messages,
  snapshot: _snapshot,
  id: _id,
  output: _output,
  ...CHILD_AGENT_OPTION_KEYS
} = AGENT_OPTION_KEYS;

const OWN_OPTION_HINTS: Record<OwnAgentOptions, string> = {
  provider: "set provider on subAgentTool itself",
  systemPrompt: "set systemPrompt on subAgentTool itself",
  tools: "set tools on subAgentTool itself",
  limits: "set limits on subAgentTool itself",
  messages: 'set context on subAgentTool: "isolated", "forked" or "summary"',
  output: "set output on subAgentTool itself",
  snapshot: "each delegation starts from its task alone",
  id: "the child's id is <name>-<toolCallId>",
};

const parameters = /* @__PURE__ */ lazy(() =>
  z.object({
    task: z.string().min(1).describe("The task for the sub-agent, with everything it needs to know"),
  }),
);

function textOf(message: AgentMessage): string {
  if (message.role !== "assistant") return "";
  return message.content
    .filter((part) => part.type === "text")
    .map((part) => (part as { text: string }).text)
    .join("");
}

/**
 * A tool that hands a task to a child agent (its own agent machine, with its own tools, system
 * prompt, provider and limits) and returns the child's answer. While the child works, its text
 * streams to the parent as `tool_execution_update` and each of its tool calls as `tool_progress`;
 * the child's id comes back as `childAgentId` in `tool_execution_end`. Aborting the parent (or the
 * call timing out) aborts the child. A child that hits a limit returns its work so far ending with
 * the answer its limit asked for (or, when it stopped without one, the `[Agent stopped: …]` notice). The child is an actor in the parent's tree, under the call that
 * runs it (so the parent's inspector shows it there), and is stopped when the call ends.
 *
 * @example
 * ```ts
 * const researcher = subAgentTool({
 *   name: "researcher",
 *   description: "Investigates a question in the code base and reports back",
 *   systemPrompt: "You read code and answer precisely.",
 *   tools: [createReadFileTool({ workspace }), createGrepTool({ workspace })],
 *   provider,
 *   limits: { maxTurns: 10 },
 * });
 * const agent = createAgent({ provider, tools: [researcher, ...codingTools({ cwd })] });
 * ```
 */
export function subAgentTool<O extends OutputOption | undefined = undefined>(
  options: SubAgentToolOptions<O>,
): Tool<
  z.output<ReturnType<typeof parameters>>,
  SubAgentDetails<undefined extends O ? unknown : InferOutput<O>>
> {
  checkOptionKeys("subAgentTool", options, SUB_AGENT_TOOL_KEYS);
  checkOptionKeys(
    "subAgentTool agentOptions",
    options.agentOptions,
    CHILD_AGENT_OPTION_KEYS,
    OWN_OPTION_HINTS,
  );
  const childTools = options.tools ?? [];
  const readOnly = options.readOnly ?? childTools.every((tool) => tool.readOnly);
  const updateIntervalMs = options.updateIntervalMs ?? 100;
  const contextMode = options.context ?? "isolated";
  if (contextMode !== "isolated" && contextMode !== "forked") {
    checkContextFilter(`subAgentTool "${options.name}" context`, contextMode);
  }
  if (options.output !== undefined) outputSpecOf(options.output, `subAgentTool "${options.name}" output`);
  if (options.resultText !== undefined && typeof options.resultText !== "function") {
    throw new TypeError(`subAgentTool "${options.name}": resultText must be a function of the child's run`);
  }
  // The child's own rules are checked against the child's tools now, not at its first call.
  checkPermissionToolNames(
    "subAgentTool agentOptions",
    options.agentOptions?.permissions,
    toolNamesWithin(childTools),
  );

  const tool = defineTool({
    name: options.name,
    description: options.description,
    parameters: parameters(),
    readOnly,
    timeoutMs: options.timeoutMs,
    async execute(args, ctx): Promise<ToolResult<SubAgentDetails>> {
      // The parent starts a call from inside one of its machine's actions; a child agent made there
      // would be built while XState runs that action (it warns, and the child's first steps would run
      // inside the parent's). Leave the action first.
      await Promise.resolve();
      if (ctx.signal.aborted) throw new Error("Sub-agent not started: the call was aborted");
      const childAgentId = `${options.name}-${ctx.toolCallId}`;
      // A child never has more rights than its parent: the parent's permissions, read live, narrowed
      // by the child's own.
      const runtime = ctx.actor ? parentRuntime(ctx.actor) : undefined;
      const permissions = narrowPermissions(runtime?.permissions, options.agentOptions?.permissions);
      // With a parent budget in money, the child's worst case is reserved before it starts: it may
      // spend what the parent can spare, never more.
      const budget = reserveSubAgentBudget(ctx.actor, ctx.toolCallId);
      if (budget && budget.maxUsd <= 0) {
        throw new Error(
          `Sub-agent not started: the budget has ${usd(Math.max(0, budget.leftUsd))} left, and the agent keeps ${usd(budget.keptUsd)} of it for its own next call`,
        );
      }
      // The parent's token budget is the tree's: the child may use what the parent has left.
      const tokensLeft = tokensLeftOf(ctx.actor);
      if (tokensLeft !== undefined && tokensLeft <= 0) {
        throw new Error("Sub-agent not started: the run's token budget (maxTokens) is spent");
      }
      // The test kit watching the parent's run watches this child's too.
      const watch = subAgentObserverOf(runtime?.options)?.({
        toolName: options.name,
        toolCallId: ctx.toolCallId,
        tools: childTools,
      });
      // Under a durable run's journal the child journals its own steps under this call's path, so a
      // replay answers its finished steps (its model and tool calls never run twice).
      // (Only when the call is not itself one step: a tool wrapping this one is journaled whole.)
      const journal = callRunsOwnSteps(ctx.actor)
        ? runtime?.journal?.child?.(ctx.toolCallId, options.name)
        : undefined;
      const context = () => contextFor(contextMode, runtime, ctx, options.provider);
      // A filter that does work of its own (a summary's model call, a function) is recorded once.
      const messages =
        journal?.context && contextMode !== "isolated" && contextMode !== "forked"
          ? await journal.context(context)
          : await context();
      if (ctx.signal.aborted) throw new Error("Sub-agent not started: the call was aborted");
      const childOptions: AgentOptions = {
        ...options.agentOptions,
        ...(messages.length > 0 && { messages }),
        ...(options.output !== undefined && { output: options.output }),
        ...(permissions && { permissions }),
        id: childAgentId,
        provider: options.provider,
        systemPrompt: options.systemPrompt,
        tools: watch?.tools ?? childTools,
        limits: {
          ...options.limits,
          ...(budget && {
            maxCostUsd: Math.min(options.limits?.maxCostUsd ?? Infinity, budget.maxUsd),
          }),
          ...(tokensLeft !== undefined && {
            maxTokens: Math.min(options.limits?.maxTokens ?? Infinity, tokensLeft),
          }),
        },
        // In the parent's tree, under this call's actor (and so in its inspector), when run by an agent.
        ...(ctx.actor && { parentActor: ctx.actor }),
      };
      const observed = watch?.observer ? observeSubAgents(childOptions, watch.observer) : childOptions;
      const child = journal ? createJournaledAgent(observed, journal) : createAgent(observed);
      watch?.agent(child);

      let streamed = "";
      let lastUpdate = 0;
      let pendingUpdate: NodeJS.Timeout | undefined;
      const publish = () => {
        pendingUpdate = undefined;
        lastUpdate = Date.now();
        ctx.onUpdate({ content: [{ type: "text", text: streamed.trimEnd() }], details: { childAgentId } });
      };
      const schedule = () => {
        if (pendingUpdate) return;
        pendingUpdate = setTimeout(publish, Math.max(0, updateIntervalMs - (Date.now() - lastUpdate)));
      };
      let turns = 0;
      /** What the child's sub-agents cost (their trees included), as their results report it. */
      let belowUsd = 0;
      const subscription = child.events$.subscribe((event: AgentEvent) => {
        switch (event.type) {
          case "turn_start":
            turns++;
            break;
          case "message_update":
            if (event.kind === "text_delta" && event.delta) {
              streamed += event.delta;
              schedule();
            }
            break;
          case "message_end":
            // Separate the texts of successive turns in the stream.
            if (event.message.role === "assistant" && textOf(event.message) !== "") streamed += "\n\n";
            break;
          case "tool_execution_start":
            ctx.onProgress(`${event.toolName} ${summarize(event.args)}`.trim());
            break;
          case "tool_execution_end":
            if (event.isError) ctx.onProgress(`${event.toolName} failed`);
            // The child's own sub-agents' spending, so that what this call cost adds up the tree.
            belowUsd += treeCostOf(event.result.details);
            break;
          case "approval_requested":
            // Run by hand, outside an agent, nobody could answer: waiting would hang the call.
            if (!runtime) {
              child.deny(
                event.toolCallId,
                "a sub-agent run outside an agent cannot ask for approval: no one is there to answer",
              );
            }
            break;
        }
        // What waits in the child (at any depth) surfaces in the parent, under this call's id.
        const surfaced = runtime && surfacedEvent(ctx.toolCallId, childAgentId, event);
        if (surfaced) runtime.publish(surfaced);
      });
      // The parent lists and answers what waits in the child while this call runs.
      const unregister = runtime ? registerSubAgent(runtime, ctx.toolCallId, child) : undefined;
      const onAbort = () => child.abort();
      ctx.signal.addEventListener("abort", onAbort, { once: true });

      try {
        // Listen before prompting: a rejected task ends the run synchronously.
        let endSubscription: { unsubscribe(): void } | undefined;
        const ended = new Promise<AgentEventOf<"agent_end">>((resolve) => {
          endSubscription = child.events$.subscribe((event) => {
            if (event.type === "agent_end") resolve(event);
          });
        });
        const end = await Promise.race([ended, child.prompt(args.task).then(() => ended)]).finally(() =>
          endSubscription?.unsubscribe(),
        );
        // The last streamed text goes out before the result, so the final update is complete.
        if (pendingUpdate && !ctx.signal.aborted) {
          clearTimeout(pendingUpdate);
          publish();
        }
        // The child's `usage` is its tree's; its own calls' apart when it ran sub-agents of its own.
        const own = end.ownUsage ?? end.usage;
        const costUsd = (own.cost?.total ?? 0) + belowUsd;
        budget?.settle(costUsd);
        const outcome = runOutcomeOf(end);
        const details: SubAgentDetails = {
          childAgentId,
          reason: end.reason,
          usage: own,
          treeUsage: end.usage,
          ...((own.cost !== undefined || belowUsd > 0) && { costUsd }),
          turns,
          ...(outcome.output !== undefined && { output: outcome.output }),
        };
        const { text: defaultText, isError } = resultOf(end);
        const text =
          options.resultText && end.reason === "stop"
            ? String(options.resultText({ outcome: outcome as never, text: defaultText }))
            : defaultText;
        return {
          content: [{ type: "text", text }],
          details,
          childAgentId,
          ...(isError && { isError }),
        };
      } finally {
        if (pendingUpdate) clearTimeout(pendingUpdate);
        ctx.signal.removeEventListener("abort", onAbort);
        unregister?.();
        subscription.unsubscribe();
        child.stop();
      }
    },
  });
  recordChildTools(tool, childTools);
  markJournaledChild(tool);
  return tool as Tool<
    z.output<ReturnType<typeof parameters>>,
    SubAgentDetails<undefined extends O ? unknown : InferOutput<O>>
  >;
}

/**
 * What the parent's model reads of a child's run by default: its answer (its output as JSON, with
 * a schema), or its partial work with the notice of why it stopped.
 */
function resultOf(end: AgentEventOf<"agent_end">): { text: string; isError: boolean } {
  const assistantMessages = end.messages.filter((m): m is AssistantMessage => m.role === "assistant");
  const last = assistantMessages.at(-1);
  if (end.reason === "stop") {
    return {
      text: end.output !== undefined ? JSON.stringify(end.output) : last ? textOf(last) : "",
      isError: false,
    };
  }
  // Partial work: every text the child wrote, the stop notice (if any) last.
  const partial = assistantMessages.map(textOf).filter((text) => text !== "");
  if (end.reason === "error") {
    partial.push(`[Sub-agent failed: ${end.errorMessage ?? last?.errorMessage ?? "unknown error"}]`);
  }
  if (end.reason === "aborted") partial.push("[Sub-agent aborted]");
  if (end.reason === "rejected") partial.push("[Sub-agent rejected its task by an input filter]");
  return { text: partial.join("\n\n"), isError: end.reason !== "limit" };
}

/**
 * The messages a child starts with: none when isolated; else what its context filter lets through
 * of the parent's transcript up to the call (complete turns only, so every call in it is answered).
 */
async function contextFor(
  mode: SubAgentContext,
  runtime: ReturnType<typeof parentRuntime>,
  ctx: ToolContext,
  provider: Provider,
): Promise<AgentMessage[]> {
  if (mode === "isolated" || !runtime) return [];
  const transcript = runtime.transcript();
  // The last message with the call (ids of earlier turns may repeat): the child sees what came before it.
  let at = transcript.length - 1;
  while (
    at >= 0 &&
    !(
      transcript[at]!.role === "assistant" &&
      (transcript[at] as AssistantMessage).content.some(
        (p) => p.type === "toolCall" && p.id === ctx.toolCallId,
      )
    )
  ) {
    at--;
  }
  const before = at === -1 ? [...transcript] : transcript.slice(0, at);
  const { messages } = await filterContext(mode === "forked" ? "all" : mode, before, {
    provider,
    signal: ctx.signal,
  });
  return messages;
}

/** The runtime of the agent running this call; none when the tool is run by hand, outside an agent. */
function parentRuntime(actor: Parameters<typeof runtimeOf>[0]) {
  try {
    return runtimeOf(actor);
  } catch {
    return undefined;
  }
}

function usd(amount: number): string {
  return `$${amount.toFixed(4)}`;
}

function summarize(args: unknown): string {
  const json = JSON.stringify(args ?? {});
  return json.length > 120 ? `${json.slice(0, 117)}...` : json;
}

/**
 * What a sub-agent call's result says its run cost, its own sub-agents' included (`costUsd`; a
 * result from before `costUsd` existed: its `usage`); 0 for any other tool's result.
 *
 * @example
 * ```ts
 * treeCostOf(result.details); // 0.0213
 * ```
 */
export function treeCostOf(details: unknown): number {
  const d = details as Partial<SubAgentDetails> | undefined;
  if (!d || typeof d.childAgentId !== "string") return 0;
  return typeof d.costUsd === "number" ? d.costUsd : (d.usage?.cost?.total ?? 0);
}
