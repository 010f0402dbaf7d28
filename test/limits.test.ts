import { describe, expect, it, vi } from "vitest";
import { createAgent, scripted, textOf } from "../index.js";
import { expectEventInvariants, expectValidTranscript, record, sleepTool, trace } from "./helpers.js";

const loop = (ms = 1) =>
  scripted((_, call) => ({ toolCalls: [{ id: `c${call}`, name: "wait", arguments: { ms, label: "x" } }] }));

describe("limits", () => {
  it("maxTurns stops before the next model call with a notice after the last turn_end", async () => {
    const provider = loop();
    const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxTurns: 2, onLimit: "stop" } });
    const events = record(agent);
    const { messages: added } = await agent.prompt("go");
    expect(provider.calls).toBe(2);
    const notice = added.at(-1);
    expect(notice).toMatchObject({ role: "assistant", stopReason: "stop", usage: { totalTokens: 0 } });
    expect(textOf((notice as { content: { type: string; text?: string }[] }).content)).toBe(
      "[Agent stopped: Max turns reached (2/2)]",
    );
    expect(trace(events).slice(-5)).toEqual([
      "turn_end",
      "limit_reached",
      "message_start:assistant",
      "message_end:assistant",
      "agent_end",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expect(events.filter((e) => e.type === "turn_start")).toHaveLength(2);
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it("maxTokens counts input, output and cached tokens", async () => {
    const provider = scripted((_, call) => ({
      toolCalls: [{ id: `c${call}`, name: "wait", arguments: { ms: 1, label: "x" } }],
      usage: { input: 10, output: 10, cacheRead: 30, cacheWrite: 0 },
    }));
    const agent = createAgent({
      provider,
      tools: [sleepTool()],
      limits: { maxTokens: 120, onLimit: "stop" },
    });
    const events = record(agent);
    await agent.prompt("go");
    // 50 tokens a call: 50, 100, 150 ≥ 120 → stops after the third call.
    expect(provider.calls).toBe(3);
    const end = events.at(-1);
    expect(end).toMatchObject({
      type: "agent_end",
      reason: "limit",
      usage: { input: 30, output: 30, cacheRead: 90 },
    });
    expect(textOf((agent.messages.at(-1) as { content: { type: string; text?: string }[] }).content)).toBe(
      "[Agent stopped: Token limit reached (150/120)]",
    );
  });

  it("maxDurationMs fires mid-tool, aborts the tool and ends with a limit notice", async () => {
    const provider = scripted([
      { toolCalls: [{ id: "slow", name: "wait", arguments: { ms: 10_000, label: "s" } }] },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxDurationMs: 40 } });
    const events = record(agent);
    await agent.prompt("go");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
    expect(agent.messages.at(-2)).toMatchObject({
      role: "toolResult",
      isError: true,
      content: [{ text: "Tool wait aborted" }],
    });
    expect(textOf((agent.messages.at(-1) as { content: { type: string; text?: string }[] }).content)).toBe(
      "[Agent stopped: Time limit reached (40 ms)]",
    );
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it("a run's deadline lasts the run: one that ends early leaves no timer, and the next run has its own", async () => {
    vi.useFakeTimers();
    try {
      const provider = scripted([
        { text: "quick" },
        { toolCalls: [{ id: "slow", name: "wait", arguments: { ms: 10_000, label: "s" } }] },
      ]);
      const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxDurationMs: 5_000 } });
      const events = record(agent);
      await agent.prompt("one");
      expect(vi.getTimerCount()).toBe(0);
      // 4 s after the first run began: the second run's deadline counts from its own start.
      await vi.advanceTimersByTimeAsync(4_000);
      const second = agent.prompt("two");
      await vi.advanceTimersByTimeAsync(4_999);
      expect(events.at(-1)?.type).not.toBe("agent_end");
      await vi.advanceTimersByTimeAsync(1);
      await second;
      expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "limit" });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("limits apply per run: the next prompt starts counting again", async () => {
    const provider = loop();
    const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxTurns: 1, onLimit: "stop" } });
    await agent.prompt("one");
    await agent.prompt("two");
    expect(provider.calls).toBe(2);
  });
});

describe("input filters", () => {
  const noSecrets = (text: string) =>
    text.includes("password") ? { reject: "Looks like a password" } : { pass: true as const };
  const shouting = (text: string) =>
    text === text.toUpperCase() ? { warn: "The user is shouting" } : { pass: true as const };

  it("a rejected prompt: agent_start, input_rejected, agent_end rejected, no turn, nothing added", async () => {
    const provider = scripted([{ text: "never" }]);
    const agent = createAgent({ provider, inputFilters: [shouting, noSecrets] });
    const events = record(agent);
    const { messages: added } = await agent.prompt("my password is hunter2");
    expect(added).toEqual([]);
    expect(events).toEqual([
      { type: "agent_start" },
      { type: "input_rejected", reason: "Looks like a password" },
      {
        type: "agent_end",
        messages: [],
        reason: "rejected",
        usage: expect.any(Object),
        rejection: "Looks like a password",
      },
    ]);
    expect(agent.messages).toEqual([]);
    expect(provider.calls).toBe(0);
  });

  it("warnings are appended to the user message; a throwing filter rejects with its message", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "ok" }, { text: "ok" }]),
      inputFilters: [shouting],
    });
    await agent.prompt("HELLO");
    expect(agent.messages[0]).toMatchObject({
      role: "user",
      content: "HELLO\n\n[Warning: The user is shouting]",
    });

    const broken = createAgent({
      provider: scripted([{ text: "ok" }]),
      inputFilters: [
        () => {
          throw new Error("filter crashed");
        },
      ],
    });
    const events = record(broken);
    await broken.prompt("hi");
    expect(events.find((e) => e.type === "input_rejected")).toEqual({
      type: "input_rejected",
      reason: "filter crashed",
    });
  });

  it("a rejected steer is dropped with input_rejected alone", async () => {
    const provider = scripted([{ text: "slow", delayMs: 5 }, { text: "second" }]);
    const agent = createAgent({ provider, inputFilters: [noSecrets] });
    const events = record(agent);
    const run = agent.prompt("hi");
    agent.steer("password: 1234");
    agent.followUp("password again");
    await run;
    expect(provider.calls).toBe(1);
    expect(events.filter((e) => e.type === "input_rejected")).toHaveLength(2);
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
