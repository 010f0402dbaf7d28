import { describe, expect, it } from "vitest";
import { createSessionMeter, shortCount, spentInLog, statusLine } from "../cli/status-line.js";
import type { AgentEvent, AssistantMessage } from "../index.js";

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
