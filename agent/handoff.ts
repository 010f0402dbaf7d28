// Handoffs: an agent hands the conversation to another (`createAgent({ handoffs: [billing] })`).
// The model hands off by calling a `transfer_to_<name>` tool; its execute works out what crosses
// (the target's context filter, async: a summary is a model call) and records it in the result's
// details, so the result is journaled like any other. The agent machine then passes through
// `running.handingOff`, which makes the target active (its system prompt, tools and provider) and
// rewrites the transcript to what crossed. The active agent's name is machine context, so a snapshot
// restores with the right agent active.
import * as z from "zod";
import type { AgentMessage } from "../core/messages.js";
import { lazy } from "../core/lazy.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import type { Provider } from "../core/provider.js";
import { type AgentProfile, runtimeOf } from "../core/runtime.js";
import { defineTool, errorResult, type Tool, type ToolResult } from "../tools/define-tool.js";
import { checkContextFilter, filterContext } from "./context-filter.js";
import {
  DEFAULT_MAX_HANDOFFS,
  type HandoffAgent,
  type HandoffAgentOptions,
  type HandoffRecord,
  MAIN_AGENT,
} from "../core/handoff.js";
import { handoffIn } from "../rules/handoff.logic.js";

export type { HandoffAgent, HandoffAgentOptions, HandoffRecord } from "../core/handoff.js";
export { DEFAULT_MAX_HANDOFFS, MAIN_AGENT } from "../core/handoff.js";

const HANDOFF_KEYS: OptionKeys<HandoffAgentOptions> = {
  name: true,
  description: true,
  systemPrompt: true,
  tools: true,
  provider: true,
  handoffs: true,
  context: true,
};

/**
 * An agent the conversation can be handed to: give it to `createAgent({ handoffs: [...] })`. The
 * active agent's model gets a `transfer_to_<name>` tool per agent it may hand to; calling one makes
 * that agent active from the next turn (its system prompt, tools and model), with the transcript its
 * `context` filter lets through.
 *
 * @example
 * ```ts
 * const billing = defineHandoff({
 *   name: "billing",
 *   description: "Refunds, invoices and charges",
 *   systemPrompt: "You handle billing.",
 *   tools: [refund],
 *   context: { lastTurns: 2 },
 * });
 * const agent = createAgent({ provider, systemPrompt: "You triage.", handoffs: [billing] });
 * ```
 */
export function defineHandoff(options: HandoffAgentOptions): HandoffAgent {
  if (options === null || typeof options !== "object") {
    throw new TypeError("defineHandoff: options must be an object");
  }
  checkOptionKeys("defineHandoff", options, HANDOFF_KEYS);
  if (typeof options.name !== "string" || !/^[a-zA-Z0-9_-]{1,48}$/.test(options.name)) {
    throw new TypeError(
      `defineHandoff: name must be 1-48 letters, digits, "_" or "-", got ${JSON.stringify(options.name)}`,
    );
  }
  if (options.name === MAIN_AGENT) {
    throw new TypeError(`defineHandoff: "${MAIN_AGENT}" is the name of the agent createAgent makes`);
  }
  if (typeof options.description !== "string" || options.description.trim() === "") {
    throw new TypeError(`defineHandoff "${options.name}": description must be a non-empty string`);
  }
  if (
    options.handoffs !== undefined &&
    !(Array.isArray(options.handoffs) && options.handoffs.every((n) => typeof n === "string"))
  ) {
    throw new TypeError(`defineHandoff "${options.name}": handoffs must be an array of agent names`);
  }
  checkContextFilter(`defineHandoff "${options.name}" context`, options.context);
  return Object.freeze({ ...options, kind: "handoff" as const });
}

/**
 * The profiles of every agent of a handoff set (the main one first), each with its tools and the
 * transfer tools to the agents it may hand to. Throws a `TypeError` for a handoff to an unknown
 * agent, two agents of one name, or a transfer tool named like one of the agent's own tools.
 *
 * @example
 * ```ts
 * const agents = handoffProfiles({ provider, systemPrompt, tools }, [billing]);
 * agents.get("main")!.tools.has("transfer_to_billing"); // true
 * ```
 */
export function handoffProfiles(
  main: { provider: Provider; systemPrompt?: string; tools: ReadonlyMap<string, Tool> },
  handoffs: readonly HandoffAgent[],
): Map<string, AgentProfile> {
  if (!Array.isArray(handoffs))
    throw new TypeError("createAgent: handoffs must be an array of defineHandoff(...) agents");
  const byName = new Map<string, HandoffAgent>();
  for (const agent of handoffs as unknown[]) {
    const candidate = agent as HandoffAgent | null;
    if (candidate === null || typeof candidate !== "object" || candidate.kind !== "handoff") {
      throw new TypeError("createAgent: each of handoffs must be made by defineHandoff(...)");
    }
    if (byName.has(candidate.name))
      throw new TypeError(`createAgent: two handoff agents are named "${candidate.name}"`);
    byName.set(candidate.name, candidate);
  }
  const names = [MAIN_AGENT, ...byName.keys()];
  const transfers = new Map([...byName.values()].map((target) => [target.name, transferTool(target)]));
  const profiles = new Map<string, AgentProfile>();
  const profile = (
    name: string,
    provider: Provider,
    systemPrompt: string | undefined,
    own: Iterable<Tool>,
    targets: readonly string[],
  ) => {
    const tools = new Map<string, Tool>();
    for (const tool of own) {
      if (tools.has(tool.name))
        throw new Error(`Two tools of handoff agent "${name}" are named "${tool.name}"`);
      tools.set(tool.name, tool);
    }
    for (const target of targets) {
      if (target === name) continue;
      if (!names.includes(target)) {
        throw new TypeError(
          `createAgent handoffs: agent "${name}" hands off to unknown agent "${target}" (the agents are ${names.map((n) => `"${n}"`).join(", ")})`,
        );
      }
      const transfer = transfers.get(target) ?? backToMain();
      if (tools.has(transfer.name)) {
        throw new TypeError(
          `createAgent handoffs: agent "${name}" has a tool named "${transfer.name}" already`,
        );
      }
      tools.set(transfer.name, transfer);
    }
    profiles.set(name, { name, provider, ...(systemPrompt !== undefined && { systemPrompt }), tools });
  };
  profile(MAIN_AGENT, main.provider, main.systemPrompt, main.tools.values(), [...byName.keys()]);
  for (const agent of byName.values()) {
    const targets = agent.handoffs ?? names.filter((n) => n !== agent.name);
    profile(agent.name, agent.provider ?? main.provider, agent.systemPrompt, agent.tools ?? [], targets);
  }
  return profiles;
}

const noArgs = /* @__PURE__ */ lazy(() => z.object({}));

const backToMain = /* @__PURE__ */ lazy(() =>
  transferTool({
    name: MAIN_AGENT,
    description: "the agent the conversation started with",
  }),
);

/** The tool that hands the conversation to `target`. */
function transferTool(
  target: Pick<HandoffAgentOptions, "name" | "description" | "context" | "provider">,
): Tool {
  return defineTool({
    name: `transfer_to_${target.name}`,
    description: `Hand the conversation to the agent "${target.name}": ${target.description}. It answers from the next turn on.`,
    parameters: noArgs(),
    readOnly: true,
    async execute(_args, ctx): Promise<ToolResult> {
      const runtime = ctx.actor ? runtimeOf(ctx.actor) : undefined;
      if (!runtime?.agents)
        return errorResult("Handoffs work only inside an agent made with createAgent({ handoffs })");
      const from = runtime.activeAgent ?? MAIN_AGENT;
      const transcript = runtime.transcript();
      // The last message with the call: two models of a set may have used the same call ids.
      let at = transcript.length - 1;
      while (at >= 0 && !callsIn(transcript[at]!).includes(ctx.toolCallId)) at--;
      const before = at === -1 ? [...transcript] : transcript.slice(0, at);
      const max = runtime.options.limits?.maxHandoffs ?? DEFAULT_MAX_HANDOFFS;
      const inARow = handoffsSinceUser(before);
      if (inARow >= max) {
        return errorResult(
          `Handoff to "${target.name}" refused: ${inARow} handoffs since the user's last message (limits.maxHandoffs is ${max}). Answer the user yourself.`,
        );
      }
      const filtered = await filterContext(target.context, before, {
        provider: target.provider ?? runtime.agents.get(target.name)?.provider ?? runtime.provider,
        signal: ctx.signal,
      });
      const handoff: HandoffRecord = {
        from,
        to: target.name,
        before: before.length,
        after: filtered.messages.length,
        removedIds: filtered.removedIds,
        added: filtered.added,
      };
      return { content: [{ type: "text", text: `Transferred to ${target.name}.` }], details: { handoff } };
    },
  }) as Tool;
}

/** Successful transfers since the last user message: the loop guard's count. */
function handoffsSinceUser(messages: readonly AgentMessage[]): number {
  let count = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user") break;
    if (m.role === "toolResult" && handoffIn([m])) count++;
  }
  return count;
}

function callsIn(message: AgentMessage): string[] {
  return message.role === "assistant"
    ? message.content.flatMap((p) => (p.type === "toolCall" ? [p.id] : []))
    : [];
}
