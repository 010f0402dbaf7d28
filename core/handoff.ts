// Handoffs as types: the agents a conversation can be handed to, and what a transfer records.
// Making them (`defineHandoff`) and the transfer tools are the agent floor's (agent/handoff.ts).
import type { ContextFilter } from "./context-filter.js";
import type { AgentMessage } from "./messages.js";
import type { Provider } from "./provider.js";
import type { Tool } from "./tool.js";

/** The name the agent made by `createAgent` answers to in handoffs (a target hands back to it). */
export const MAIN_AGENT = "main";

/** Handoffs in a row (with no user message between them) before a transfer is refused. */
export const DEFAULT_MAX_HANDOFFS = 5;

/** Options of `defineHandoff`: an agent the conversation can be handed to. */
export interface HandoffAgentOptions {
  /** Its name (letters, digits, `_`, `-`): the model hands off with `transfer_to_<name>`. Not `"main"`. */
  name: string;
  /** What the model that may hand off reads to decide when to. */
  description: string;
  /** Its system prompt (the model sees only the active agent's). */
  systemPrompt?: string;
  /** Its tools (the transfer tools to the agents it may hand to are added). */
  tools?: Tool[];
  /** Its model; default: the main agent's provider. */
  provider?: Provider;
  /**
   * The agents it may hand the conversation to, by name (`"main"`: the agent made by `createAgent`).
   * Default: every other agent of the set.
   */
  handoffs?: string[];
  /**
   * What of the transcript crosses when the conversation is handed to it. Default `"all"`. What the
   * filter removed is recorded (the `handoff` event, and the transfer result's `details.handoff`).
   */
  context?: ContextFilter;
}

/** An agent the conversation can be handed to (made by `defineHandoff`). */
export interface HandoffAgent extends Readonly<HandoffAgentOptions> {
  readonly kind: "handoff";
}

/** What a transfer's result records in `details.handoff` (and the `handoff` event reports). */
export interface HandoffRecord {
  from: string;
  to: string;
  /** Messages before the transfer, and how many of them crossed (with what the filter added). */
  before: number;
  after: number;
  /** Ids of the messages the context filter removed. */
  removedIds: string[];
  /** Messages the filter wrote (a summary), placed first. */
  added: AgentMessage[];
}
