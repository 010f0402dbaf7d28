import type { TracerProvider } from "@opentelemetry/api";
import type { AnyActorRef, Observer } from "xstate";
import type { ContextConfig } from "./context-config.js";
import type { Provider } from "./provider.js";
import type { Tool, ToolResult } from "./tool.js";
import type { AgentMessage, ImageContent, Message, TextContent, ToolCall, UserMessage } from "./messages.js";
import type { OptionKeys } from "./option-keys.js";
import type { OutputFilter, OutputOption } from "./output.js";
import type { SnapshotMigration } from "./snapshot-version.js";
import type { PromptCacheOptions } from "./prompt-cache.js";
import type { SpendStore } from "./spend-store.js";
import type { HandoffAgent } from "./handoff.js";

/** How the calls of one assistant message run. See `createAgent({ toolExecution })`. */
export type ToolExecutionStrategy = "parallel" | "sequential" | "auto" | { batched: number };

/** How many queued steering / follow-up messages one turn takes. */
export type QueueMode = "one-at-a-time" | "all";

/** The verdict of one input filter on a user message's text. */
export type InputFilterResult = { pass: true } | { warn: string } | { reject: string };

/** Screens user text (prompt, steer, follow-up) before it reaches the transcript. */
export type InputFilter = (text: string) => InputFilterResult;

/** Limits that end a run with `agent_end.reason === "limit"`. */
export interface AgentLimits {
  /** Model calls per run. */
  maxTurns?: number;
  /**
   * With `handoffs`: transfers in a row (no user message between them) before one is refused (the
   * model reads why, and answers itself). Default 5: a guard against agents handing a conversation
   * back and forth.
   */
  maxHandoffs?: number;
  /** Input + output + cache read + cache write tokens per run. */
  maxTokens?: number;
  /** Wall time per run; also fires mid-turn, ending the run as an abort does. */
  maxDurationMs?: number;
  /**
   * US dollars per run. Before each model call the agent reserves the call's worst case (its
   * prompt, and as much output as the provider's `maxTokens` allows, at the dearest price of the
   * models it may use): a call that might cross the budget is not made, so a run never ends above
   * it. Every model the provider may use needs a price (`setModelPrice`).
   */
  maxCostUsd?: number;
  /** US dollars over the agent's life (every run, kept in its snapshot), reserved the same way. */
  maxSessionCostUsd?: number;
  /**
   * What happens at `maxTurns`, `maxTokens` or a cost limit. `"answer"` (default): one more model call, without
   * tools, after a notice that it must answer now from what it has; the run ends with reason
   * `"limit"` and that answer (for `maxTokens`: when the budget left still pays for that call).
   * `"stop"`: the run ends at once with the `[Agent stopped: …]` notice. `maxDurationMs` always stops.
   */
  onLimit?: "answer" | "stop";
}

/**
 * When a run counts as stuck in a loop (see `createAgent({ loopDetection })`). A call is the tool
 * name plus its arguments in canonical JSON (key order does not matter).
 */
export interface LoopDetectionOptions {
  /** The same call answered with the same result this many times in one run. Default 5. */
  maxIdenticalCalls?: number;
  /** The same call failing this many times in one run. Default 3. */
  maxIdenticalFailures?: number;
}

/**
 * OpenTelemetry tracing of an agent (see docs/telemetry.md). Spans go through `@opentelemetry/api`
 * to the tracer provider you register; without one (and without `tracerProvider`) nothing is traced
 * and nothing is paid.
 */
export interface TelemetryOptions {
  /** Where spans go. Default: the global provider (`trace.setGlobalTracerProvider`, `sdk.start()`). */
  tracerProvider?: TracerProvider;
  /**
   * Record message contents, system instructions and tool arguments / results on the spans
   * (`gen_ai.input.messages`, `gen_ai.output.messages`, ...). They may hold personal or secret data.
   * Default: `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` in the environment, else off.
   */
  recordContent?: boolean;
  /** `gen_ai.agent.name`. Default: the agent's `id` when you gave one, a sub-agent's tool name, else `agent`. */
  agentName?: string;
  /** `gen_ai.conversation.id` (a session or thread id), when you have one. */
  conversationId?: string;
}

/** Backoff for transient provider failures (429, 5xx, overloaded, dropped connection). */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /**
   * Retries when the server could not be reached at all (connection refused, host name not
   * found): the same answer a second later in nearly every case, so none by default and the run
   * ends at once with the address and the cause. Raise it for a server that may still be starting.
   * Counts within `maxRetries`. Default 0.
   */
  maxConnectRetries?: number;
  /** First delay; doubles each attempt. Default 1000 ms. */
  baseDelayMs?: number;
  /**
   * Upper bound of one delay. A server's `retry-after` may ask for more, up to this: a longer wait
   * is cut to this (as the vendors' SDKs do), the call's final error says the wait the server asked
   * for, and a `fallback` chain hands the call to its next model at once. Default 60 000 ms.
   */
  maxDelayMs?: number;
  /** ± share of random jitter. Default 0.2. */
  jitter?: number;
}

/**
 * The stream watchdog: a model call whose stream stays silent too long is aborted and retried as a
 * network failure (with the agent's `retry` policy). 0 or `Infinity` turns a check off.
 */
export interface StallTimeout {
  /** Longest wait for the stream's first event. Default 180 000 ms. */
  firstEventMs?: number;
  /** Longest silence between two events once the stream has begun. Default 180 000 ms. */
  idleMs?: number;
}

/**
 * The size budget every tool result meets before it enters the history (see docs/tools.md,
 * "Result budget"). A longer result keeps its head and tail around a marker saying how much was
 * cut; its full output is spilled to a file `read_file` can page (when the agent has a `read_file`
 * tool with a workspace) or kept in the result's `details.fullOutput`.
 */
export interface ToolResultBudget {
  /** Characters of text per result; a tool's own `maxResultChars` wins. Default 50,000. */
  maxChars?: number;
  /** Spill cut outputs into the workspace (`.agent-machine/tool-output/`). Default `true`. */
  spill?: boolean;
}

/** What a permission check decides for one call. */
export type PermissionDecision =
  { behavior: "allow" } | { behavior: "ask" } | { behavior: "deny"; reason: string };

/** Decides, before a call runs, whether it may (`allow`), must be approved (`ask`), or may not (`deny`). */
export interface PermissionChecker {
  check(request: {
    toolCall: ToolCall;
    tool: Tool;
    args: unknown;
  }): PermissionDecision | Promise<PermissionDecision>;
  /**
   * Called by `createAgent` (and `subAgentTool`) with the name of every tool a run can call, its
   * sub-agents' tools included: throws when a rule names a tool that is not among them (a typo such
   * as `Write_File` would otherwise be a rule that never matches). Optional for your own checkers.
   */
  checkToolNames?(names: readonly string[]): void;
}

export interface BeforeToolCallContext {
  toolCall: ToolCall;
  args: unknown;
  context: { systemPrompt?: string; messages: readonly AgentMessage[] };
}
export type BeforeToolCallResult = { block?: boolean; reason?: string; args?: unknown } | undefined | void;

export interface AfterToolCallContext {
  toolCall: ToolCall;
  args: unknown;
  result: ToolResult;
  isError: boolean;
}
export type AfterToolCallResult =
  { content?: (TextContent | ImageContent)[]; details?: unknown; isError?: boolean } | undefined | void;

export interface ToolUpdateContext {
  toolCall: ToolCall;
  partialResult: ToolResult;
}

type MaybePromise<T> = T | Promise<T>;

/** Hooks around every tool call. Each may be sync or async. */
export interface AgentHooks {
  /** May block the call (with a reason the model sees) or replace its arguments. */
  beforeToolCall?: (ctx: BeforeToolCallContext) => MaybePromise<BeforeToolCallResult>;
  /** May replace the result's content, details or error flag. */
  afterToolCall?: (ctx: AfterToolCallContext) => MaybePromise<AfterToolCallResult>;
  /** Return `false` to drop an update, or `{ partialResult }` to replace it. */
  beforeToolUpdate?: (
    ctx: ToolUpdateContext,
  ) => MaybePromise<false | { partialResult: ToolResult } | undefined | void>;
  /** Runs after the update's event was published. */
  afterToolUpdate?: (ctx: ToolUpdateContext) => MaybePromise<void>;
}

/** Options of `createAgent`. */
export interface AgentOptions {
  provider: Provider;
  systemPrompt?: string;
  tools?: Tool[];
  /** A transcript to start from. */
  messages?: AgentMessage[];
  toolExecution?: ToolExecutionStrategy;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  hooks?: AgentHooks;
  inputFilters?: InputFilter[];
  /**
   * The result every run returns: a zod 4 schema (or a JSON Schema, or `{ schema, name?,
   * maxRepairs? }`). The final answer must be a JSON object of it: `outcome.output` carries it,
   * validated and typed; an invalid answer goes back to the model with the error (docs/output.md).
   * `prompt(input, { output })` sets one per run.
   */
  output?: OutputOption;
  /**
   * Checks of the final answer (text or object), the mirror of `inputFilters`: each passes, warns
   * (`outcome.outputWarnings`) or rejects (the model is told why and answers again, up to
   * `outputFilterRetries` times; then the run ends with reason `"rejected"`). First reject wins.
   */
  outputFilters?: OutputFilter[];
  /** Times an answer an output filter rejected goes back to the model. Default 2. */
  outputFilterRetries?: number;
  limits?: AgentLimits;
  /** Compaction budget; without it the context is never compacted. */
  context?: ContextConfig;
  /** Default timeout of every tool call; a tool's own `timeoutMs` wins. */
  toolTimeoutMs?: number;
  /** The size budget of tool results (see {@link ToolResultBudget}); `false`: results are never cut. */
  toolResultBudget?: ToolResultBudget | false;
  /** Start a call as soon as its arguments are complete in the stream, when the strategy allows. */
  eagerToolExecution?: boolean;
  /** An XState inspection observer (e.g. from `createStatelyInspector`). */
  inspect?: Observer<any> | ((event: any) => void);
  permissions?: PermissionChecker;
  /**
   * Agents this one may hand the conversation to (`defineHandoff(...)`): its model gets a
   * `transfer_to_<name>` tool for each; calling one makes that agent active (its system prompt,
   * tools and model) from the next turn, with what its context filter lets through. See
   * docs/agents-together.md.
   */
  handoffs?: readonly HandoffAgent[];
  retry?: RetryPolicy;
  /**
   * Loop detection, on by default: when the same tool call keeps getting the same result (or keeps
   * failing), the model is first told (a `[Loop detected: …]` user message), and if it repeats the
   * call again the run ends with `agent_end.reason === "loop"`. `false` turns it off.
   */
  loopDetection?: LoopDetectionOptions | false;
  /**
   * OpenTelemetry spans in the GenAI semantic conventions: on by itself when a tracer provider is
   * registered when the agent is created (a sub-agent follows its parent), `false` turns it off.
   */
  telemetry?: TelemetryOptions | false;
  /** The stream watchdog (see {@link StallTimeout}); `false` turns it off. */
  stallTimeout?: StallTimeout | false;
  /** Turns the transcript into what the provider receives. Default: {@link defaultConvertToLlm}. */
  convertToLlm?: (messages: readonly AgentMessage[]) => Message[];
  /**
   * A persisted snapshot (`agent.getPersistedSnapshot()`) to resume from. One written by another
   * machine version is migrated, or refused with a `SnapshotVersionError` that carries its transcript.
   */
  snapshot?: unknown;
  /** Migrations besides the built-in ones, for snapshots of machine versions they do not cover. */
  snapshotMigrations?: SnapshotMigration[];
  /**
   * Runs the agent as a child of this actor (sub-agents pass `ctx.actor`): it joins the parent's
   * actor tree, so the parent's inspector shows it under the tool call that runs it.
   */
  parentActor?: AnyActorRef;
  /**
   * `"whenIdle"`: the agent hibernates whenever it is idle (created, or a run ended): it releases
   * its actor tree and keeps only its persisted snapshot, and the next call that needs the actor
   * (prompt, continue, steer, followUp, `agent.actor`, …) wakes it, with the same id and nothing
   * lost. For apps that keep many sessions around. Default `"manual"`: only `agent.hibernate()` does.
   * Either way an idle root agent whose actor the app never read rests: it lets the actor go and
   * keeps the actor's context as it is (nothing serialized), until something needs an actor again
   * (README, "Resting").
   */
  hibernate?: "whenIdle" | "manual";
  /**
   * The events of the run in progress are numbered and kept, so a consumer that reconnects asks
   * `agent.eventsSince(runId, seq)` for what it missed (docs/ui.md). Bounded by a count and a byte
   * budget (defaults: 10,000 events, 8 MB); `false` keeps none.
   */
  eventReplay?: EventReplayOptions | false;
  /** An id for this agent (shown in the inspector, used as `childAgentId` for sub-agents). */
  id?: string;
  /**
   * When calls ask the provider to keep the prompt cached for its longer lifetime (Anthropic's
   * 1 hour), so a wait (an approval, a client-run tool, a hibernation) does not cost the whole
   * prompt again. Default: when the wait expected after the call is longer than 5 minutes
   * (docs/providers.md, "Prompt caching across pauses").
   */
  promptCache?: PromptCacheOptions;
  /**
   * Keeps the agent's lifetime spending (what `limits.maxSessionCostUsd` counts) by its `id`,
   * apart from snapshots and transcripts: an agent made again under the same id starts from what
   * the store recorded, so a restart or a reload does not reset its budget. Needs `id`.
   */
  spendStore?: SpendStore;
}

/**
 * The keys `createAgent` accepts; any other is refused (`checkOptionKeys`). A new option goes into
 * {@link AgentOptions} and here (the compiler insists).
 */
export const AGENT_OPTION_KEYS: OptionKeys<AgentOptions> = {
  provider: true,
  systemPrompt: true,
  tools: true,
  messages: true,
  toolExecution: true,
  steeringMode: true,
  followUpMode: true,
  hooks: true,
  inputFilters: true,
  output: true,
  outputFilters: true,
  outputFilterRetries: true,
  limits: true,
  context: true,
  toolTimeoutMs: true,
  toolResultBudget: true,
  eagerToolExecution: true,
  inspect: true,
  permissions: true,
  handoffs: true,
  retry: true,
  stallTimeout: true,
  loopDetection: true,
  telemetry: true,
  convertToLlm: true,
  snapshot: true,
  snapshotMigrations: true,
  parentActor: true,
  id: true,
  hibernate: true,
  eventReplay: true,
  promptCache: true,
  spendStore: true,
};

/**
 * How much of a run's events an agent keeps for consumers that reconnect
 * (`createAgent({ eventReplay })`). The oldest events go first once either bound is passed.
 */
export interface EventReplayOptions {
  /** Events kept per run. Default 10,000. */
  maxEvents?: number;
  /**
   * Approximate bytes the kept events may hold beyond what the transcript holds anyway: each event
   * object, and the text only it carries (deltas, progress, partial tool results). Default 8 MB.
   */
  maxBytes?: number;
}

/** The keys of {@link EventReplayOptions}. */
export const EVENT_REPLAY_KEYS: OptionKeys<EventReplayOptions> = { maxEvents: true, maxBytes: true };

/** The keys of {@link AgentLimits}. */
export const AGENT_LIMIT_KEYS: OptionKeys<AgentLimits> = {
  maxTurns: true,
  maxHandoffs: true,
  maxTokens: true,
  maxDurationMs: true,
  maxCostUsd: true,
  maxSessionCostUsd: true,
  onLimit: true,
};

/** The keys of {@link RetryPolicy}. */
export const RETRY_POLICY_KEYS: OptionKeys<RetryPolicy> = {
  maxRetries: true,
  maxConnectRetries: true,
  baseDelayMs: true,
  maxDelayMs: true,
  jitter: true,
};

/** The keys of {@link ToolResultBudget}. */
export const TOOL_RESULT_BUDGET_KEYS: OptionKeys<ToolResultBudget> = {
  maxChars: true,
  spill: true,
};

/** The keys of {@link LoopDetectionOptions}. */
export const LOOP_DETECTION_KEYS: OptionKeys<LoopDetectionOptions> = {
  maxIdenticalCalls: true,
  maxIdenticalFailures: true,
};

/** The keys of {@link TelemetryOptions}. */
export const TELEMETRY_KEYS: OptionKeys<TelemetryOptions> = {
  tracerProvider: true,
  recordContent: true,
  agentName: true,
  conversationId: true,
};

/** The keys of {@link StallTimeout}. */
export const STALL_TIMEOUT_KEYS: OptionKeys<StallTimeout> = {
  firstEventMs: true,
  idleMs: true,
};

/** The keys of {@link AgentHooks}. */
export const AGENT_HOOK_KEYS: OptionKeys<AgentHooks> = {
  beforeToolCall: true,
  afterToolCall: true,
  beforeToolUpdate: true,
  afterToolUpdate: true,
};

/** What `prompt()` accepts. */
export type PromptInput = string | UserMessage | AgentMessage | AgentMessage[];

/**
 * Options of one run: the second argument of `agent.prompt()` and the argument of `agent.continue()`.
 *
 * @example
 * ```ts
 * const pickColor = defineClientTool({ name: "pick_color", description: "Asks the user", parameters: z.object({}) });
 * await agent.prompt("Which color?", { tools: [pickColor] });
 * const { output } = await agent.prompt("Triage it", { output: z.object({ severity: z.enum(["low", "high"]) }) });
 * ```
 */
export interface RunOptions<TOutput extends OutputOption | undefined = OutputOption | undefined> {
  /**
   * Tools for this run only, besides the agent's own: typically client-run tools a frontend
   * declares per request (AG-UI's `RunAgentInput.tools`, built with `defineClientTool`). The model
   * sees them in every call of the run; they are gone when the run ends. A name the agent's tools
   * (or another run tool) already use is refused. They are not kept in snapshots: a run restored
   * from one still waits for and takes the results of their open calls, but its later model calls
   * no longer offer them.
   */
  tools?: readonly Tool[];
  /**
   * This run's output schema, instead of the agent's (`createAgent({ output })`): the outcome's
   * `output` is typed from it (docs/output.md).
   */
  output?: TOutput;
}

/** The keys of {@link RunOptions}. */
export const RUN_OPTION_KEYS: OptionKeys<RunOptions> = {
  tools: true,
  output: true,
};
