// Level 2 with an LLM: summaries through a Provider, requests that fit, summaries that replace.
import { describe, expect, it } from "vitest";
import { estimateTextTokens } from "../context/tokens.js";
import type { AgentMessage, Provider, ProviderEvent, ProviderRequest } from "../index.js";
import {
  compactContext,
  contextBudget,
  emptyUsage,
  isCompactionSummary,
  summarizerFromProvider,
  summaryTextOf,
} from "../index.js";

/** A provider double that answers every request with `answer(request, n)` and records the requests. */
function summarisingProvider(answer: (request: ProviderRequest, call: number) => ProviderEvent[]) {
  const requests: ProviderRequest[] = [];
  const provider: Provider = {
    id: "fake",
    model: "fake-1",
    async *stream(request) {
      requests.push(request);
      yield* answer(request, requests.length);
    },
  };
  return { provider, requests };
}

const text = (t: string): ProviderEvent[] => [
  { type: "start" },
  { type: "text_delta", delta: t },
  { type: "done", stopReason: "stop", usage: emptyUsage() },
];

function longSession(turns: number, outputLines = 40): AgentMessage[] {
  const messages: AgentMessage[] = [{ role: "user", content: "Refactor the parser.", timestamp: 1 }];
  for (let t = 0; t < turns; t++) {
    messages.push(
      { role: "user", content: `step ${t}: please continue`, timestamp: 10 * t + 2 },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: `c${t}`, name: "read", arguments: { path: `src/f${t}.ts` } }],
        stopReason: "toolUse",
        usage: emptyUsage(),
        timestamp: 10 * t + 3,
      },
      {
        role: "toolResult",
        toolCallId: `c${t}`,
        toolName: "read",
        content: [
          {
            type: "text",
            text: Array.from({ length: outputLines }, (_, i) => `const v${i} = ${t};`).join("\n"),
          },
        ],
        isError: false,
        timestamp: 10 * t + 4,
      },
      {
        role: "assistant",
        content: [{ type: "text", text: `done with step ${t}` }],
        stopReason: "stop",
        usage: emptyUsage(),
        timestamp: 10 * t + 5,
      },
    );
  }
  return messages;
}

const requestTokens = (r: ProviderRequest) =>
  estimateTextTokens(r.systemPrompt ?? "") +
  r.messages.reduce((sum, m) => sum + estimateTextTokens(typeof m.content === "string" ? m.content : ""), 0);

describe("summarizerFromProvider", () => {
  it("keeps every summary request within the budget by summarising in rolling chunks", async () => {
    const { provider, requests } = summarisingProvider((_r, n) => text(`summary #${n}`));
    const config = {
      maxContextTokens: 6_000,
      keepRecent: 4,
      toolOutputMaxLines: 1_000,
      summarizer: summarizerFromProvider(provider),
    };
    const messages = longSession(120);
    const result = (await compactContext(messages, config))!;
    expect(result.level).toBe(2);
    expect(result.tokensAfter).toBeLessThanOrEqual(result.target);
    expect(requests.length).toBeGreaterThan(3);
    const budget = contextBudget(config);
    for (const request of requests) {
      expect(requestTokens(request)).toBeLessThanOrEqual(budget);
      expect(request.tools).toEqual([]);
    }
    // Each chunk carries the summary so far, which the next answer replaces.
    const second = requests[1].messages[0].content as string;
    expect(second).toContain("<previous-summary>\nsummary #1\n</previous-summary>");
    const summary = result.messages.find(isCompactionSummary)!;
    expect(summaryTextOf(summary as never)).toBe(`summary #${requests.length}`);
  });

  it("hands an earlier summary over as previousSummary and leaves a single summary", async () => {
    const { provider, requests } = summarisingProvider((_r, n) => text(`summary #${n}`));
    const config = { maxContextTokens: 3_000, keepRecent: 4, summarizer: summarizerFromProvider(provider) };
    let messages = longSession(10);
    for (let round = 0; round < 3; round++) {
      messages = [...messages, ...longSession(10).slice(1)];
      messages = (await compactContext(messages, config))?.messages ?? messages;
    }
    const summaries = messages.filter(isCompactionSummary);
    expect(summaries).toHaveLength(1);
    const last = requests.at(-1)!.messages[0].content as string;
    expect(last).toMatch(/<previous-summary>\nsummary #\d+\n<\/previous-summary>/);
    expect(last).not.toContain("[Summary of the earlier conversation");
  });

  it("falls back to the digest when the provider reports an error", async () => {
    const { provider } = summarisingProvider(() => [
      { type: "start" },
      { type: "error", kind: "overloaded", message: "busy" },
    ]);
    const config = { maxContextTokens: 3_000, keepRecent: 4, summarizer: summarizerFromProvider(provider) };
    const result = (await compactContext(longSession(30), config))!;
    expect(result.level).toBe(2);
    const summary = result.messages.find(isCompactionSummary)!;
    expect(summary.role === "custom" && summary.details).toMatchObject({
      method: "digest",
      summarizerError: "Summary request to fake failed (overloaded): busy",
    });
    expect(summaryTextOf(summary as never)).toContain("- user: step 0: please continue; tools: read");
  });
});
