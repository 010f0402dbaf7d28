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
  subAgentTool,
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

describe("a sub-agent's worst case is reserved before it starts", () => {
  /** A parent that calls `research` `n` times in one turn, then answers. */
  const parentModel = (n: number) =>
    pricedModel((_request, call) =>
      call === 0
        ? { tool: { name: "research", arguments: { task: "dig" } }, output: 100 }
        : call < n
          ? { tool: { name: "research", arguments: { task: `dig ${call}` } }, output: 100 }
          : { output: 100 },
    );

  it("the child's budget is what the parent can spare, keeping its own next call: it cannot overspend", async () => {
    // The child would run five calls ($0.0455) if nothing stopped it.
    const child = pricedModel((_request, call) =>
      call < 4 ? { tool: { name: "noop", arguments: {} } } : {},
    );
    const noop = defineTool({ name: "noop", description: "", parameters: z.object({}), execute: () => "ok" });
    const parent = parentModel(1);
    const agent = createAgent({
      provider: parent,
      tools: [subAgentTool({ name: "research", description: "Researches", provider: child, tools: [noop] })],
      limits: { maxCostUsd: 0.05 },
    });
    const outcome = await agent.prompt("Find out");
    // The run's own calls (its usage is the tree's: its own and the child's).
    const total = outcome.ownUsage!.cost!.total;
    const childUsd = outcome.messages
      .filter((m) => m.role === "toolResult")
      .reduce((sum, m) => sum + ((m.details as { usage?: Usage } | undefined)?.usage?.cost?.total ?? 0), 0);
    expect(childUsd).toBeGreaterThan(0);
    // The child stopped at its share; the parent still answered; all of it within the budget.
    expect(child.calls).toBeLessThan(5);
    expect(outcome.reason).toBe("stop");
    expect(total + childUsd).toBeLessThanOrEqual(0.05);
    expect(outcome.usage.cost!.total).toBeCloseTo(total + childUsd, 10);
  });

  it("a sub-agent the parent cannot spare the least call for is not started: the model reads why", async () => {
    const child = pricedModel();
    const parent = parentModel(1);
    const agent = createAgent({
      provider: parent,
      tools: [subAgentTool({ name: "research", description: "Researches", provider: child })],
      // The first call ($0.0011) leaves $0.0099, less than the parent's own next call (~$0.0101).
      limits: { maxCostUsd: 0.011, onLimit: "stop" },
    });
    const outcome = await agent.prompt("Find out");
    expect(child.calls).toBe(0);
    const result = outcome.messages.find((m) => m.role === "toolResult");
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result)).toMatch(/Sub-agent not started: .*budget/);
  });

  it("parallel sub-agents share what is left: together they cannot overspend", async () => {
    const child = pricedModel((_request, call) =>
      call < 8 ? { tool: { name: "noop", arguments: {} } } : {},
    );
    const noop = defineTool({ name: "noop", description: "", parameters: z.object({}), execute: () => "ok" });
    const parent = pricedModel((_request, call) =>
      call === 0 ? { tool: { name: "research", arguments: { task: "a" } }, output: 100 } : { output: 100 },
    );
    // The parent's first answer calls research twice at once.
    const twice: Provider = {
      ...parent,
      id: parent.id,
      model: parent.model,
      maxOutputTokens: 1000,
      async *stream(request, signal) {
        if (parent.calls === 0) {
          for await (const event of parent.stream(request, signal)) {
            if (event.type === "done") {
              yield { type: "toolcall_start", id: "second", name: "research" };
              yield { type: "toolcall_end", id: "second", name: "research", arguments: { task: "b" } };
            }
            yield event;
          }
        } else yield* parent.stream(request, signal);
      },
    };
    const agent = createAgent({
      provider: twice,
      tools: [subAgentTool({ name: "research", description: "Researches", provider: child, tools: [noop] })],
      limits: { maxCostUsd: 0.06 },
    });
    const outcome = await agent.prompt("Find out both");
    const results = outcome.messages.filter((m) => m.role === "toolResult");
    expect(results).toHaveLength(2);
    const childUsd = results.reduce(
      (sum, m) => sum + ((m.details as { usage?: Usage } | undefined)?.usage?.cost?.total ?? 0),
      0,
    );
    expect(outcome.ownUsage!.cost!.total + childUsd).toBeLessThanOrEqual(0.06);
    expect(outcome.usage.cost!.total).toBeCloseTo(outcome.ownUsage!.cost!.total + childUsd, 10);
  });
});

describe("costs add up the tree of sub-agents", () => {
  /** Every call of every model of the tree, priced: what the run really cost. */
  const spent = { usd: 0 };
  const metered = (steps: Parameters<typeof pricedModel>[0]) => {
    const inner = pricedModel(steps);
    const provider: Provider = {
      ...inner,
      async *stream(request, signal) {
        for await (const event of inner.stream(request, signal)) {
          if (event.type === "done") spent.usd += event.usage?.cost?.total ?? 0;
          yield event;
        }
      },
    };
    return provider;
  };

  it("a grandchild's spending counts at the top: the whole tree stays within the parent's budget", async () => {
    spent.usd = 0;
    const noop = defineTool({ name: "noop", description: "", parameters: z.object({}), execute: () => "ok" });
    // The writer (two levels down) would spend $0.0455 a task if nothing stopped it.
    const writer = subAgentTool({
      name: "write",
      description: "Writes",
      tools: [noop],
      provider: metered((request) =>
        request.messages.filter((m) => m.role === "toolResult").length < 4
          ? { tool: { name: "noop", arguments: {} } }
          : {},
      ),
    });
    const researcher = subAgentTool({
      name: "research",
      description: "Researches",
      tools: [writer],
      provider: metered((request) =>
        request.messages.some((m) => m.role === "toolResult")
          ? { output: 100 }
          : { tool: { name: "write", arguments: { task: "write it" } }, output: 100 },
      ),
    });
    const agent = createAgent({
      provider: metered((_request, call) =>
        call < 5
          ? { tool: { name: "research", arguments: { task: `dig ${call}` } }, output: 100 }
          : { output: 100 },
      ),
      tools: [researcher],
      limits: { maxCostUsd: 0.05 },
    });
    const outcome = await agent.prompt("Find out");
    // The budget ends the run (the parent answers at its limit), the tree within it: counted only
    // by the children's own calls, five researchers ran and spent $0.0904.
    expect(outcome.reason).toBe("limit");
    expect(outcome.messages.at(-1)?.role).toBe("assistant");
    expect(spent.usd).toBeLessThanOrEqual(0.05);
    // The first researcher's result counts its writer's spending.
    const first = outcome.messages.find((m) => m.role === "toolResult")!;
    const details = first.details as { usage: Usage; costUsd?: number };
    expect(details.costUsd).toBeGreaterThan(details.usage.cost!.total + 0.009);
  });
});
