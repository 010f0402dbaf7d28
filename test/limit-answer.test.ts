import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type CustomMessage,
  createAgent,
  defineTool,
  LIMIT_NOTICE_TYPE,
  scripted,
  subAgentTool,
  textOf,
} from "../index.js";
import {
  assistants,
  expectEventInvariants,
  expectValidTranscript,
  record,
  resultText,
  toolResults,
  trace,
} from "./helpers.js";

/** A tool that counts its runs. */
function counter() {
  const runs: string[] = [];
  const tool = defineTool({
    name: "search",
    description: "Searches",
    parameters: z.object({ q: z.string() }),
    execute: ({ q }) => {
      runs.push(q);
      return `found ${q}`;
    },
  });
  return { tool, runs };
}

/** A model that keeps searching until it is told to answer (it obeys `toolChoice: "none"`). */
const researcher = () =>
  scripted((request, call) =>
    request.toolChoice === "none"
      ? { text: `Answer from ${call} searches.` }
      : {
          text: `Searching ${call}.`,
          toolCalls: [{ id: `s${call}`, name: "search", arguments: { q: `q${call}` } }],
        },
  );

const limitEvents = (events: AgentEvent[]) =>
  events.filter((e): e is Extract<AgentEvent, { type: "limit_reached" }> => e.type === "limit_reached");

describe("an answer at the turn cap (onLimit)", () => {
  it("default: one more call without tools, after a notice; the run ends with reason limit and that answer", async () => {
    const provider = researcher();
    const { tool, runs } = counter();
    const agent = createAgent({ provider, tools: [tool], limits: { maxTurns: 2 } });
    const events = record(agent);
    const { messages: added } = await agent.prompt("research this");

    expect(provider.calls).toBe(3);
    expect(runs).toEqual(["q0", "q1"]);
    // The answer call lists the tools (the transcript refers to them; the prompt cache keeps them)
    // but may not call any, and its last message is the notice.
    const last = provider.requests[2]!;
    expect(last.toolChoice).toBe("none");
    expect(last.tools.map((t) => t.name)).toEqual(["search"]);
    expect(provider.requests[1]!.toolChoice).toBeUndefined();
    const notice = last.messages.at(-1)!;
    expect(notice.role).toBe("user");
    expect(textOf(notice.content as string)).toBe(
      "[Max turns reached (2/2). No more tool calls can run: answer now, from what you have found so far. " +
        "Give the best answer you can, and say plainly what is unfinished or uncertain.]",
    );

    // The transcript: the work, the notice (a custom message apps can tell apart), the answer.
    expect(added.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "toolResult",
      "custom",
      "assistant",
    ]);
    expect(added[5]).toMatchObject({
      customType: LIMIT_NOTICE_TYPE,
      display: "model",
      details: { limit: "maxTurns" },
    });
    expect(added.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "stop",
      content: [{ type: "text", text: "Answer from 2 searches." }],
    });
    expect(JSON.stringify(agent.messages)).not.toContain("[Agent stopped");

    expect(limitEvents(events)).toEqual([
      { type: "limit_reached", limit: "maxTurns", action: "answer", text: "Max turns reached (2/2)" },
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit", messages: added });
    // The answer is a turn of its own; the limit is announced between the last work turn and it.
    expect(trace(events).slice(-9)).toEqual([
      "turn_end",
      "limit_reached",
      "turn_start",
      "message_start:custom",
      "message_end:custom",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
    ]);
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it('onLimit: "stop" ends at once with the notice, and says so in limit_reached', async () => {
    const provider = researcher();
    const agent = createAgent({
      provider,
      tools: [counter().tool],
      limits: { maxTurns: 2, onLimit: "stop" },
    });
    const events = record(agent);
    await agent.prompt("research this");
    expect(provider.calls).toBe(2);
    expect(provider.requests.every((r) => r.toolChoice === undefined)).toBe(true);
    expect(limitEvents(events)).toEqual([
      { type: "limit_reached", limit: "maxTurns", action: "stop", text: "Max turns reached (2/2)" },
    ]);
    expect(textOf(assistants(agent.messages).at(-1)!.content)).toBe(
      "[Agent stopped: Max turns reached (2/2)]",
    );
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
  });

  it("a model that calls a tool anyway: the call never runs, is answered, and the notice closes the run", async () => {
    const provider = scripted((_, call) => ({
      text: call === 1 ? "Let me search once more." : "",
      toolCalls: [{ id: `s${call}`, name: "search", arguments: { q: `q${call}` } }],
    }));
    const { tool, runs } = counter();
    const agent = createAgent({ provider, tools: [tool], limits: { maxTurns: 1 }, eagerToolExecution: true });
    const events = record(agent);
    await agent.prompt("go");
    expect(provider.calls).toBe(2);
    expect(runs).toEqual(["q0"]);
    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, r.isError, resultText(r)])).toEqual([
      ["s0", false, "found q0"],
      [
        "s1",
        true,
        "Tool search was not run: the run reached its limit and asked for an answer without tool calls",
      ],
    ]);
    expect(textOf(assistants(agent.messages).at(-1)!.content)).toBe(
      "[Agent stopped: Max turns reached (1/1)]",
    );
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it("a failed answer call still ends the run with reason limit and the notice", async () => {
    const provider = scripted((request, call) =>
      request.toolChoice === "none"
        ? { error: { kind: "api", message: "the model is unavailable" } }
        : { toolCalls: [{ id: `s${call}`, name: "search", arguments: { q: "x" } }] },
    );
    const agent = createAgent({ provider, tools: [counter().tool], limits: { maxTurns: 1 } });
    const events = record(agent);
    await agent.prompt("go");
    expect(provider.calls).toBe(2);
    const [, failed, notice] = assistants(agent.messages);
    expect(failed).toMatchObject({ stopReason: "error", errorMessage: "the model is unavailable" });
    expect(textOf(notice!.content)).toBe("[Agent stopped: Max turns reached (1/1)]");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expectEventInvariants(events);
  });

  it("maxTokens: the answer comes while the budget left still pays for it, and the run stays within it", async () => {
    // Every call: a prompt of 40 tokens (10 fresh + 30 cached) and 10 out.
    const provider = scripted((request, call) => ({
      ...(request.toolChoice === "none"
        ? { text: "Final answer." }
        : { toolCalls: [{ id: `s${call}`, name: "search", arguments: { q: "x" } }] }),
      usage: { input: 10, output: 10, cacheRead: 30, cacheWrite: 0 },
    }));
    const agent = createAgent({ provider, tools: [counter().tool], limits: { maxTokens: 240 } });
    const events = record(agent);
    await agent.prompt("go");
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.reason).toBe("limit");
    expect(end.usage.totalTokens).toBeLessThanOrEqual(240);
    expect(assistants(agent.messages).at(-1)).toMatchObject({
      content: [{ type: "text", text: "Final answer." }],
    });
    const [verdict] = limitEvents(events);
    expect(verdict).toMatchObject({ limit: "maxTokens", action: "answer" });
    expect(verdict!.text).toMatch(/^Token budget nearly spent \(\d+\/240, next call ~\d+\)$/);
    expect(provider.requests.at(-1)!.toolChoice).toBe("none");
  });

  it("maxTokens: when not even the answer fits, the run stops with the notice", async () => {
    const provider = scripted((_, call) => ({
      toolCalls: [{ id: `s${call}`, name: "search", arguments: { q: "x" } }],
      usage: { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 },
    }));
    const agent = createAgent({ provider, tools: [counter().tool], limits: { maxTokens: 150 } });
    const events = record(agent);
    await agent.prompt("go");
    expect(provider.calls).toBe(1);
    expect(limitEvents(events)).toEqual([
      { type: "limit_reached", limit: "maxTokens", action: "stop", text: "Token limit reached (120/150)" },
    ]);
    expect(textOf(assistants(agent.messages).at(-1)!.content)).toBe(
      "[Agent stopped: Token limit reached (120/150)]",
    );
  });

  it("a sub-agent at its turn cap hands back its answer", async () => {
    const child = subAgentTool({
      name: "researcher",
      description: "Researches",
      tools: [counter().tool],
      provider: researcher(),
      limits: { maxTurns: 1 },
    });
    const parent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "d1", name: "researcher", arguments: { task: "dig" } }] },
        { text: "done" },
      ]),
      tools: [child],
    });
    await parent.prompt("go");
    const [delegated] = toolResults(parent.messages);
    expect(resultText(delegated!)).toBe("Searching 0.\n\nAnswer from 1 searches.");
    expect(delegated!.details).toMatchObject({ reason: "limit" });
  });

  it("an unknown onLimit is refused where it is set", () => {
    expect(() => createAgent({ provider: scripted([]), limits: { onLimit: "summarize" as never } })).toThrow(
      'createAgent limits.onLimit must be "answer" or "stop", got "summarize"',
    );
  });

  it("the notice is a custom message the model sees as a user message", async () => {
    const agent = createAgent({ provider: researcher(), tools: [counter().tool], limits: { maxTurns: 1 } });
    await agent.prompt("go");
    const notice = agent.messages.find((m): m is CustomMessage => m.role === "custom")!;
    expect(notice.content).toContain("Max turns reached (1/1)");
  });
});
