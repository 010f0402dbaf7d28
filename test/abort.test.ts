import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
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

describe("abort", () => {
  it("during streaming: the stream stops, the partial message is kept as aborted, the next prompt works", async () => {
    const provider = scripted([
      { text: "a long answer that streams slowly", chunkSize: 2, delayMs: 10 },
      { text: "fresh" },
    ]);
    const agent = createAgent({ provider });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_update");
    agent.abort();
    const { messages: added } = await run;

    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("aborted");
    const assistant = added.at(-1);
    expect(assistant).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(assistant?.role === "assistant" && assistant.content[0]?.type).toBe("text");
    expectEventInvariants(events);

    await agent.prompt("again");
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
  });

  it("mid-answer: the words that arrived stay, marked [interrupted], and the next request holds them", async () => {
    const requests: string[] = [];
    const provider = scripted((request, call) => {
      requests.push(JSON.stringify(request.messages));
      return call === 0 ? { text: "one two three four five six", chunkSize: 4, delayMs: 20 } : { text: "ok" };
    });
    const agent = createAgent({ provider });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_update");
    agent.abort();
    await run;
    const aborted = agent.messages.at(-1);
    expect(aborted?.role === "assistant" && aborted.content.map((c) => c.type === "text" && c.text)).toEqual([
      expect.stringMatching(/^one/),
      "\n\n[interrupted]",
    ]);
    // The mark is in the message the events carry too (what a session records).
    const end = events.findLast((e) => e.type === "message_end");
    expect(end?.type === "message_end" && end.message).toEqual(aborted);
    await agent.prompt("what did you say?");
    expect(requests[1]).toContain("[interrupted]");
    expect(requests[1]).toMatch(/"one/);
    expectValidTranscript(agent.messages);

    // An abort before any word arrived leaves no mark (nothing was said).
    const silent = createAgent({ provider: scripted([{ text: "late", delayMs: 500 }]) });
    const silentRun = silent.prompt("go");
    await new Promise((resolve) => setTimeout(resolve, 20));
    silent.abort();
    await silentRun;
    expect(JSON.stringify(silent.messages)).not.toContain("[interrupted]");
  });

  it("during a slow tool: its signal fires, every open call is answered, reason aborted", async () => {
    const aborted: string[] = [];
    const provider = scripted([
      { toolCalls: [wait("fast", 1), wait("slow", 10_000), wait("slower", 20_000)] },
      { text: "after abort" },
    ]);
    const tool = sleepTool({ onAbort: () => aborted.push("signal") });
    const agent = createAgent({ provider, tools: [tool] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_end" && e.toolCallId === "fast");
    agent.abort();
    await run;

    expect(aborted).toEqual(["signal", "signal"]);
    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, r.isError, resultText(r)])).toEqual([
      ["fast", false, "done fast"],
      ["slow", true, "Tool wait aborted"],
      ["slower", true, "Tool wait aborted"],
    ]);
    const end = events.at(-1);
    expect(end?.type === "agent_end" && end.reason).toBe("aborted");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
    expect(agent.state).toBe("idle");
  });

  it("sequential: calls that never started are answered as aborted, with start and end events", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("a", 10_000), wait("b", 1)] }]),
      tools: [sleepTool()],
      toolExecution: "sequential",
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.abort();
    await run;
    expect(toolResults(agent.messages).map((r) => resultText(r))).toEqual([
      "Tool wait aborted",
      "Tool wait aborted",
    ]);
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it("a tool that ignores its signal cannot hold the run", async () => {
    const stubborn = defineTool({
      name: "stubborn",
      description: "never stops",
      parameters: z.object({}),
      execute: () => new Promise<string>(() => {}),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "s", name: "stubborn" }] }]),
      tools: [stubborn],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.abort();
    await run;
    expect(resultText(toolResults(agent.messages)[0]!)).toBe("Tool stubborn aborted");
  });

  it("abort while idle does nothing; prompt while running is rejected", async () => {
    const agent = createAgent({ provider: scripted([{ text: "slow", delayMs: 20 }]) });
    agent.abort();
    const run = agent.prompt("go");
    await expect(agent.prompt("again")).rejects.toThrow("Agent is already running");
    await run;
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
