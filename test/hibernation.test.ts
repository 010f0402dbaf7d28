import { describe, expect, it } from "vitest";
import { createAgent, scripted } from "../index.js";
import { eventMatching, expectEventInvariants, record, sleepTool } from "./helpers.js";

// Hibernation through the public API: an idle agent releases its actor tree and keeps only its
// persisted snapshot; whatever needs the actor wakes it, with the same id and nothing lost.

const tick = () => new Promise((resolve) => setImmediate(resolve));
const roles = (messages: readonly { role: string }[]) => messages.map((m) => m.role);

describe("agent.hibernate()", () => {
  it("releases the actor, keeps the transcript, and wakes on the next prompt with the same id", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]), id: "session-7" });
    const events = record(agent);
    await agent.prompt("first");
    const actor = agent.actor;
    const before = agent.getPersistedSnapshot();

    agent.hibernate();
    expect(agent.hibernated).toBe(true);
    expect(actor.getSnapshot().status).toBe("stopped");
    // Reads answer from the snapshot, without waking it.
    expect(roles(agent.messages)).toEqual(["user", "assistant"]);
    expect(agent.state).toBe("idle");
    expect(agent.pendingApprovals()).toEqual([]);
    expect(agent.getPersistedSnapshot()).toEqual(before);
    expect(agent.hibernated).toBe(true);

    const { messages: added } = await agent.prompt("second");
    expect(agent.hibernated).toBe(false);
    expect(agent.id).toBe("session-7");
    expect(agent.actor.id).toBe("session-7");
    expect(agent.actor).not.toBe(actor);
    expect(roles(added)).toEqual(["user", "assistant"]);
    expect(roles(agent.messages)).toEqual(["user", "assistant", "user", "assistant"]);
    // The subscriber from before the hibernation saw both runs, in order.
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(2);
    expectEventInvariants(events);
  });

  it("keeps queued messages: a follow-up queued before hibernating is taken by continue()", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    agent.followUp("and then this");
    agent.hibernate();
    await agent.continue();
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: "user", content: "and then this" });
  });

  it("a steer while hibernated wakes the agent and queues the message", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    agent.hibernate();
    agent.steer("look here");
    expect(agent.hibernated).toBe(false);
    expect(agent.actor.getSnapshot().context.steeringQueue).toHaveLength(1);
    await agent.continue();
    expect(agent.messages.at(-2)).toMatchObject({ role: "user", content: "look here" });
  });

  it("refuses to hibernate a running agent, and loses nothing", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ name: "wait", arguments: { ms: 30, label: "x" } }] },
        { text: "ok" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    expect(() => agent.hibernate()).toThrow(/running: it can hibernate once it is idle/);
    await run;
    expect(roles(agent.messages)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    agent.hibernate();
    expect(agent.hibernated).toBe(true);
  });

  it("stop() while hibernated completes events$; a later prompt is refused", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]) });
    let completed = false;
    agent.events$.subscribe({ complete: () => (completed = true) });
    await agent.prompt("first");
    agent.hibernate();
    agent.stop();
    expect(completed).toBe(true);
    await expect(agent.prompt("again")).rejects.toThrow("Agent is stopped");
    expect(roles(agent.messages)).toEqual(["user", "assistant"]);
  });

  it("approve and deny on a hibernated agent refuse clearly (nothing is pending)", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]) });
    await agent.prompt("first");
    agent.hibernate();
    expect(() => agent.approve("call_1")).toThrow(/No pending approval for tool call "call_1"/);
    expect(() => agent.deny("call_1")).toThrow(/No pending approval/);
  });

  it("snapshot$ subscribers keep receiving snapshots from the woken actor", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt("first");
    const states: string[] = [];
    agent.snapshot$.subscribe((snapshot) => states.push(JSON.stringify(snapshot.value)));
    agent.hibernate();
    states.length = 0;
    await agent.prompt("second");
    expect(states).toContain('{"running":"streaming"}');
    expect(states.at(-1)).toBe('"idle"');
  });

  it("a sub-agent cannot hibernate: it lives in its parent's tree", async () => {
    const parent = createAgent({ provider: scripted([{ text: "x" }]) });
    const child = createAgent({ provider: scripted([{ text: "y" }]), parentActor: parent.actor });
    expect(() => child.hibernate()).toThrow(/sub-agent runs inside its parent's actor tree/);
    child.stop();
    parent.stop();
  });

  it("methods keep their agent when handed around (destructured, as callbacks)", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]), hibernate: "whenIdle" });
    const { prompt, hibernate } = agent;
    const { messages: added } = await prompt("hi");
    expect(roles(added)).toEqual(["user", "assistant"]);
    hibernate();
    expect(agent.hibernated).toBe(true);
  });
});

describe('createAgent({ hibernate: "whenIdle" })', () => {
  it("starts asleep, wakes for a run, and sleeps again once idle; events$ follows every run", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "one" }, { text: "two" }, { text: "three" }]),
      hibernate: "whenIdle",
    });
    const events = record(agent);
    expect(agent.hibernated).toBe(true);
    for (const text of ["a", "b", "c"]) {
      await agent.prompt(text);
      await tick();
      expect(agent.hibernated).toBe(true);
    }
    expect(roles(agent.messages)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant"]);
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(3);
    expectEventInvariants(events);
  });

  it("reading the actor wakes it; it sleeps again when the caller is done", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]), hibernate: "whenIdle" });
    await agent.prompt("first");
    await tick();
    expect(agent.actor.getSnapshot().context.messages).toHaveLength(2);
    expect(agent.hibernated).toBe(false);
    await tick();
    expect(agent.hibernated).toBe(true);
  });

  it("a restored idle snapshot starts asleep; a restored mid-run one finishes its run, then sleeps", async () => {
    const script = [
      { toolCalls: [{ id: "w", name: "wait", arguments: { ms: 20, label: "w" } }] },
      { text: "done" },
    ];
    const first = createAgent({ provider: scripted(script), tools: [sleepTool()] });
    const events = record(first);
    void first.prompt("go");
    await eventMatching(first, events, (e) => e.type === "tool_execution_start");
    const midRun = first.getPersistedSnapshot();
    first.stop();

    const restored = createAgent({
      provider: scripted([script[1]!]),
      tools: [sleepTool()],
      snapshot: midRun,
      hibernate: "whenIdle",
    });
    expect(restored.hibernated).toBe(false);
    await restored.waitForIdle();
    await tick();
    expect(restored.hibernated).toBe(true);
    expect(roles(restored.messages)).toEqual(["user", "assistant", "toolResult", "assistant"]);

    const again = createAgent({
      provider: scripted([{ text: "more" }]),
      snapshot: restored.getPersistedSnapshot(),
      hibernate: "whenIdle",
    });
    expect(again.hibernated).toBe(true);
    await again.prompt("and more");
    expect(roles(again.messages)).toHaveLength(6);
  });
});
