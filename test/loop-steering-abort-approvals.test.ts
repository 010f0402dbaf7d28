// Black-box scenarios of the loop as an app drives it: steering and follow-ups at each moment,
// abort in each state, approvals that are no longer waiting, snapshots mid-approval.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted, textOf } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  gateTool,
  record,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

function askTool(ran: string[]) {
  return defineTool({
    name: "ask",
    description: "needs approval",
    parameters: z.object({ x: z.string() }),
    needsApproval: true,
    execute: async ({ x }) => {
      ran.push(x);
      return `did ${x}`;
    },
  });
}

describe("the loop: steering, aborts in every state, late approvals, snapshots", () => {
  it("a steer sent while the model streams reaches the next model call once, after the results", async () => {
    const provider = scripted([
      { text: "thinking out loud for a while", chunkSize: 2, delayMs: 5, toolCalls: [wait("a", 1)] },
      { text: "ok" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_update");
    agent.steer("S1");
    await run;
    const second = provider.requests[1]!.messages;
    expect(second.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "user"]);
    expect(textOf(second.at(-1)!.content as never)).toBe("S1");
    expect(agent.messages.filter((m) => m.role === "user")).toHaveLength(2);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("steers sent while the model streams a final answer make the loop go on, in order", async () => {
    const provider = scripted([{ text: "final answer here", chunkSize: 1, delayMs: 3 }, { text: "ok" }]);
    const agent = createAgent({ provider, steeringMode: "all" });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_update");
    agent.steer("S1");
    agent.steer("S2");
    await run;
    expect(provider.calls).toBe(2);
    const users = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(users).toEqual(["go", "S1", "S2"]);
    expectEventInvariants(events);
  });

  it("a steer sent after the run ended is not lost: the next prompt carries it", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    agent.steer("late steer");
    await agent.prompt("second");
    const users = provider.requests[1]!.messages.filter((m) => m.role === "user").map((m) =>
      textOf(m.content as never),
    );
    expect(users).toContain("late steer");
    expect(users.filter((u) => u === "late steer")).toHaveLength(1);
  });

  it("a follow-up queued at the last turn_end runs before the agent stops", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    const events = record(agent);
    agent.events$.subscribe((e) => {
      if (e.type === "turn_end" && e.turn === 1) agent.followUp("more");
    });
    const outcome = await agent.prompt("first");
    expect(provider.calls).toBe(2);
    expect(outcome.reason).toBe("stop");
    expectEventInvariants(events);
  });

  it("a follow-up queued from agent_end is not lost", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const agent = createAgent({ provider });
    let sent = false;
    agent.events$.subscribe((e) => {
      if (e.type === "agent_end" && !sent) {
        sent = true;
        agent.followUp("after end");
      }
    });
    await agent.prompt("first");
    await agent.waitForIdle();
    expect(provider.calls).toBe(1);
    // Documented: an idle agent's follow-up waits until the next run would otherwise stop.
    expect(JSON.stringify(agent.queued)).toContain("after end");
    await agent.prompt("next");
    await agent.waitForIdle();
    const texts = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(texts).toEqual(["first", "next", "after end"]);
  });

  it("abort while streaming: answered, reusable", async () => {
    const provider = scripted([{ text: "x".repeat(200), chunkSize: 1, delayMs: 2 }, { text: "again" }]);
    const agent = createAgent({ provider });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "message_update");
    agent.abort();
    expect((await run).reason).toBe("aborted");
    const again = await agent.prompt("again");
    expect(again.reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort while parallel calls run: each answered once, reusable", async () => {
    const provider = scripted([
      { toolCalls: [wait("a", 5000), wait("b", 5000), wait("c", 1)] },
      { text: "again" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_end" && e.toolCallId === "c");
    agent.abort();
    expect((await run).reason).toBe("aborted");
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(["a", "b", "c"]);
    expect((await agent.prompt("again")).reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort while awaiting approval; a late approve throws and changes nothing; reusable", async () => {
    const ran: string[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "q", name: "ask", arguments: { x: "1" } }] },
      { text: "again" },
    ]);
    const agent = createAgent({ provider, tools: [askTool(ran)] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    agent.abort();
    expect((await run).reason).toBe("aborted");
    expect(() => agent.approve("q")).toThrow();
    expect(() => agent.deny("q")).toThrow();
    expect(ran).toEqual([]);
    expect(toolResults(agent.messages)).toHaveLength(1);
    expect((await agent.prompt("again")).reason).toBe("stop");
    expect(ran).toEqual([]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("approve twice: the second throws; the call runs once", async () => {
    const ran: string[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "q", name: "ask", arguments: { x: "1" } }] },
      { text: "done" },
    ]);
    const agent = createAgent({ provider, tools: [askTool(ran)] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    agent.approve("q");
    expect(() => agent.approve("q")).toThrow();
    expect(() => agent.deny("q")).toThrow();
    await run;
    expect(ran).toEqual(["1"]);
    expectValidTranscript(agent.messages);
  });

  it("a snapshot taken mid-approval restores into a new agent that waits for the same call", async () => {
    const ran: string[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "q", name: "ask", arguments: { x: "1" } }, wait("w", 1)] },
      { text: "done" },
    ]);
    const agent = createAgent({ provider, tools: [askTool(ran), sleepTool()] });
    const events = record(agent);
    void agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    const snap = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    agent.stop();

    const provider2 = scripted([{ text: "done" }]);
    const restored = createAgent({ provider: provider2, tools: [askTool(ran), sleepTool()], snapshot: snap });
    const events2 = record(restored);
    await new Promise((r) => setTimeout(r, 50));
    const pending = events2.find((e) => e.type === "approval_requested") ?? undefined;
    const waitingIds = restored.pendingToolCalls().map((c) => c.toolCallId);
    expect(pending !== undefined || waitingIds.includes("q")).toBe(true);
    restored.approve("q");
    await restored.waitForIdle();
    expect(ran).toEqual(["1"]);
    expectValidTranscript(restored.messages);
  });

  it("maxTurns reached mid fan-out: every call answered, limit reason", async () => {
    const provider = scripted(() => ({
      toolCalls: [wait(`a${Math.random()}`, 5), wait(`b${Math.random()}`, 20)],
    }));
    const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxTurns: 2 } });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("limit");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort during a gate tool, then steer, then prompt: steer not duplicated", async () => {
    const gate = gateTool();
    const provider = scripted([{ toolCalls: [{ id: "g", name: "gate", arguments: {} }] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: [gate.tool] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.steer("S");
    agent.abort();
    await run;
    await agent.prompt("next");
    const users = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(users.filter((u) => u === "S").length).toBeLessThanOrEqual(1);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });
});
