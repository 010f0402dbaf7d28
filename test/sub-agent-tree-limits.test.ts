// Issue 39 item 4: "limits and costs add up the tree". A run's usage is its whole tree's (its own
// model calls and its sub-agents' at every depth, each counted once), its own apart; its token
// limit counts its sub-agents' tokens and a sub-agent may use only what its parent has left.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createAgent,
  defineTool,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  setModelPrice,
  subAgentTool,
  withCost,
} from "../index.js";
import { expectValidTranscript } from "./helpers.js";

setModelPrice("tree-model", { input: 1, output: 10 });

type Step = { tool?: { name: string; arguments: Record<string, unknown> }; output?: number };

/** A model billing 100 prompt tokens and `output` (default 50) output tokens per call, priced. */
function model(steps: (request: ProviderRequest) => Step) {
  const requests: ProviderRequest[] = [];
  const provider: Provider & { readonly requests: ProviderRequest[] } = {
    id: "tree",
    model: "tree-model",
    maxOutputTokens: 1000,
    requests,
    async *stream(request): AsyncGenerator<ProviderEvent> {
      requests.push(request);
      const step = steps(request);
      const output = step.output ?? 50;
      const usage = withCost(
        { input: 100, output, cacheRead: 0, cacheWrite: 0, totalTokens: 100 + output },
        "tree-model",
      );
      yield { type: "start" };
      if (step.tool) {
        const id = `call_${step.tool.name}_${requests.length}`;
        yield { type: "toolcall_start", id, name: step.tool.name };
        yield { type: "toolcall_end", id, name: step.tool.name, arguments: step.tool.arguments };
        yield { type: "done", stopReason: "toolUse", usage };
      } else {
        yield { type: "text_delta", delta: "answer" };
        yield { type: "done", stopReason: "stop", usage };
      }
    },
  };
  return provider;
}

const turns = (request: ProviderRequest) => request.messages.filter((m) => m.role === "assistant").length;
/** Delegates once to `tool`, then answers. */
const delegating = (tool: string) => (request: ProviderRequest) =>
  turns(request) === 0 ? { tool: { name: tool, arguments: { task: "go" } } } : {};

describe("usage and limits over the tree of agents", () => {
  it("outcome.usage is the whole tree's, each call counted once at every depth; ownUsage is the run's own calls", async () => {
    const deeper = subAgentTool({
      name: "deeper",
      description: "Answers",
      provider: model(() => ({})),
    });
    const helper = subAgentTool({
      name: "helper",
      description: "Delegates deeper",
      tools: [deeper],
      provider: model(delegating("deeper")),
    });
    const agent = createAgent({ provider: model(delegating("helper")), tools: [helper] });

    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("stop");
    // Five calls of 100 + 50 tokens: two of the agent, two of the helper, one of the deeper agent.
    expect(outcome.usage).toMatchObject({ input: 500, output: 250, totalTokens: 750 });
    expect(outcome.ownUsage).toMatchObject({ input: 200, output: 100, totalTokens: 300 });
    // Costs add up the same way: five calls at $0.0006 each.
    expect(outcome.usage.cost!.total).toBeCloseTo(5 * 0.0006, 10);
    expect(outcome.ownUsage!.cost!.total).toBeCloseTo(2 * 0.0006, 10);
    // The helper's result says what it used itself and with the deeper agent.
    const result = outcome.messages.find((m) => m.role === "toolResult");
    expect(result?.details).toMatchObject({
      usage: { totalTokens: 300 },
      treeUsage: { totalTokens: 450 },
    });
    expectValidTranscript(agent.messages);
  });

  it("a run without sub-agents reports its usage as before, with no ownUsage", async () => {
    const agent = createAgent({ provider: model(() => ({})) });
    const outcome = await agent.prompt("go");
    expect(outcome.usage.totalTokens).toBe(150);
    expect(outcome.ownUsage).toBeUndefined();
  });

  it("maxTokens counts the sub-agents' tokens: the run stops once its tree used its budget", async () => {
    // The helper answers at once with a long answer: 100 + 500 tokens.
    const helper = subAgentTool({
      name: "helper",
      description: "Answers at length",
      provider: model(() => ({ output: 500 })),
    });
    const provider = model(delegating("helper"));
    const agent = createAgent({
      provider,
      tools: [helper],
      limits: { maxTokens: 600, onLimit: "stop" },
    });

    const outcome = await agent.prompt("go");
    // 150 of its own and 600 of the helper's: past 600, so no second call is made.
    expect(outcome.reason).toBe("limit");
    expect(provider.requests).toHaveLength(1);
    const notice = outcome.messages.at(-1);
    expect(notice?.role).toBe("assistant");
    expect(JSON.stringify(notice)).toContain("Token limit reached (750/600)");
    expectValidTranscript(agent.messages);
  });

  it("a sub-agent may use only the tokens its parent has left", async () => {
    // The helper would take notes for five turns (its own maxTurns), 150 tokens a call.
    const note = defineTool({
      name: "note",
      description: "Takes a note",
      parameters: z.object({}),
      readOnly: true,
      execute: () => "noted",
    });
    const child = model(() => ({ tool: { name: "note", arguments: {} } }));
    const helper = subAgentTool({
      name: "helper",
      description: "Takes notes",
      tools: [note],
      provider: child,
      limits: { maxTurns: 5 },
    });
    const agent = createAgent({
      // The first call uses 100 + 300 of 500 tokens: 100 are left for the helper.
      provider: model((request) =>
        turns(request) === 0 ? { tool: { name: "helper", arguments: { task: "go" } }, output: 300 } : {},
      ),
      tools: [helper],
      limits: { maxTokens: 500, onLimit: "stop" },
    });
    const outcome = await agent.prompt("go");
    // Its first call used the 100 left (and more): it stopped there, and so did the run.
    expect(child.requests).toHaveLength(1);
    const result = agent.messages.find((m) => m.role === "toolResult");
    expect(result?.details).toMatchObject({ reason: "limit", treeUsage: { totalTokens: 150 } });
    expect(outcome.reason).toBe("limit");
    expectValidTranscript(agent.messages);
  });
});
