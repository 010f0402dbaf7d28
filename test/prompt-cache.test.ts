// Issue 42 item 4: which cache lifetime each call asks for (the policy and its defaults), how a
// 1-hour write is priced and reserved, and the run's cache report. The wire of each vendor is
// test/prompt-cache-wire.slow.test.ts.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  anthropic,
  type AssistantMessage,
  callCostModel,
  createAgent,
  defineClientTool,
  defineTool,
  type ProviderRequest,
  promptCacheReport,
  scripted,
  withCost,
} from "../index.js";
import { createCacheRetention, pausesAfter } from "../core/prompt-cache.js";
import type { Tool } from "../core/tool.js";

const plain = defineTool({
  name: "read",
  description: "Reads",
  parameters: z.object({}),
  execute: async () => "text",
});
const guarded = defineTool({
  name: "deploy",
  description: "Deploys",
  parameters: z.object({}),
  needsApproval: true,
  execute: async () => "deployed",
});
const onClient = defineClientTool({
  name: "pick_color",
  description: "Asks the user",
  parameters: z.object({}),
});
const tools = (...list: Tool[]) => new Map(list.map((tool) => [tool.name, tool]));

describe("the cache lifetime policy", () => {
  it("auto: long only when a wait longer than 5 minutes may follow the call", () => {
    const auto = createCacheRetention();
    expect(auto(tools(plain), false)).toBe("short");
    expect(auto(tools(plain, guarded), false)).toBe("long");
    // A client-run tool is expected back within a minute.
    expect(auto(tools(onClient), false)).toBe("short");
    // The answer at a limit runs no tool: no approval can follow it.
    expect(auto(tools(guarded), true)).toBe("short");
    // A permission checker may ask, so every call may wait for an approval.
    expect(createCacheRetention({}, { permissions: {} })(tools(plain), false)).toBe("long");
    // Hibernation is a memory policy: it does not make every call pay the long lifetime's writes.
    expect(createCacheRetention({}, { hibernate: "whenIdle" })(tools(), true)).toBe("short");
    // An app that expects its users back after 30 minutes says so.
    expect(createCacheRetention({ expectedPauseMs: { idle: 30 * 60_000 } })(tools(), true)).toBe("long");
  });

  it("the expected pauses and the choice are the user's", () => {
    const quickApprovals = createCacheRetention({
      expectedPauseMs: { approval: 2 * 60_000, clientTool: 3_600_000 },
    });
    expect(quickApprovals(tools(guarded), false)).toBe("short");
    expect(quickApprovals(tools(onClient), false)).toBe("long");
    expect(createCacheRetention({ retention: "long" })(tools(), true)).toBe("long");
    expect(createCacheRetention({ retention: "short" })(tools(guarded), false)).toBe("short");
    const seen: unknown[] = [];
    const own = createCacheRetention({
      retention: (call) => {
        seen.push(call);
        return "long";
      },
    });
    expect(own(tools(guarded, onClient), false)).toBe("long");
    expect(seen).toEqual([{ pauses: ["approval", "clientTool", "idle"], expectedPauseMs: 10 * 60_000 }]);
    expect(pausesAfter(tools(plain), false)).toEqual(["idle"]);
  });

  it("a policy function that answers something else is a clear error", () => {
    const bad = createCacheRetention({ retention: () => "forever" as never });
    expect(() => bad(tools(), false)).toThrow(
      /promptCache.retention returned "forever", not "short" or "long"/,
    );
  });

  it("createAgent refuses options it cannot use, naming them", () => {
    const provider = scripted([{ text: "hi" }]);
    expect(() => createAgent({ provider, promptCache: { retention: "1h" as never } })).toThrow(
      /promptCache.retention/,
    );
    expect(() => createAgent({ provider, promptCache: { expectedPauseMs: { approval: -1 } } })).toThrow(
      /promptCache.expectedPauseMs.approval/,
    );
    expect(() => createAgent({ provider, promptCache: { expectedPauseMs: { lunch: 1 } as never } })).toThrow(
      /lunch/,
    );
    expect(() => createAgent({ provider, promptCache: { ttl: "1h" } as never })).toThrow(/ttl/);
  });

  it("the agent's requests carry the choice: long while an approval tool is offered", async () => {
    const provider = scripted([{ text: "a" }, { text: "b" }]);
    const agent = createAgent({ provider, tools: [plain] });
    await agent.prompt("one");
    await agent.prompt("two", { tools: [guarded] });
    expect(provider.requests.map((r: ProviderRequest) => r.cacheRetention)).toEqual([undefined, "long"]);
  });
});

describe("the price of the long lifetime", () => {
  it("1-hour writes cost 2× input on Claude, 5-minute ones 1.25×", () => {
    const usage = {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 1_000_000,
      cacheWriteLong: 400_000,
      totalTokens: 1_000_000,
    };
    // claude-sonnet-4-5: $3 input, $3.75 per 5-minute write, $6 per 1-hour write (per million).
    expect(withCost(usage, "claude-sonnet-4-5").cost!.cacheWrite).toBeCloseTo(0.6 * 3.75 + 0.4 * 6, 9);
    const { cacheWriteLong: _, ...short } = usage;
    expect(withCost(short, "claude-sonnet-4-5").cost!.cacheWrite).toBeCloseTo(3.75, 9);
  });

  it("the budget reserves a prompt at the dearest write: the 1-hour one", () => {
    const model = callCostModel(anthropic({ model: "claude-sonnet-4-5", apiKey: "k" }), 0);
    expect(model.promptUsdPerToken).toBeCloseTo(6 / 1e6, 15);
  });
});

describe("the run's cache report", () => {
  const call = (usage: Partial<AssistantMessage["usage"]>): AssistantMessage => ({
    role: "assistant",
    content: [{ type: "text", text: "ok" }],
    stopReason: "stop",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, ...usage },
    timestamp: 0,
  });

  it("counts calls, hits and tokens; none reported: no report", () => {
    expect(
      promptCacheReport([
        { role: "user", content: "hi", timestamp: 0 },
        call({ input: 50, cacheWrite: 950, cacheWriteLong: 950 }),
        call({ input: 100, cacheRead: 950 }),
      ]),
    ).toEqual({
      calls: 2,
      hits: 1,
      readTokens: 950,
      writeTokens: 950,
      writeLongTokens: 950,
      hitRatio: 950 / 2050,
    });
    expect(promptCacheReport([call({ input: 100 })])).toBeUndefined();
  });

  it("a run's outcome carries it", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "c1", name: "read", arguments: {} }], usage: { input: 10, cacheWrite: 500 } },
        { text: "done", usage: { input: 20, cacheRead: 500 } },
      ]),
      tools: [plain],
    });
    const outcome = await agent.prompt("go");
    expect(outcome.cache).toMatchObject({ calls: 2, hits: 1, readTokens: 500, writeTokens: 500 });
  });
});
