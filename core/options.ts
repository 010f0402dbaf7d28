import type { AnyActorRef, Observer } from "xstate";
import type { ContextConfig } from "../context/config.js";
import type { Provider } from "../providers/provider.js";
import type { Tool, ToolResult } from "../tools/define-tool.js";
import type { AgentMessage, ImageContent, Message, TextContent, ToolCall, UserMessage } from "./messages.js";
import type { SnapshotMigration } from "./snapshot-version.js";

/** How the calls of one assistant message run. See DESIGN.md, "Tool execution". */
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
  /** Input + output + cache read + cache write tokens per run. */
  maxTokens?: number;
  /** Wall time per run; also fires mid-turn, ending the run as an abort does. */
  maxDurationMs?: number;
}

/** Backoff for transient provider failures (429, 5xx, overloaded, dropped connection). */
export interface RetryPolicy {
  /** Retries after the first attempt. Default 4. */
  maxRetries?: number;
  /** First delay; doubles each attempt. Default 1000 ms. */
  baseDelayMs?: number;
  /** Upper bound of one delay (a server's `retry-after` may ask for more, up to this). Default 60 000 ms. */
  maxDelayMs?: number;
  /** ± share of random jitter. Default 0.2. */
  jitter?: number;
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
  limits?: AgentLimits;
  /** Compaction budget; without it the context is never compacted. */
  context?: ContextConfig;
  /** Default timeout of every tool call; a tool's own `timeoutMs` wins. */
  toolTimeoutMs?: number;
  /** Start a call as soon as its arguments are complete in the stream, when the strategy allows. */
  eagerToolExecution?: boolean;
  /** An XState inspection observer (e.g. from `createStatelyInspector`). */
  inspect?: Observer<any> | ((event: any) => void);
  permissions?: PermissionChecker;
  retry?: RetryPolicy;
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
  /** An id for this agent (shown in the inspector, used as `childAgentId` for sub-agents). */
  id?: string;
}

/** What `prompt()` accepts. */
export type PromptInput = string | UserMessage | AgentMessage | AgentMessage[];
