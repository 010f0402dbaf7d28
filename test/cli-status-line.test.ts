import { describe, expect, it } from "vitest";
import { createSessionMeter, shortCount, spentInLog, statusLine } from "../cli/status-line.js";
import { z } from "zod";
import type { AgentEvent, AssistantMessage, ScriptedStep } from "../index.js";
import { createAgent, defineTool, scripted, summarizerFromProvider } from "../index.js";

const noop = defineTool({
  name: "noop",
  description: "does nothing",
  parameters: z.object({}),
  execute: async () => "done",
});

const answer = (input: number, output: number, cost = 0): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "ok" }],
  stopReason: "stop",
  usage: {
    input,
    output,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: input + output,
    ...(cost && { cost: { input: cost, output: 0, cacheRead: 0, cacheWrite: 0, total: cost } }),
  },
  timestamp: 0,
});
const end = (message: AssistantMessage, discarded = false): AgentEvent => ({
  type: "message_end",
  message,
  ...(discarded && { discarded }),
});

describe("the status line's session meter", () => {
  it("context is the last call's prompt plus answer, against the window; tokens and cost add up", () => {
    const meter = createSessionMeter({ maxContextTokens: 200_000 });
    meter.handle(end(answer(10_000, 500, 0.01)));
    meter.handle(end(answer(23_500, 500, 0.02)));
    expect(meter.contextTokens).toBe(24_000);
    expect(meter.totalTokens).toBe(34_500);
    expect(meter.cost).toBeCloseTo(0.03);
    expect(statusLine({ model: "m", meter, state: "running 2 tools", queued: 1 })).toBe(
      "m · context 12% of 200k · 34.5k tokens · $0.0300 · running 2 tools · 1 queued",
    );
  });

  it("shows the share of the current run's prompt read from the provider's cache, from the run's start", () => {
    const meter = createSessionMeter({ maxContextTokens: 200_000 });
    const cached = (input: number, cacheRead: number, cacheWrite: number): AssistantMessage => {
      const message = answer(input, 100);
      return {
        ...message,
        usage: { ...message.usage, cacheRead, cacheWrite, totalTokens: input + cacheRead + cacheWrite + 100 },
      };
    };
    meter.handle({ type: "agent_start" });
    meter.handle(end(cached(100, 0, 9_900)));
    meter.handle(end(cached(200, 9_900, 0)));
    // 9,900 of the run's 20,100 prompt tokens came from the cache.
    expect(meter.runCache).toEqual({ promptTokens: 20_100, readTokens: 9_900, writeTokens: 9_900 });
    expect(statusLine({ model: "m", meter, queued: 0 })).toBe(
      "m · context 5.1% of 200k · 20.3k tokens · cache 49%",
    );
    // A new run starts its own count; a provider that reports no cache shows none.
    meter.handle({ type: "agent_start" });
    meter.handle(end(answer(1_000, 100)));
    expect(statusLine({ model: "m", meter, queued: 0 })).not.toMatch(/cache/);
  });

  it("compaction and a learned window move the percentage; a retried attempt costs but is not the context", () => {
    const meter = createSessionMeter({ maxContextTokens: 1000 });
    meter.handle(end(answer(800, 100)));
    expect(statusLine({ model: "m", meter, state: "idle", queued: 0 })).toBe(
      "m · context 90% of 1k · 900 tokens · idle",
    );
    meter.handle({ type: "compaction", level: 1, tokensBefore: 900, tokensAfter: 300 });
    expect(meter.contextTokens).toBe(300);
    meter.handle(end(answer(5000, 0), true));
    expect(meter.contextTokens).toBe(300);
    expect(meter.totalTokens).toBe(5900);
    meter.handle({
      type: "context_window_learned",
      maxContextTokens: 600,
      previous: 1000,
      refusedTokens: 700,
    });
    expect(statusLine({ model: "m", meter, state: "idle", queued: 0 })).toContain("context 50% of 600");
  });

  it("short counts", () => {
    expect([950, 1000, 15_240, 200_000, 1_200_000].map(shortCount)).toEqual([
      "950",
      "1k",
      "15.2k",
      "200k",
      "1.2M",
    ]);
  });
});

describe("what a session spent, from its log", () => {
  it("sums every model call's tokens and cost, under any model, retried attempts included; skips other records", () => {
    const call = (totalTokens: number, total?: number, extra: object = {}) => ({
      type: "message_end",
      message: { role: "assistant", usage: { totalTokens, ...(total !== undefined && { cost: { total } }) } },
      ...extra,
    });
    const spent = spentInLog([
      { type: "message_end", message: { role: "user", content: "hi" } },
      call(100, 0.01),
      call(50, 0.005, { discarded: true }),
      { type: "session_resumed" },
      call(30),
      null,
      "torn",
    ]);
    expect(spent.tokens).toBe(180);
    expect(spent.cost).toBeCloseTo(0.015);
    const meter = createSessionMeter({ maxContextTokens: 1000 });
    meter.addSpent(spent);
    expect(meter.totalTokens).toBe(180);
  });
});

// `/cost` after `/compact`: the summary call is a model call the session pays for.
describe("the summary call of a compaction in the session's totals", () => {
  it("counts what summarizerFromProvider's call used, live and from the log after a resume", async () => {
    const provider = scripted((request): ScriptedStep =>
      request.tools.length === 0
        ? { text: "SUMMARY: talked.", usage: { input: 5_000, output: 300 } }
        : { text: "ok", usage: { input: 1_000, output: 100 } },
    );
    const agent = createAgent({
      provider,
      tools: [noop],
      context: {
        maxContextTokens: 100_000,
        keepFirst: 1,
        keepRecent: 2,
        summarizer: summarizerFromProvider(provider),
      },
    });
    const meter = createSessionMeter({ maxContextTokens: 100_000 });
    const log: unknown[] = [];
    agent.events$.subscribe((event) => {
      meter.handle(event);
      if (event.type !== "message_update") log.push(JSON.parse(JSON.stringify(event)));
    });
    for (const text of ["one", "two", "three", "four"]) await agent.prompt(`${text} `.repeat(400));
    expect(meter.totalTokens).toBe(4 * 1_100);

    const result = await agent.compact();
    expect(result?.level).toBe(2);
    expect(meter.totalTokens).toBe(4 * 1_100 + 5_300);
    // A resumed session's totals go on from its log, the summary call included.
    expect(spentInLog(log).tokens).toBe(4 * 1_100 + 5_300);
  });

  it("counts a compaction's summary cost, and a summarizer answering plain text still compacts", async () => {
    const cost = { input: 0.01, output: 0.002, cacheRead: 0, cacheWrite: 0, total: 0.012 };
    const summaryUsage = { input: 500, output: 50, cacheRead: 0, cacheWrite: 0, totalTokens: 550, cost };
    const meter = createSessionMeter({ maxContextTokens: 1000 });
    const event: AgentEvent = {
      type: "compaction",
      level: 2,
      tokensBefore: 900,
      tokensAfter: 300,
      summaryUsage,
    };
    meter.handle(event);
    expect(meter.totalTokens).toBe(550);
    expect(meter.cost).toBeCloseTo(0.012);
    expect(spentInLog([event])).toEqual({ tokens: 550, cost: 0.012 });

    const agent = createAgent({
      provider: scripted(() => ({ text: "ok" })),
      tools: [noop],
      context: {
        maxContextTokens: 100_000,
        keepFirst: 1,
        keepRecent: 2,
        summarizer: async () => "plain summary",
      },
    });
    for (const text of ["one", "two", "three", "four"]) await agent.prompt(`${text} `.repeat(400));
    const result = await agent.compact();
    expect(result?.level).toBe(2);
    expect(result?.summaryUsage).toBeUndefined();
    expect(JSON.stringify(agent.messages)).toContain("plain summary");
  });
});
