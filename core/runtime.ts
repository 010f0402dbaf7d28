import type { AnyActorRef } from "xstate";

import type { Provider, ToolSpec } from "./provider.js";
import type { Tool, ToolResult } from "./tool.js";
import type { Workspace } from "./workspace.js";
import type { EffectJournal } from "./effect-journal.js";
import type { CacheRetentionPolicy } from "./prompt-cache.js";
import { type MessageIds, PROCESS_MESSAGE_IDS } from "./message-id.js";
import type { LlmMessagesReader } from "./llm-messages.js";
import type { AgentEvent } from "./events.js";
import type { AgentMessage, Message } from "./messages.js";
import type { AgentHooks, AgentOptions, PermissionChecker, RetryPolicy, StallTimeout } from "./options.js";

/**
 * Everything an agent's actors need that must not live in machine context: functions, the provider
 * (and with it the API key), the event bus. Machine definitions are shared by all agents; each
 * agent's root actor is bound to its own runtime, so persisted snapshots stay small, JSON-safe and
 * free of secrets.
 */
export interface AgentRuntime {
  /** The active agent's provider (it changes at a handoff). */
  provider: Provider;
  /** The agent's tools, plus the current run's (`prompt(input, { tools })`) while it runs. */
  tools: ReadonlyMap<string, Tool>;
  /** The active agent's own tools, without the run's (they change at a handoff). */
  baseTools: ReadonlyMap<string, Tool>;
  /** What the provider is told of `tools`. */
  toolSpecs: ToolSpec[];
  /** The active agent's system prompt (it changes at a handoff). */
  systemPrompt?: string;
  /** With `createAgent({ handoffs })`: every agent of the set by name, `"main"` first. */
  readonly agents?: ReadonlyMap<string, AgentProfile>;
  /** With handoffs: the name of the active agent. */
  activeAgent?: string;
  /** With handoffs: makes the named agent active (its provider, system prompt and tools). */
  activate?(name: string | undefined): void;
  readonly hooks: AgentHooks;
  readonly permissions?: PermissionChecker;
  readonly retry: Required<RetryPolicy>;
  /** The stream watchdog's limits; `undefined` when it is off. */
  readonly stallTimeout?: Required<StallTimeout>;
  readonly toolTimeoutMs?: number;
  /** Characters of text a tool result may keep (`Infinity`: no budget); a tool's own wins. */
  readonly toolResultMaxChars: number;
  /** Where cut results spill their full output (`read_file`'s workspace), if anywhere. */
  readonly spillWorkspace?: Workspace;
  readonly eagerToolExecution: boolean;
  /** The prompt cache lifetime a call asks for, from the tools it offers (`promptCache`). */
  readonly cacheRetention: CacheRetentionPolicy;
  readonly options: AgentOptions;
  readonly convertToLlm: (messages: readonly AgentMessage[]) => Message[];
  /**
   * `convertToLlm` for one request, incremental where it can be (see `createLlmMessages`); a
   * hibernating agent replaces it, so the converted transcript is not kept while it sleeps.
   */
  llmMessages: (transcript: readonly AgentMessage[]) => LlmMessagesReader;
  /** Publishes an event on `agent.events$`. */
  publish(event: AgentEvent): void;
  /** The root machine's current transcript (a plain array that may grow later: read it at once). */
  transcript(): readonly AgentMessage[];
  /** The clock of every timestamp the loop writes: `Date.now`, or the journal's. */
  now(): number;
  /** Set only for agents a durable engine runs: every effect goes through it. */
  readonly journal?: EffectJournal;
  /** Where the agent's messages get their ids (deterministic under a journal). */
  readonly messageIds: MessageIds;
  /**
   * The sub-agents running in this agent's calls now, by the id of the call that runs each: what
   * waits in them (approvals, client results) is listed and answered through this agent.
   */
  subAgents?: Map<string, NestedAgent>;
}

/** What an agent needs of a sub-agent to list and answer the calls waiting in it (an `Agent` is one). */
export interface NestedAgent {
  readonly id: string;
  pendingApprovals(): NestedPending[];
  pendingToolCalls(): NestedPending[];
  approve(toolCallId: string, options?: { args?: unknown }): void;
  deny(toolCallId: string, reason?: string): void;
  resolveToolCall(toolCallId: string, result: string | ToolResult): void;
  rejectToolCall(toolCallId: string, reason: string): void;
}

/** A call waiting in an agent (or, with `path`, in a sub-agent at any depth below it). */
export interface NestedPending {
  toolCallId: string;
  toolName: string;
  args: unknown;
  /** For a call in a sub-agent: the ids of the calls from this agent's down to it (its own last). */
  path?: string[];
  /** For a call in a sub-agent: the ids of the sub-agents from this agent's child down to the one it waits in. */
  agents?: string[];
}

/** One agent of a handoff set, as the runtime switches to it. */
export interface AgentProfile {
  readonly name: string;
  readonly provider: Provider;
  readonly systemPrompt?: string;
  /** Its tools, with the transfer tools to the agents it may hand to. */
  readonly tools: ReadonlyMap<string, Tool>;
}

const runtimes = new WeakMap<object, AgentRuntime>();

/** Binds an agent's root actor to its runtime; every actor below it finds the runtime through it. */
export function bindRuntime(agentActor: AnyActorRef, runtime: AgentRuntime): void {
  runtimes.set(agentActor, runtime);
}

/**
 * The runtime of the agent an actor belongs to: the nearest agent above it (or itself). A sub-agent
 * is an agent inside another agent's tree, so the nearest one is its own.
 */
export function runtimeOf(actor: AnyActorRef): AgentRuntime {
  const runtime = findRuntime(actor);
  if (!runtime) throw new Error("This actor is not part of an agent created by createAgent()");
  return runtime;
}

/**
 * The time for a timestamp an actor writes: its agent's clock (a durable agent's is its journal's),
 * or `Date.now()` for a machine run without an agent (pure `transition()` in tests).
 */
export function nowFor(actor: AnyActorRef): number {
  return findRuntime(actor)?.now() ?? Date.now();
}

/**
 * Where the messages an actor writes get their ids: its agent's {@link MessageIds}, or the
 * process's for a machine run without an agent.
 */
export function messageIdsFor(actor: AnyActorRef): MessageIds {
  return findRuntime(actor)?.messageIds ?? PROCESS_MESSAGE_IDS;
}

function findRuntime(actor: AnyActorRef): AgentRuntime | undefined {
  for (let current: unknown = actor; current; current = (current as { _parent?: unknown })._parent) {
    const runtime = runtimes.get(current as object);
    if (runtime) return runtime;
  }
  return undefined;
}

export const defaultRetryPolicy: Required<RetryPolicy> = {
  maxRetries: 4,
  maxConnectRetries: 0,
  baseDelayMs: 1000,
  maxDelayMs: 60_000,
  jitter: 0.2,
};

/**
 * Three minutes of silence, before the first event or between two: longer than reasoning models
 * think silently at high effort, far shorter than the forever a held socket would last.
 */
export const defaultStallTimeout: Required<StallTimeout> = {
  firstEventMs: 180_000,
  idleMs: 180_000,
};

/**
 * The agent actor an actor runs under (itself, or the nearest ancestor bound to a runtime): what
 * a tool reads its agent's context from (the sub-agent tool, for the budget it may spend).
 *
 * @example
 * ```ts
 * agentActorOf(ctx.actor)?.getSnapshot().context.spentUsd;
 * ```
 */
export function agentActorOf(actor: AnyActorRef): AnyActorRef | undefined {
  for (let current: unknown = actor; current; current = (current as { _parent?: unknown })._parent) {
    if (runtimes.has(current as object)) return current as AnyActorRef;
  }
  return undefined;
}
