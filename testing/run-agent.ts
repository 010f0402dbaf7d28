import { type Agent, createAgent, type PendingApproval } from "../agent/create-agent.js";
import type { AgentEvent, AgentEventOf } from "../core/events.js";
import type { AgentMessage, ToolResultMessage } from "../core/messages.js";
import type { AgentOptions, PromptInput } from "../core/options.js";
import type { RunOutcome } from "../core/run-outcome.js";
import type { Tool, ToolResult } from "../tools/define-tool.js";
import type { ScriptedModel } from "./scripted-model.js";
import type { TestClock } from "./test-clock.js";
import { TestKitError } from "./test-kit-error.js";

/** How a run ended: what `agent_end` reported, as `agent.prompt()` resolves it. */
export type { RunOutcome };

/** One tool call of a run: what the model asked for and what it got back. */
export interface RunToolCall {
  id: string;
  name: string;
  /** The arguments as the model sent them. */
  args: Record<string, unknown>;
  /** The result the model saw (undefined only when the transcript lacks it: an invalid run). */
  result?: ToolResult;
  isError: boolean;
  /** Approval asked and decided, when the permission checker asked. */
  approval?: "approved" | "denied";
  /**
   * The tool's `execute` ran (known when `runAgent` created the agent from options: it watches
   * each tool, the handoff agents' too; `undefined` for an agent you passed in). A
   * `transfer_to_<name>` call counts as run when it handed the conversation over.
   */
  executed?: boolean;
}

/** Everything one run did, for assertions. */
export interface AgentRun {
  outcome: RunOutcome;
  /** Every event of the run, in order, from `agent_start` to `agent_end`. */
  events: AgentEvent[];
  /** The whole transcript after the run. */
  transcript: AgentMessage[];
  /** The run's tool calls, in the order the model asked for them. */
  toolCalls: RunToolCall[];
  /** The agent that ran (reuse it for a second run, read its snapshot). */
  agent: Agent;
}

/** Who answers the approvals a run asks for. */
export type ApprovalPolicy =
  | "approve"
  | "deny"
  /** `true` approves; `false` or a string (the reason the model sees) denies. */
  | ((request: PendingApproval) => boolean | string | Promise<boolean | string>);

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  /** Approvals the run asks for. Default `"deny"`, with a reason saying no one approved in the test. */
  approve?: ApprovalPolicy;
  /** Moves this installed {@link TestClock} whenever the run waits for time, instead of waiting. */
  clock?: TestClock;
  /**
   * A run that has not ended after this long is aborted and `runAgent` throws (clock time with a
   * `clock`, else real time). Default 30 000 ms real, one day on a test clock.
   */
  timeoutMs?: number;
  /**
   * With a `clock`: real time to wait when no timer is pending and nothing happens, before
   * `runAgent` aborts the run and throws. Default 30 000 ms.
   */
  realTimeoutMs?: number;
  /** Call the scripted model's `verify()` after the run (default `true` when the provider is a {@link scriptedModel}). */
  verifyModel?: boolean;
}

/**
 * Runs one prompt to its end and returns everything it did: the outcome, every event in order,
 * the transcript, the tool calls with their arguments and results. Pass options (a new agent is
 * created, its tools watched so `executed` is known) or an agent (reused across runs).
 *
 * @example
 * ```ts
 * const run = await runAgent({ provider: scriptedModel([{ text: "Hi" }]) }, "Hello");
 * assert.equal(run.outcome.reason, "stop");
 * assertValidTranscript(run.transcript);
 * ```
 */
export async function runAgent(
  agentOrOptions: Agent | AgentOptions,
  input: PromptInput,
  options: RunAgentOptions = {},
): Promise<AgentRun> {
  const executed = new Set<string>();
  const agent = isAgent(agentOrOptions)
    ? agentOrOptions
    : createAgent(watchedOptions(agentOrOptions, executed));
  const events: AgentEvent[] = [];
  const decisions = new Map<string, boolean>();
  const policy = options.approve ?? "deny";
  let ended: AgentEventOf<"agent_end"> | undefined;
  const subscription = agent.events$.subscribe((event) => {
    events.push(event);
    if (event.type === "agent_end") ended = event;
    if (event.type === "approval_decided") decisions.set(event.toolCallId, event.approved);
    // A transfer's tool is the agent's own (not one runAgent can watch): it ran when it handed off.
    if (event.type === "handoff") executed.add(event.toolCallId);
    if (event.type === "approval_requested") answerApproval(agent, event, policy);
  });
  let done: Promise<RunOutcome> | undefined;
  try {
    done = agent.prompt(input);
    await waitForEnd(agent, done, options);
  } finally {
    subscription.unsubscribe();
  }
  if (!ended) throw new TestKitError("runAgent: the run ended without agent_end");
  const provider = isAgent(agentOrOptions) ? undefined : agentOrOptions.provider;
  if (options.verifyModel !== false && isScriptedModel(provider)) provider.verify();
  const transcript = [...agent.messages];
  return {
    outcome: await done,
    events,
    transcript,
    toolCalls: toolCallsOf(ended.messages, decisions, isAgent(agentOrOptions) ? undefined : executed),
    agent,
  };
}

async function waitForEnd(agent: Agent, done: Promise<unknown>, options: RunAgentOptions): Promise<void> {
  const { clock } = options;
  if (clock) {
    try {
      await clock.runUntil(done, { maxMs: options.timeoutMs, maxRealIdleMs: options.realTimeoutMs });
    } catch (error) {
      agent.abort();
      throw new TestKitError(`runAgent: the run did not end: ${(error as Error).message}`);
    }
    return;
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">(
    (resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)),
  );
  try {
    if ((await Promise.race([done, timedOut])) === "timeout") {
      agent.abort();
      throw new TestKitError(`runAgent: the run did not end within ${timeoutMs} ms (it was aborted)`);
    }
  } finally {
    clearTimeout(timer);
  }
}

function answerApproval(
  agent: Agent,
  request: AgentEventOf<"approval_requested">,
  policy: ApprovalPolicy,
): void {
  const pending: PendingApproval = {
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    args: request.args,
    // A call waiting in a sub-agent: where (its id is the path of call ids).
    ...(request.path && { path: request.path }),
    ...(request.agents && { agents: request.agents }),
  };
  const decide = (verdict: boolean | string) => {
    if (!agent.pendingApprovals().some((p) => p.toolCallId === pending.toolCallId)) return;
    if (verdict === true) agent.approve(pending.toolCallId);
    else agent.deny(pending.toolCallId, typeof verdict === "string" ? verdict : undefined);
  };
  if (policy === "approve") return decide(true);
  if (policy === "deny")
    return decide("Denied: no one approves calls in this test (runAgent's approve option)");
  Promise.resolve(policy(pending)).then(decide, (error: unknown) =>
    decide(`Denied: the approver failed: ${String(error)}`),
  );
}

/** The run's calls from its messages: each call with the result the model saw. */
function toolCallsOf(
  messages: readonly AgentMessage[],
  decisions: ReadonlyMap<string, boolean>,
  executed: ReadonlySet<string> | undefined,
): RunToolCall[] {
  const results = new Map<string, ToolResultMessage>();
  for (const m of messages) if (m.role === "toolResult") results.set(m.toolCallId, m);
  const calls: RunToolCall[] = [];
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    for (const c of m.content) {
      if (c.type !== "toolCall") continue;
      const result = results.get(c.id);
      const decision = decisions.get(c.id);
      calls.push({
        id: c.id,
        name: c.name,
        args: c.arguments,
        ...(result && {
          result: { content: result.content, details: result.details, isError: result.isError },
        }),
        isError: result?.isError ?? false,
        ...(decision !== undefined && { approval: decision ? ("approved" as const) : ("denied" as const) }),
        ...(executed && { executed: executed.has(c.id) }),
      });
    }
  }
  return calls;
}

/** The options with every tool watched: the agent's own, and each handoff agent's. */
function watchedOptions(options: AgentOptions, executed: Set<string>): AgentOptions {
  const watch = (tools: readonly Tool[] | undefined) => tools?.map((t) => watched(t, executed));
  return {
    ...options,
    tools: watch(options.tools),
    ...(options.handoffs && {
      handoffs: options.handoffs.map((h) => Object.freeze({ ...h, tools: watch(h.tools) })),
    }),
  };
}

/** The tool, noting each call whose `execute` runs. */
function watched(tool: Tool, executed: Set<string>): Tool {
  // A tool built as a class keeps its prototype: only `execute` is overridden.
  const copy: Tool = Object.create(tool);
  copy.execute = (args, ctx) => {
    executed.add(ctx.toolCallId);
    return tool.execute(args, ctx);
  };
  return copy;
}

function isAgent(value: Agent | AgentOptions): value is Agent {
  return typeof (value as Agent).prompt === "function" && "events$" in value;
}

function isScriptedModel(provider: unknown): provider is ScriptedModel {
  return typeof (provider as ScriptedModel | undefined)?.verify === "function";
}
