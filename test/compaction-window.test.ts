import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineTool,
  learnContextWindow,
  parseContextOverflow,
  scripted,
} from "../index.js";
import { modelTokens, runWindowSession } from "./fixtures/window-session.js";
import { expectEventInvariants } from "./helpers.js";

// A provider whose real window is smaller than the configured budget (a wrong
// contextConfigForModel, a proxy in front of a smaller model). Before the agent learned the window,
// a 300-turn session of bench/context-window.ts met 21 overflow errors, and every compaction after
// the second dropped the middle; now it meets one.

describe("the agent learns the real context window from an overflow", () => {
  it.each([true, false])(
    "a long session overflows once, then never again; levels are chosen by what fits (error states sizes: %s)",
    async (statesSizes) => {
      const figures = await runWindowSession({
        turns: 150,
        configured: 32_000,
        realWindow: 12_000,
        statesSizes,
      });
      expect(figures.turns).toBe(150);
      expect(figures.reason).toBe("stop");
      expect(figures.overflows).toBe(1);
      expect(figures.learned).toHaveLength(1);
      expect(figures.learned[0]).toBeLessThan(12_000);
      // Summaries every time, never the middle thrown away for good.
      expect(figures.compactionsByLevel[3]).toBe(0);
      expect(figures.compactionsByLevel[2]).toBeGreaterThan(5);
    },
  );

  it("says so with an event, and keeps the learned window in the snapshot for a restored agent", async () => {
    const WINDOW = 3_000;
    const read = defineTool({
      name: "read",
      description: "Reads a file",
      parameters: z.object({ path: z.string() }),
      readOnly: true,
      execute: ({ path }) => `${path}: ${"0123456789 ".repeat(60)}`,
    });
    let overflows = 0;
    const model = (turns: number) => {
      let answered = 0;
      return scripted((request) => {
        const tokens = modelTokens(request);
        if (tokens > WINDOW) {
          overflows++;
          return {
            error: {
              kind: "context_overflow",
              message: `prompt is too long: ${tokens} tokens > ${WINDOW} maximum`,
            },
          };
        }
        answered++;
        const usage = { input: tokens, output: 10 };
        if (answered >= turns) return { text: "Done.", usage };
        return { toolCalls: [{ name: "read", arguments: { path: `f${answered}` } }], usage };
      });
    };
    const options = { tools: [read], context: { maxContextTokens: 10_000 } };
    const first = createAgent({ ...options, provider: model(20) });
    const events: AgentEvent[] = [];
    first.events$.subscribe((event) => events.push(event));
    await first.prompt("read the files");
    expect(overflows).toBe(1);
    const learned = events.filter((e) => e.type === "context_window_learned");
    expect(learned).toHaveLength(1);
    // The error stated 3,000 of its tokens: the window becomes that (in our estimate), less 5 %.
    expect(learned[0]).toMatchObject({ previous: 10_000, providerMaximum: WINDOW });
    expect(learned[0]!.maxContextTokens).toBeLessThanOrEqual(Math.floor(0.95 * WINDOW));
    // Announced before the compaction that uses it, after the refused attempt.
    const order = events
      .map((e) => e.type)
      .filter((t) => t === "context_window_learned" || t === "compaction");
    expect(order[0]).toBe("context_window_learned");
    expectEventInvariants(events);

    const snapshot = first.getPersistedSnapshot() as { context: { learnedMaxContextTokens?: number } };
    expect(snapshot.context.learnedMaxContextTokens).toBe(learned[0]!.maxContextTokens);
    first.stop();

    overflows = 0;
    const restored = createAgent({ ...options, provider: model(20), snapshot });
    await restored.prompt("and twenty more");
    expect(overflows).toBe(0);
    restored.stop();
  });

  it("an agent configured without a budget learns one from its first overflow and compacts from then on", async () => {
    const figures = await (async () => {
      let overflows = 0;
      let answered = 0;
      const provider = scripted((request) => {
        const tokens = modelTokens(request);
        if (tokens > 2_000) {
          overflows++;
          return {
            error: {
              kind: "context_overflow",
              message: "Your input exceeds the context window of this model.",
            },
          };
        }
        answered++;
        if (answered >= 40) return { text: "Done.", usage: { input: tokens, output: 5 } };
        return {
          text: `Note ${answered}: ${"words ".repeat(60)}`,
          toolCalls: [],
          usage: { input: tokens, output: 5 },
        };
      });
      const agent = createAgent({ provider });
      const events: AgentEvent[] = [];
      agent.events$.subscribe((event) => events.push(event));
      for (let i = 0; i < 40 && answered < 40; i++) await agent.prompt(`go on ${i}`);
      return { overflows, events, answered };
    })();
    expect(figures.answered).toBe(40);
    expect(figures.overflows).toBe(1);
    expect(figures.events.filter((e) => e.type === "compaction").length).toBeGreaterThan(0);
  });

  it("every model error says its kind on agent_end", async () => {
    const agent = createAgent({
      provider: scripted([{ error: { kind: "auth", message: "invalid x-api-key" } }]),
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((event) => events.push(event));
    await agent.prompt("hi");
    expect(events.at(-1)).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorKind: "auth",
      errorMessage: "invalid x-api-key",
    });
  });
});

describe("parseContextOverflow", () => {
  it.each([
    ["prompt is too long: 3396 tokens > 1000 maximum", { requested: 3396, maximum: 1000 }],
    [
      "This model's maximum context length is 128000 tokens. However, your messages resulted in 130514 tokens. Please reduce the length of the messages.",
      { requested: 130514, maximum: 128000 },
    ],
    [
      "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion).",
      { requested: 5000, maximum: 4096 },
    ],
    [
      "the request (5000 tokens) exceeds the available context size (4096 tokens)",
      { requested: 5000, maximum: 4096 },
    ],
    [
      "Trying to keep the first 5000 tokens when context the overflows. (5000) is greater than the context length (4096)",
      { requested: 5000, maximum: 4096 },
    ],
    ["maximum context length is 8,192 tokens", { maximum: 8192 }],
    [
      "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again",
      { requested: 188240, maximum: 178667 },
    ],
    [
      "This model's maximum prompt length is 131072 but the request contains 200000 tokens.",
      { requested: 200000, maximum: 131072 },
    ],
    [
      "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully.",
      { requested: 50000, maximum: 30000 },
    ],
    ["Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 25000, Requested 8000.", {}],
    ["Your input exceeds the context window of this model. Please adjust your input and try again.", {}],
    [undefined, {}],
  ])("%j", (message, expected) => {
    expect(parseContextOverflow(message)).toEqual(expected);
  });
});

describe("learnContextWindow", () => {
  const messages = [{ role: "user" as const, content: "x".repeat(40_000), timestamp: 1 }];
  // Our estimate of that request: 10,004 tokens of messages, 1,000 of system prompt.
  const config = { maxContextTokens: 32_000, systemPromptTokens: 1_000 };

  it("converts a stated maximum into our estimate's units with the stated request size, less 5 %", () => {
    const learned = learnContextWindow({
      config,
      current: 32_000,
      messages,
      errorMessage: "prompt is too long: 22008 tokens > 16000 maximum",
    });
    expect(learned).toEqual({
      maxContextTokens: Math.floor(((11_004 * 16_000) / 22_008) * 0.95),
      previous: 32_000,
      refusedTokens: 11_004,
      providerMaximum: 16_000,
      providerRequested: 22_008,
    });
  });

  it("without stated sizes, takes 90 % of the refused request; it never raises the window", () => {
    expect(learnContextWindow({ config, current: 32_000, messages }).maxContextTokens).toBe(
      Math.floor(11_004 * 0.9),
    );
    expect(
      learnContextWindow({
        config,
        current: 5_000,
        messages,
        errorMessage: "prompt is too long: 9 tokens > 8 maximum",
      }).maxContextTokens,
    ).toBe(5_000);
  });
});
