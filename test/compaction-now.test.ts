// `agent.compact({ focus })`: compaction asked between runs (the CLI's `/compact`), through the
// public entry with a scripted model and a summarizer that asks the same model.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent, ProviderRequest, ScriptedStep } from "../index.js";
import { createAgent, defineTool, isCompactionSummary, scripted, summarizerFromProvider } from "../index.js";
import { expectValidTranscript, record, sleep } from "./helpers.js";

const readTool = defineTool({
  name: "read",
  description: "Reads a file",
  parameters: z.object({ path: z.string() }),
  execute: async ({ path }) => Array.from({ length: 40 }, (_, i) => `${path}:${i + 1} line ${i}`).join("\n"),
});

/** The agent's model reads `turns` files then answers; summary requests (no tools) get a summary. */
function model(turns: number, { slow = false } = {}) {
  const summaryRequests: ProviderRequest[] = [];
  let reads = 0;
  const provider = scripted((request): ScriptedStep => {
    if (request.tools.length === 0) {
      summaryRequests.push(request);
      return { text: "SUMMARY: read files f1..f4, nothing changed." };
    }
    const last = request.messages.at(-1);
    if (last?.role === "user") reads = 0;
    if (reads < turns) {
      reads++;
      return {
        text: `Reading ${reads}.`,
        toolCalls: [{ name: "read", arguments: { path: `f${reads}.ts` } }],
      };
    }
    return { text: "Done reading.", ...(slow && { delayMs: 200 }) };
  });
  return { provider, summaryRequests };
}

function makeAgent(turns = 4, options: { slow?: boolean } = {}) {
  const { provider, summaryRequests } = model(turns, options);
  const agent = createAgent({
    provider,
    tools: [readTool],
    context: { maxContextTokens: 100_000, keepRecent: 2, summarizer: summarizerFromProvider(provider) },
  });
  return { agent, provider, summaryRequests };
}

describe("agent.compact()", () => {
  it("summarises the old turns of an idle agent, publishes `compaction`, and keeps ids and a valid transcript", async () => {
    const { agent, summaryRequests } = makeAgent();
    await agent.prompt("Read f1 to f4.");
    const before = agent.messages;
    const events: AgentEvent[] = record(agent);

    const result = await agent.compact();

    expect(result).toBeDefined();
    expect(result!.level).toBe(2);
    expect(result!.tokensAfter).toBeLessThan(result!.tokensBefore);
    expect(events).toEqual([
      {
        type: "compaction",
        level: 2,
        tokensBefore: result!.tokensBefore,
        tokensAfter: result!.tokensAfter,
        // The summary call's usage, as the provider reported it (a session's totals count it).
        summaryUsage: result!.summaryUsage,
      },
    ]);
    expect(result!.summaryUsage?.totalTokens).toBeGreaterThan(0);
    expect(summaryRequests).toHaveLength(1);

    const after = agent.messages;
    expectValidTranscript(after);
    expect(after.length).toBeLessThan(before.length);
    const summary = after.find(isCompactionSummary)!;
    expect(summary).toBeDefined();
    expect(summary.id).toEqual(expect.any(String));
    expect(before.map((m) => m.id)).not.toContain(summary.id);
    const replaced = (summary as { replaces?: string[] }).replaces!;
    expect(replaced.length).toBeGreaterThan(0);
    // The replaced messages are gone; every kept one keeps its id.
    const beforeIds = before.map((m) => m.id);
    for (const id of replaced) expect(beforeIds).toContain(id);
    for (const m of after) {
      if (m === summary) continue;
      expect(beforeIds).toContain(m.id);
      expect(replaced).not.toContain(m.id);
    }
    expect(after[0]).toBe(before[0]);
    expect(after.at(-1)).toBe(before.at(-1));

    // The next run goes on from the compacted transcript.
    const outcome = await agent.prompt("Read them again.");
    expect(outcome.reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expect(agent.messages.filter(isCompactionSummary)).toHaveLength(1);
  });

  it("hands the focus to the summarizer's request", async () => {
    const { agent, summaryRequests } = makeAgent();
    await agent.prompt("Read f1 to f4.");
    await agent.compact({ focus: "the line numbers of f2.ts" });
    expect(summaryRequests).toHaveLength(1);
    const asked = summaryRequests[0]!.messages[0]!.content as string;
    expect(asked).toContain("<focus>\nthe line numbers of f2.ts\n</focus>");
  });

  it("refuses while a run is going on and leaves the transcript alone", async () => {
    const { agent, summaryRequests } = makeAgent(1, { slow: true });
    await agent.prompt("Read f1.");
    const running = agent.prompt("Read f1 again.");
    await sleep(20);
    expect(agent.state).not.toBe("idle");
    await expect(agent.compact()).rejects.toThrow(/running.*idle agent/);
    await running;
    expect(summaryRequests).toHaveLength(0);
    expect(agent.messages.some(isCompactionSummary)).toBe(false);
    expectValidTranscript(agent.messages);
  });

  it("refuses an agent without a context budget, and bad options, with a clear error", async () => {
    const agent = createAgent({ provider: scripted([{ text: "hi" }]) });
    await agent.prompt("hello");
    await expect(agent.compact()).rejects.toThrow(/no context budget/);
    const { agent: budgeted } = makeAgent();
    await expect(budgeted.compact({ focus: 3 as unknown as string })).rejects.toThrow(
      /focus must be a string/,
    );
    await expect(budgeted.compact({ fokus: "x" } as never)).rejects.toThrow(/focus/);
  });

  it("compacts an agent that hibernates when idle, which keeps the compacted transcript asleep", async () => {
    const { provider } = model(4);
    const agent = createAgent({
      provider,
      tools: [readTool],
      hibernate: "whenIdle",
      context: { maxContextTokens: 100_000, keepRecent: 2 },
    });
    await agent.prompt("Read f1 to f4.");
    const result = await agent.compact();
    expect(result?.level).toBe(2);
    await sleep(0);
    expect(agent.hibernated).toBe(true);
    expect(agent.messages.filter(isCompactionSummary)).toHaveLength(1);
    expectValidTranscript(agent.messages);
  });

  it("resolves undefined when there is nothing old enough to summarise", async () => {
    const { agent } = makeAgent(0);
    await agent.prompt("Hello.");
    const events = record(agent);
    expect(await agent.compact()).toBeUndefined();
    expect(events).toEqual([]);
  });
});
