// Issue 42 item 3: "Costs of sub-agents, compaction summaries and repairs count." A compaction's
// summary call counts against the run's and the agent's budget; a sub-agent starts only with the
// budget its parent can spare, and cannot spend more than that.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineTool,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  setModelPrice,
  type Usage,
  withCost,
} from "../index.js";
import { expectValidTranscript } from "./helpers.js";

setModelPrice("costs-model", { input: 1, output: 10 });

/** `input: "measured"`: the prompt billed at 4 characters per token (so compaction sees its size). */
type Step = {
  tool?: { name: string; arguments: Record<string, unknown> };
  output?: number;
  input?: "measured";
};

/**
 * Bills 100 prompt tokens and `output` (default 900) output tokens per call at $1/$10 per million:
 * $0.0091 a call by default; the worst case of a call is about $0.0101 (1,000 output tokens).
 */
function pricedModel(steps: (request: ProviderRequest, call: number) => Step = () => ({})) {
  let calls = 0;
  const provider: Provider & { readonly calls: number } = {
    id: "priced",
    model: "costs-model",
    maxOutputTokens: 1000,
    get calls() {
      return calls;
    },
    async *stream(request): AsyncGenerator<ProviderEvent> {
      const step = steps(request, calls++);
      const usage = withCost(
        {
          input: 100,
          output: step.output ?? 900,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 100 + (step.output ?? 900),
        },
        "costs-model",
      );
      yield { type: "start" };
      if (step.tool && request.toolChoice !== "none") {
        const id = `call_${calls}`;
        yield { type: "toolcall_start", id, name: step.tool.name };
        yield { type: "toolcall_end", id, name: step.tool.name, arguments: step.tool.arguments };
        yield { type: "done", stopReason: "toolUse", usage };
      } else {
        yield { type: "text_delta", delta: `answer ${calls}` };
        yield { type: "done", stopReason: "stop", usage };
      }
    },
  };
  return provider;
}

const summaryCost = (total: number): Usage => ({
  input: 1000,
  output: 100,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 1100,
  cost: { input: total, output: 0, cacheRead: 0, cacheWrite: 0, total },
});

const record = (agent: { events$: { subscribe(f: (e: AgentEvent) => void): unknown } }) => {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  return events;
};

describe("a compaction's summary call counts against the budget", () => {
  const summarizing = (usd: number, counter = { calls: 0 }) => ({
    maxContextTokens: 3_000,
    keepFirst: 0,
    keepRecent: 1,
    summarizer: async () => {
      counter.calls++;
      return { text: "the summary", usage: summaryCost(usd) };
    },
  });

  it("between runs (agent.compact()): the agent's lifetime budget counts it", async () => {
    const provider = pricedModel();
    const agent = createAgent({
      provider,
      limits: { maxSessionCostUsd: 0.035, onLimit: "stop" },
      context: { ...summarizing(0.01), maxContextTokens: 100_000 },
    });
    await agent.prompt("first ".repeat(400));
    await agent.prompt("second ".repeat(400));
    expect(provider.calls).toBe(2);
    const result = await agent.compact();
    expect(result?.summaryUsage?.cost?.total).toBe(0.01);
    const events = record(agent);
    const outcome = await agent.prompt("third");
    // $0.0182 of calls and $0.01 of summary leave less than the next call's worst case ($0.0101);
    // without the summary it would fit.
    expect(outcome.reason).toBe("limit");
    expect(provider.calls).toBe(2);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "limit_reached", limit: "maxSessionCostUsd" }),
    );
  });

  it("within a run: the summary of an automatic compaction counts against maxCostUsd", async () => {
    const provider = pricedModel(() => ({ output: 100, input: "measured" }));
    const summaries = { calls: 0 };
    const agent = createAgent({
      provider,
      limits: { maxCostUsd: 0.025, onLimit: "stop" },
      context: { ...summarizing(0.02, summaries), maxContextTokens: 10_000 },
    });
    const events = record(agent);
    // Long prompts until one run starts with a compaction that summarises the earlier ones.
    for (const word of ["aa", "bb", "cc", "dd", "ee", "ff"]) {
      const callsBefore = provider.calls;
      const outcome = await agent.prompt(`${word} `.repeat(3_000));
      if (summaries.calls === 0) {
        expect(outcome.reason).toBe("stop");
        continue;
      }
      expect(events).toContainEqual(expect.objectContaining({ type: "compaction", level: 2 }));
      // The summary ($0.02 a request) leaves less than the call's worst case (~$0.0123).
      expect(outcome.reason).toBe("limit");
      expect(provider.calls).toBe(callsBefore);
      expect(events).toContainEqual(
        expect.objectContaining({ type: "limit_reached", limit: "maxCostUsd", action: "stop" }),
      );
      expectValidTranscript(agent.messages);
      return;
    }
    throw new Error("no run compacted");
  });
});
