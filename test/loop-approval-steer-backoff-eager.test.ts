// Black-box scenarios, third batch: steering while an approval waits, aborting a retry's backoff,
// eager calls aborted mid-stream, continue() after an abort, prompt() while running.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted, textOf } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

describe("the loop: steering while an approval waits, aborts in backoff and eager calls", () => {
  it("a steer sent while an approval waits is taken once, after the decided call's result", async () => {
    const ran: string[] = [];
    const ask = defineTool({
      name: "ask",
      description: "needs approval",
      parameters: z.object({ x: z.string() }),
      needsApproval: true,
      execute: async ({ x }) => {
        ran.push(x);
        return `did ${x}`;
      },
    });
    const provider = scripted([
      { toolCalls: [{ id: "q", name: "ask", arguments: { x: "1" } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({ provider, tools: [ask] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    agent.steer("S");
    agent.deny("q", "not now");
    await run;
    const second = provider.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user"]);
    expect(JSON.stringify(second[2])).toContain("not now");
    expect(agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content))).toEqual([
      "go",
      "S",
    ]);
    expect(ran).toEqual([]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort during a retry's backoff ends the run at once and leaves the agent usable", async () => {
    const provider = scripted([
      { error: { kind: "rate_limit", message: "slow down", retryAfterMs: 30_000 } },
      { text: "after" },
    ]);
    const agent = createAgent({ provider });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "retry");
    const t0 = Date.now();
    agent.abort();
    expect((await run).reason).toBe("aborted");
    expect(Date.now() - t0).toBeLessThan(2000);
    expect((await agent.prompt("again")).reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("eager calls started mid-stream are answered once when the stream is aborted", async () => {
    const provider = scripted([
      { text: "x".repeat(100), chunkSize: 1, delayMs: 3, toolCalls: [wait("e1", 5000)] },
      { toolCalls: [wait("e2", 5000), wait("e3", 5000)], delayMs: 20 },
      { text: "again" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], eagerToolExecution: true });
    const events = record(agent);
    const first = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "e1");
    agent.abort();
    expect((await first).reason).toBe("aborted");
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(["e1"]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("prompt() while running rejects and leaves the run alone", async () => {
    const provider = scripted([{ toolCalls: [wait("a", 30)] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await expect(agent.prompt("again")).rejects.toThrow(/already running/);
    expect((await run).reason).toBe("stop");
    expect(agent.messages.filter((m) => m.role === "user")).toHaveLength(1);
    expectEventInvariants(events);
  });

  it("continue() after an abort mid-tool picks up from the results", async () => {
    const provider = scripted([{ toolCalls: [wait("a", 5000)] }, { text: "resumed" }]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.abort();
    await run;
    const last = agent.messages.at(-1)!;
    if (last.role === "assistant") await expect(agent.continue()).rejects.toThrow(/assistant/);
    else expect((await agent.continue()).reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("typed output streams partial objects and ends with the validated one", async () => {
    const provider = scripted([
      { text: JSON.stringify({ severity: "high", summary: "The build is red" }), chunkSize: 5 },
    ]);
    const agent = createAgent({
      provider,
      output: z.object({ severity: z.enum(["low", "high"]), summary: z.string() }),
    });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.output).toEqual({ severity: "high", summary: "The build is red" });
    const partials = events.filter((e) => e.type === "output_delta");
    expect(partials.length).toBeGreaterThan(1);
    expectEventInvariants(events);
  });
});
