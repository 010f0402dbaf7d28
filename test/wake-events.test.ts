import { describe, expect, it } from "vitest";
import { createAgent, deliverEvent, type InputFilter, scripted, WakeEventError } from "../index.js";
import { deliverWake } from "../wake.js";
import { eventMatching, record, sleepTool } from "./helpers.js";

// Events from outside through the public API: an app hands an event to an agent by id.

const userTexts = (agent: { messages: readonly { role: string; content: unknown }[] }) =>
  agent.messages.filter((m) => m.role === "user").map((m) => m.content);

describe("deliverEvent", () => {
  it("wakes a hibernated agent with the event as a message from source event, once per sender id", async () => {
    const provider = scripted(() => ({ text: "on it" }));
    const agent = createAgent({ provider, hibernate: "whenIdle" });
    const agents = new Map([["ada", agent]]);
    expect(agent.hibernated).toBe(true);

    const event = { agentId: "ada", id: "gh_81", text: "CI failed on main" };
    expect(await deliverEvent(agents, event)).toBe("delivered");
    await agent.waitForIdle();
    expect(provider.requests).toHaveLength(1);
    expect(agent.messages[0]).toMatchObject({
      role: "user",
      id: "event_gh_81",
      source: "event",
      content: "CI failed on main",
    });

    await new Promise((resolve) => setImmediate(resolve));
    expect(agent.hibernated).toBe(true);
    expect(await deliverEvent(agents, event)).toBe("duplicate");
    await agent.waitForIdle();
    expect(provider.requests).toHaveLength(1);
    expect(userTexts(agent)).toEqual(["CI failed on main"]);
  });

  it("a running agent takes the event from its steering queue after the current turn", async () => {
    const provider = scripted([
      { toolCalls: [{ name: "wait", arguments: { ms: 30, label: "x" } }] },
      { text: "seen it" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("deploy");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    expect(
      await deliverEvent(new Map([["ada", agent]]), { agentId: "ada", id: "e1", text: "Stop: prod is down" }),
    ).toBe("delivered");
    expect(
      await deliverEvent(new Map([["ada", agent]]), { agentId: "ada", id: "e1", text: "Stop: prod is down" }),
    ).toBe("duplicate");
    await run;
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: "Stop: prod is down",
    });
    expect(userTexts(agent)).toEqual(["deploy", "Stop: prod is down"]);
  });

  it("an event steered into a run that is aborted waits for the next run; what a person queued is dropped", async () => {
    const provider = scripted([
      { toolCalls: [{ name: "wait", arguments: { ms: 5_000, label: "x" } }] },
      { text: "seen it" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], hibernate: "whenIdle" });
    const agents = new Map([["ada", agent]]);
    const events = record(agent);
    const run = agent.prompt("deploy");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    await deliverEvent(agents, { agentId: "ada", id: "e1", text: "Stop: prod is down" });
    agent.steer("a person's note");
    agent.abort();
    await run;
    expect(agent.queued.steering).toMatchObject([{ id: "event_e1", source: "event" }]);
    expect(provider.requests).toHaveLength(1); // the abort started nothing
    // The sender's retry is still a no-op: the event waits in the queue.
    expect(await deliverEvent(agents, { agentId: "ada", id: "e1", text: "Stop: prod is down" })).toBe(
      "duplicate",
    );

    await new Promise((resolve) => setImmediate(resolve));
    agent.abort(); // on the sleeping agent: nothing to drop, it stays asleep
    expect(agent.hibernated).toBe(true);
    await agent.prompt("status?");
    expect(provider.requests[1]!.messages.slice(-2)).toMatchObject([
      { role: "user", content: "status?" },
      { role: "user", content: "Stop: prod is down", source: "event" },
    ]);
    expect(userTexts(agent)).toEqual(["deploy", "status?", "Stop: prod is down"]);
  });

  it("a follow-up event waits for the run's end", async () => {
    const provider = scripted([
      { toolCalls: [{ name: "wait", arguments: { ms: 30, label: "x" } }] },
      { text: "done" },
      { text: "and the follow-up" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("deploy");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    await deliverEvent(new Map([["ada", agent]]), {
      agentId: "ada",
      id: "e2",
      text: "later",
      queue: "followUp",
    });
    await run;
    expect(agent.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "user",
      "assistant",
    ]);
  });

  it("refuses an unknown agent, a missing id or text, a bad queue: clearly, queueing nothing", async () => {
    const provider = scripted(() => ({ text: "x" }));
    const agent = createAgent({ provider });
    const agents = new Map([["ada", agent]]);
    await expect(deliverEvent(agents, { agentId: "bob", id: "1", text: "hi" })).rejects.toThrow(
      new WakeEventError('no agent "bob"; the event was not delivered'),
    );
    await expect(deliverEvent(agents, { agentId: "ada", id: "", text: "hi" })).rejects.toThrow(
      /needs the sender's id/,
    );
    await expect(deliverEvent(agents, { agentId: "ada", id: "2", text: " " })).rejects.toThrow(
      /needs its text/,
    );
    await expect(
      deliverEvent(agents, { agentId: "ada", id: "3", text: "hi", queue: "prompt" as never }),
    ).rejects.toThrow(/queue must be "steer" or "followUp"/);
    expect(provider.requests).toHaveLength(0);
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
  });

  it("an event the agent's input filters refuse is refused with the reason (idle or running), as on Restate", async () => {
    const provider = scripted([
      { toolCalls: [{ name: "wait", arguments: { ms: 30, label: "x" } }] },
      { text: "seen it" },
    ]);
    const noSql: InputFilter = (text) => (text.includes("DROP") ? { reject: "no SQL here" } : { pass: true });
    const agent = createAgent({ provider, tools: [sleepTool()], inputFilters: [noSql] });
    const agents = new Map([["ada", agent]]);
    // Idle: no run starts.
    await expect(
      deliverEvent(agents, { agentId: "ada", id: "e1", text: "DROP TABLE users" }),
    ).rejects.toThrow(new WakeEventError("Input rejected: no SQL here"));
    expect(provider.requests).toHaveLength(0);
    expect(agent.messages).toEqual([]);
    // Running: nothing is queued.
    const events = record(agent);
    const run = agent.prompt("deploy");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    await expect(
      deliverEvent(agents, { agentId: "ada", id: "e2", text: "DROP TABLE users", queue: "followUp" }),
    ).rejects.toThrow(new WakeEventError("Input rejected: no SQL here"));
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
    await run;
    expect(userTexts(agent)).toEqual(["deploy"]);
    // What the filters pass is delivered as before.
    expect(await deliverEvent(agents, { agentId: "ada", id: "e3", text: "all good" })).toBe("delivered");
  });

  it("deliverWake (schedules, late results) throws for a refused message instead of answering delivered", () => {
    const agent = createAgent({
      provider: scripted([]),
      inputFilters: [() => ({ reject: "quiet hours" })],
    });
    expect(() =>
      deliverWake(agent, { id: "w1", text: "wake up", source: "schedule", queue: "steer" }),
    ).toThrow("Input rejected: quiet hours");
    expect(agent.messages).toEqual([]);
  });
});
