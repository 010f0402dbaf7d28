import { describe, expect, it } from "vitest";
import { createAgent, type ProviderRequest, scripted, textOf } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  resultText,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

const lastUserText = (request: ProviderRequest) => {
  const users = request.messages.filter((m) => m.role === "user");
  return textOf(users.at(-1)?.content ?? "");
};

describe("steering", () => {
  it("sequential: a steer during the first call skips the other two", async () => {
    const provider = scripted([{ toolCalls: [wait("a", 30), wait("b", 5), wait("c", 5)] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [sleepTool()], toolExecution: "sequential" });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "a");
    agent.steer("stop and do X instead");
    await run;

    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, r.isError, resultText(r)])).toEqual([
      ["a", false, "done a"],
      ["b", true, "Skipped due to queued user message."],
      ["c", true, "Skipped due to queued user message."],
    ]);
    // The steering message is what the model sees next, after the results.
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: "stop and do X instead",
    });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("batched {batched: 2}: a steer during the first batch skips the second batch", async () => {
    const provider = scripted([
      { toolCalls: [wait("a", 30), wait("b", 30), wait("c", 5), wait("d", 5)] },
      { text: "ok" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], toolExecution: { batched: 2 } });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "b");
    agent.steer("new direction");
    await run;
    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, resultText(r)])).toEqual([
      ["a", "done a"],
      ["b", "done b"],
      ["c", "Skipped due to queued user message."],
      ["d", "Skipped due to queued user message."],
    ]);
    expectEventInvariants(events);
  });

  it("parallel: a steer during the batch is applied after the batch, before the next model call", async () => {
    const provider = scripted([{ toolCalls: [wait("a", 30), wait("b", 30), wait("c", 30)] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "c");
    agent.steer("also check Y");
    await run;

    expect(toolResults(agent.messages).every((r) => !r.isError)).toBe(true);
    const second = provider.requests[1]!;
    expect(second.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "toolResult",
      "user",
    ]);
    expect(lastUserText(second)).toBe("also check Y");
    // The steering message's events come after turn_end of turn 1 and turn_start of turn 2.
    const steerStart = events.findIndex(
      (e) => e.type === "message_start" && e.message.role === "user" && e !== events[2],
    );
    const secondTurn = events.findIndex((e) => e.type === "turn_start" && e.turn === 2);
    expect(steerStart).toBeGreaterThan(secondTurn);
    expectEventInvariants(events);
  });

  it("a steer after a text-only answer starts another turn", async () => {
    const provider = scripted([{ text: "first", delayMs: 5 }, { text: "second" }]);
    const agent = createAgent({ provider });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_start" && e.message.role === "assistant");
    agent.steer("more please");
    await run;
    expect(provider.calls).toBe(2);
    expect(lastUserText(provider.requests[1]!)).toBe("more please");
  });

  it("one-at-a-time takes one steering message per turn; all takes them together", async () => {
    for (const [mode, expectedCalls] of [
      ["one-at-a-time", 3],
      ["all", 2],
    ] as const) {
      const provider = scripted((_, call) => ({ text: `answer ${call}`, delayMs: call === 0 ? 5 : 0 }));
      const agent = createAgent({ provider, steeringMode: mode });
      const events = record(agent);
      const run = agent.prompt("go");
      await eventMatching(agent, events, (e) => e.type === "message_start" && e.message.role === "assistant");
      agent.steer("s1");
      agent.steer("s2");
      await run;
      expect(provider.calls, mode).toBe(expectedCalls);
      const users = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content as string));
      expect(users).toEqual(["go", "s1", "s2"]);
    }
  });
});

describe("follow-ups", () => {
  it("are taken only when the agent would otherwise stop", async () => {
    const provider = scripted([
      { toolCalls: [wait("a", 20)] },
      { text: "tool turn done" },
      { text: "follow-up answered" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.followUp("and then summarise");
    await run;
    expect(provider.calls).toBe(3);
    // Not injected after the tool turn (request 2 ends with the tool result) ...
    expect(provider.requests[1]!.messages.at(-1)?.role).toBe("toolResult");
    // ... but once the agent would have stopped.
    expect(lastUserText(provider.requests[2]!)).toBe("and then summarise");
    expectEventInvariants(events);
  });

  it("all mode takes every queued follow-up at once", async () => {
    const provider = scripted((_, call) => ({ text: `a${call}`, delayMs: call === 0 ? 5 : 0 }));
    const agent = createAgent({ provider, followUpMode: "all" });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_start" && e.message.role === "assistant");
    agent.followUp("f1");
    agent.followUp("f2");
    await run;
    expect(provider.calls).toBe(2);
    expect(provider.requests[1]!.messages.slice(-2).map((m) => m.content)).toEqual(["f1", "f2"]);
  });

  it("a queued message lets continue() resume after an assistant message", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("go");
    await expect(agent.continue()).rejects.toThrow("Cannot continue from message role: assistant");
    agent.followUp("next");
    const { messages: added } = await agent.continue();
    expect(added.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
