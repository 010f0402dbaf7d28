import type { AnyActorRef } from "xstate";
import { agentActorOf } from "../core/runtime.js";
import type { AgentContext } from "../machines/agent/context.js";
import { spendOf } from "../machines/agent/guards.js";
import { readTranscript } from "../rules/transcript.js";
import { treeTokens } from "../rules/limit-answer.logic.js";

/** What a sub-agent may spend, by parent agent actor: the shares of the children not yet counted. */
const holds = new WeakMap<AnyActorRef, Map<string, number>>();

/** A sub-agent's share of its parent's budget (see {@link reserveSubAgentBudget}). */
export interface SubAgentBudget {
  /** The most the child may spend (its `maxCostUsd`), in USD; 0 or less: it must not start. */
  readonly maxUsd: number;
  /** What the parent could spare before this child's share, and what it keeps for its next call. */
  readonly leftUsd: number;
  readonly keptUsd: number;
  /** Replaces the share by what the child spent, once it ended (until the parent counts its result). */
  settle(spentUsd: number): void;
}

/**
 * Reserves a sub-agent's worst case before it starts: the budget its parent (the agent running
 * `actor`) has left, per run and per session, less the worst case of the parent's own next call
 * (so it can answer after its sub-agents) and less the shares of sibling sub-agents whose results
 * the parent has not counted yet. The child runs with this as its `maxCostUsd`, so it cannot spend
 * more. `undefined` when the parent has no cost limit (or the tool runs outside an agent).
 *
 * @example
 * ```ts
 * const budget = reserveSubAgentBudget(ctx.actor, ctx.toolCallId);
 * if (budget && budget.maxUsd <= 0) throw new Error("no budget left for a sub-agent");
 * ```
 */
export function reserveSubAgentBudget(
  actor: AnyActorRef | undefined,
  toolCallId: string,
): SubAgentBudget | undefined {
  const parent = actor && agentActorOf(actor);
  const context = parent?.getSnapshot()?.context as AgentContext | undefined;
  if (!parent || !context?.costModel) return undefined;
  const { limits } = context;
  const spend = spendOf(context, context.costModel);
  const runLeft = limits.maxCostUsd === undefined ? Infinity : limits.maxCostUsd - spend.runUsd;
  const sessionLeft =
    limits.maxSessionCostUsd === undefined ? Infinity : limits.maxSessionCostUsd - spend.sessionUsd;
  const keptUsd = spend.nextCallUsd();
  const shares = sharesOf(parent, context);
  let others = 0;
  for (const usd of shares.values()) others += usd;
  const leftUsd = Math.min(runLeft, sessionLeft) - others;
  const maxUsd = leftUsd - keptUsd;
  if (maxUsd > 0) shares.set(toolCallId, maxUsd);
  return {
    maxUsd,
    leftUsd,
    keptUsd,
    settle(spentUsd) {
      if (shares.has(toolCallId)) shares.set(toolCallId, spentUsd);
    },
  };
}

/**
 * The tokens the run of the agent running `actor` has left under its `maxTokens` (its own calls and
 * its sub-agents' counted so far): what a sub-agent it starts may use at most. `undefined` without a
 * token limit (or outside an agent).
 *
 * @example
 * ```ts
 * const left = tokensLeftOf(ctx.actor); // e.g. 12_000 of a 50_000 maxTokens
 * ```
 */
export function tokensLeftOf(actor: AnyActorRef | undefined): number | undefined {
  const parent = actor && agentActorOf(actor);
  const context = parent?.getSnapshot()?.context as AgentContext | undefined;
  const max = context?.limits.maxTokens;
  if (max === undefined) return undefined;
  return max - treeTokens(context!.run);
}

/** The parent's shares still to count: those whose results reached its transcript are dropped. */
function sharesOf(parent: AnyActorRef, context: AgentContext): Map<string, number> {
  let shares = holds.get(parent);
  if (!shares) holds.set(parent, (shares = new Map()));
  if (shares.size === 0) return shares;
  const counted = new Set<string>();
  for (const message of readTranscript(context.messages)) {
    if (message.role === "toolResult" && shares.has(message.toolCallId)) counted.add(message.toolCallId);
  }
  for (const id of counted) shares.delete(id);
  return shares;
}
