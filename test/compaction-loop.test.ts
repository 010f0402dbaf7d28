// Compaction in a (simulated) agent loop: the context is compacted before every model call, as the
// machine's `compacting` state does, and must stay within budget with a summary that does not grow.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage, ContextConfig } from "../index.js";
import {
  compactContext,
  contextBudget,
  emptyUsage,
  estimateMessageTokens,
  estimateTokens,
  isCompactionSummary,
  isOverBudget,
} from "../index.js";
import { configArb, pairingProblems, smallestAnswerTokens, turnsArb } from "./compaction-arbitraries.js";

const RUNS = { numRuns: Number(process.env.FC_RUNS ?? 100) };

function scriptedTurn(t: number): AgentMessage[] {
  const output = Array.from({ length: 60 }, (_, i) => `${t}:${i} ${"lorem ipsum ".repeat(4)}`).join("\n");
  return [
    {
      role: "user",
      content: `Step ${t}: look at module ${t % 17} and fix what is wrong.`,
      timestamp: t * 10 + 1,
    },
    {
      role: "assistant",
      content: [
        { type: "text", text: `Reading module ${t % 17}.` },
        { type: "toolCall", id: `r${t}`, name: "read", arguments: { path: `src/m${t % 17}.ts` } },
        { type: "toolCall", id: `g${t}`, name: "grep", arguments: { pattern: `fn${t}` } },
      ],
      stopReason: "toolUse",
      usage: emptyUsage(),
      timestamp: t * 10 + 2,
    },
    {
      role: "toolResult",
      toolCallId: `r${t}`,
      toolName: "read",
      content: [{ type: "text", text: output }],
      isError: false,
      timestamp: t * 10 + 3,
    },
    {
      role: "toolResult",
      toolCallId: `g${t}`,
      toolName: "grep",
      content: [{ type: "text", text: "no match" }],
      isError: true,
      timestamp: t * 10 + 4,
    },
    {
      role: "assistant",
      content: [{ type: "text", text: `Fixed module ${t % 17}.` }],
      stopReason: "stop",
      usage: emptyUsage(),
      timestamp: t * 10 + 5,
    },
  ];
}

describe("compaction in the agent loop", () => {
  it("keeps a growing session within budget with a bounded summary (200 turns, 8k budget)", async () => {
    const config: ContextConfig = { maxContextTokens: 8_000, keepRecent: 5, summaryMaxTokens: 600 };
    let messages: AgentMessage[] = [{ role: "user", content: "Fix every module.", timestamp: 0 }];
    const summaryTokens: number[] = [];
    let compactions = 0;
    for (let t = 1; t <= 200; t++) {
      messages = [...messages, ...scriptedTurn(t)];
      const result = await compactContext(messages, config);
      if (result) {
        compactions++;
        messages = result.messages;
        const summary = messages.find(isCompactionSummary);
        if (summary) summaryTokens.push(estimateMessageTokens(summary));
      }
      expect(estimateTokens(messages)).toBeLessThanOrEqual(contextBudget(config));
      expect(pairingProblems(messages)).toEqual([]);
    }
    expect(compactions).toBeGreaterThanOrEqual(20);
    expect(messages[0].content).toBe("Fix every module.");
    expect(messages.filter(isCompactionSummary)).toHaveLength(1);
    // The cap (600) plus the summary's prefix line and framing.
    expect(Math.max(...summaryTokens)).toBeLessThanOrEqual(600 + 30);
  });

  it("stays within budget over random sessions whenever the protected turns fit", async () => {
    await fc.assert(
      fc.asyncProperty(turnsArb(25), configArb, async (turns, config) => {
        const budget = contextBudget(config);
        let messages: AgentMessage[] = [];
        for (const turn of turns) {
          messages = [...messages, ...turn];
          const result = await compactContext(messages, config);
          if (result) messages = result.messages;
          if (smallestAnswerTokens(messages, config) <= budget) {
            expect(isOverBudget(messages, config)).toBe(false);
          }
          expect(pairingProblems(messages)).toEqual([]);
          for (const summary of messages.filter(isCompactionSummary)) {
            expect(estimateMessageTokens(summary)).toBeLessThanOrEqual(
              Math.max(config.summaryMaxTokens!, estimateMessageTokens(summary) - 1) + 30,
            );
          }
        }
      }),
      RUNS,
    );
  });
});

describe("forced compaction (the provider reported a context overflow)", () => {
  const session = (turns: number) => [
    { role: "user", content: "task", timestamp: 0 } as AgentMessage,
    ...Array.from({ length: turns }, (_, t) => scriptedTurn(t + 1)).flat(),
  ];

  it("compacts a context the estimate thought fitted, to the target of its current size", async () => {
    const messages = session(10);
    const config = { maxContextTokens: 1_000_000 };
    expect(await compactContext(messages, config)).toBeUndefined();
    const result = (await compactContext(messages, config, { force: true }))!;
    expect(result.tokensAfter).toBeLessThanOrEqual(Math.floor(0.6 * estimateTokens(messages)));
    expect(result.fits).toBe(true);
  });

  it("uses at least minLevel, even when a cheaper level would fit", async () => {
    const messages = session(10);
    const config = { maxContextTokens: Math.floor(estimateTokens(messages) * 0.9), toolOutputMaxLines: 10 };
    expect((await compactContext(messages, config))!.level).toBe(1);
    expect((await compactContext(messages, config, { minLevel: 2 }))!.level).toBe(2);
    expect((await compactContext(messages, config, { minLevel: 3 }))!.level).toBe(3);
  });

  it("as a last resort truncates a huge recent tool output that alone overflows", async () => {
    const messages = session(2);
    const huge = messages.at(-3)!;
    expect(huge.role).toBe("toolResult");
    const bigMessages = messages.map((m) =>
      m === huge && m.role === "toolResult"
        ? { ...m, content: [{ type: "text" as const, text: "data line\n".repeat(40_000) }] }
        : m,
    );
    const config = { maxContextTokens: 20_000, keepRecent: 4 };
    const normal = (await compactContext(bigMessages, config))!;
    expect(normal.fits).toBe(false);
    expect(normal.messages.at(-3)).toBe(bigMessages.at(-3));
    const forced = (await compactContext(bigMessages, config, { force: true, minLevel: 3 }))!;
    expect(forced.fits).toBe(true);
    expect(JSON.stringify(forced.messages.at(-3))).toContain("lines truncated ...]");
    expect(pairingProblems(forced.messages)).toEqual([]);
  });

  it("stops at once when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop"));
    await expect(
      compactContext(session(3), { maxContextTokens: 100 }, { signal: controller.signal }),
    ).rejects.toThrow("stop");
  });
});
