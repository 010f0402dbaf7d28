import { reportedPromptTokens } from "../context/tokens.js";
import type { AgentEvent } from "../core/events.js";
import type { Usage } from "../core/messages.js";

/** What the status line counts over a session. */
export interface SessionMeter {
  /** Takes every event of the agent (cheap on `message_update`: it returns at once). */
  handle(event: AgentEvent): void;
  /** Tokens the context holds now, as the provider last reported them or compaction left them. */
  readonly contextTokens: number;
  /** The window the context is measured against (a learned smaller window replaces it); 0: unknown. */
  readonly maxContextTokens: number;
  /** Sets the context's size (a resumed session's transcript, estimated). */
  setContextTokens(tokens: number): void;
  /** Adds what the session spent before this process ({@link spentInLog} of a resumed session). */
  addSpent(spent: SessionSpend): void;
  /** Tokens of every model call of the session, retried attempts included (they were paid for). */
  readonly totalTokens: number;
  /** Dollars of every model call of the session, when the provider prices them. */
  readonly cost: number;
  /**
   * The current (or last) run's prompt cache: prompt tokens its calls sent, and how many of them
   * were read from the cache and written to it.
   */
  readonly runCache: { promptTokens: number; readTokens: number; writeTokens: number };
}

/**
 * Counts a session for the status line: the context against its window, tokens and cost.
 *
 * @example
 * ```ts
 * const meter = createSessionMeter({ maxContextTokens: 200_000 });
 * agent.events$.subscribe((event) => meter.handle(event));
 * ```
 */
export function createSessionMeter(options: {
  maxContextTokens: number;
  contextTokens?: number;
  /** What the session spent before this process (a resumed session's earlier calls, any model). */
  spent?: SessionSpend;
}): SessionMeter {
  let contextTokens = options.contextTokens ?? 0;
  let maxContextTokens = options.maxContextTokens;
  let totalTokens = options.spent?.tokens ?? 0;
  let cost = options.spent?.cost ?? 0;
  let runCache = { promptTokens: 0, readTokens: 0, writeTokens: 0 };
  return {
    handle(event) {
      switch (event.type) {
        case "agent_start":
          runCache = { promptTokens: 0, readTokens: 0, writeTokens: 0 };
          return;
        case "message_end": {
          const { message } = event;
          if (message.role !== "assistant") return;
          totalTokens += message.usage.totalTokens;
          cost += message.usage.cost?.total ?? 0;
          runCache.promptTokens += reportedPromptTokens(message.usage);
          runCache.readTokens += message.usage.cacheRead;
          runCache.writeTokens += message.usage.cacheWrite;
          const prompt = reportedPromptTokens(message.usage);
          if (!event.discarded && prompt > 0) contextTokens = prompt + message.usage.output;
          return;
        }
        case "compaction":
          contextTokens = event.tokensAfter;
          // The summary call of `/compact` (or of an automatic compaction) is paid for too.
          totalTokens += event.summaryUsage?.totalTokens ?? 0;
          cost += event.summaryUsage?.cost?.total ?? 0;
          return;
        case "context_window_learned":
          maxContextTokens = event.maxContextTokens;
          return;
      }
    },
    get contextTokens() {
      return contextTokens;
    },
    setContextTokens(tokens) {
      contextTokens = tokens;
    },
    addSpent(spent) {
      totalTokens += spent.tokens;
      cost += spent.cost;
    },
    get maxContextTokens() {
      return maxContextTokens;
    },
    get totalTokens() {
      return totalTokens;
    },
    get cost() {
      return cost;
    },
    get runCache() {
      return runCache;
    },
  };
}

/** Tokens and dollars a session's model calls used. */
export interface SessionSpend {
  tokens: number;
  cost: number;
}

/**
 * What a session spent, from its event log: every model call's usage (retried attempts included,
 * under every model it ran on, across every resume), so a resumed session's totals go on from
 * where they were rather than from 0; a compaction's summary calls (`summaryUsage`) count too.
 * Other records are skipped.
 *
 * @example
 * ```ts
 * createSessionMeter({ maxContextTokens, spent: spentInLog(session.loadEvents()) });
 * ```
 */
export function spentInLog(events: readonly unknown[]): SessionSpend {
  let tokens = 0;
  let cost = 0;
  for (const record of events) {
    const event = record as {
      type?: unknown;
      message?: { role?: unknown; usage?: Partial<Usage> };
      summaryUsage?: Partial<Usage>;
    };
    // A compaction's summary calls count as much as the turns' calls.
    const usage =
      event?.type === "compaction"
        ? event.summaryUsage
        : event?.type === "message_end" && event.message?.role === "assistant"
          ? event.message.usage
          : undefined;
    if (typeof usage?.totalTokens === "number") tokens += usage.totalTokens;
    if (typeof usage?.cost?.total === "number") cost += usage.cost.total;
  }
  return { tokens, cost };
}

/** `950`, `15.2k`, `200k`, `1.2M`. */
export function shortCount(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 100_000 ? 1 : 0).replace(/\.0$/, "")}k`;
  return `${(n / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/**
 * The status line under the input: model, context used against the window, the session's tokens
 * and cost, the share of the run's prompt read from the provider's cache (once a call reported
 * a cache read or write), what the agent does now, and the messages queued for it.
 *
 * @example
 * ```ts
 * statusLine({ model: "claude-sonnet-4-5", meter, state: "running 2 tools", queued: 1 });
 * // "claude-sonnet-4-5 · context 12% of 200k · 15.2k tokens · $0.0123 · cache 87% · running 2 tools · 1 queued"
 * ```
 */
export function statusLine(input: {
  model: string;
  meter: SessionMeter;
  /** What the agent does now; left out when the line follows the spinner's, which says it. */
  state?: string;
  queued: number;
}): string {
  const { meter } = input;
  const share = (meter.contextTokens / meter.maxContextTokens) * 100;
  // One decimal while it is small: a session's first turns must show it moving.
  const percent = share < 10 ? share.toFixed(1).replace(/\.0$/, "") : String(Math.round(share));
  const parts = [
    input.model,
    meter.maxContextTokens > 0
      ? `context ${percent}% of ${shortCount(meter.maxContextTokens)}`
      : `context ${shortCount(meter.contextTokens)} tokens`,
    `${shortCount(meter.totalTokens)} tokens`,
  ];
  if (meter.cost > 0) parts.push(`$${meter.cost.toFixed(4)}`);
  const cache = meter.runCache;
  if (cache.readTokens + cache.writeTokens > 0 && cache.promptTokens > 0) {
    parts.push(`cache ${Math.round((cache.readTokens / cache.promptTokens) * 100)}%`);
  }
  if (input.state !== undefined) parts.push(input.state);
  if (input.queued > 0) parts.push(`${input.queued} queued`);
  return parts.join(" · ");
}

/**
 * The `/cost` answer: the session's tokens and cost, and the context now.
 *
 * @example
 * ```ts
 * costText(meter); // "This session: 34,500 tokens · $0.0300 · context 24,000 tokens (12% of 200k)"
 * ```
 */
export function costText(meter: SessionMeter): string {
  const share =
    meter.maxContextTokens > 0
      ? ` (${Math.round((meter.contextTokens / meter.maxContextTokens) * 100)}% of ${shortCount(meter.maxContextTokens)})`
      : "";
  const cost = meter.cost > 0 ? `$${meter.cost.toFixed(4)}` : "no cost reported by the provider";
  return `This session: ${meter.totalTokens.toLocaleString("en-US")} tokens · ${cost} · context ${meter.contextTokens.toLocaleString("en-US")} tokens${share}`;
}
