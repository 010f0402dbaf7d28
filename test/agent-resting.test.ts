import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import { type AgentActor, followActors } from "../agent/create-agent.js";
import { expectEventInvariants, record } from "./helpers.js";

// Resting: a root agent whose actor the app never read lets the actor go once it is idle and keeps
// only the actor's context (the same objects); the next call that needs an actor makes one that
// starts idle with it. Nothing about it is visible to the app except the memory it saves.

const tick = () => new Promise((resolve) => setImmediate(resolve));
const roles = (messages: readonly { role: string }[]) => messages.map((m) => m.role);

/** The actors an agent runs on, seen from the first one on; following stops at the first agent_end. */
function actorsOfFirstRun(agent: ReturnType<typeof createAgent>) {
  const actors: AgentActor[] = [];
  const stop = followActors(agent, (actor) => actors.push(actor));
  const subscription = agent.events$.subscribe((event) => {
    if (event.type !== "agent_end") return;
    stop();
    subscription.unsubscribe();
  });
  return actors;
}

class Receipt {
  constructor(readonly id: number) {}
}

describe("an idle agent rests", () => {
  it("lets its actor go after a run, and the next prompt continues the same transcript", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider, id: "session-3" });
    const events = record(agent);
    const actors = actorsOfFirstRun(agent);

    await agent.prompt("first");
    await tick();
    expect(actors).toHaveLength(1);
    expect(actors[0]!.getSnapshot().status).toBe("stopped");
    expect(agent.hibernated).toBe(false);
    expect(agent.state).toBe("idle");
    expect(roles(agent.messages)).toEqual(["user", "assistant"]);

    const { messages: added } = await agent.prompt("second");
    expect(roles(added)).toEqual(["user", "assistant"]);
    expect(roles(provider.requests[1]!.messages)).toEqual(["user", "assistant", "user"]);
    expect(roles(agent.messages)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(agent.actor.id).toBe("session-3");
    expect(agent.actor).not.toBe(actors[0]);
    expect(events.filter((e) => e.type === "agent_end")).toHaveLength(2);
    expectEventInvariants(events);
  });

  it("keeps the very objects of its transcript (nothing is serialized, unlike hibernation)", async () => {
    const receipt = new Receipt(7);
    const pay = defineTool({
      name: "pay",
      description: "Pays",
      parameters: z.object({}),
      execute: () => ({ content: [{ type: "text", text: "paid" }], details: { receipt } }),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ name: "pay", arguments: {} }] }, { text: "done" }, { text: "ok" }]),
      tools: [pay],
    });
    await agent.prompt("pay");
    const transcript = agent.messages;
    await tick();
    await agent.prompt("thanks");
    const result = agent.messages.find((m) => m.role === "toolResult");
    expect((result as { details?: { receipt?: unknown } }).details?.receipt).toBe(receipt);
    expect(agent.messages).toBe(transcript);
  });

  it("keeps its queues: a follow-up queued while idle is taken by continue()", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    await tick();
    agent.followUp("and then this");
    await tick();
    await agent.continue();
    expect(provider.requests[1]!.messages.at(-1)).toMatchObject({ role: "user", content: "and then this" });
  });

  it("a watcher that comes while it rests sees it at once, and it stays awake while watched", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt("first");
    await tick();
    const seen: AgentActor[] = [];
    const stop = followActors(agent, (actor) => seen.push(actor));
    expect(seen).toHaveLength(1);
    expect(seen[0]!.getSnapshot().status).toBe("active");
    expect(roles(seen[0]!.getSnapshot().context.messages)).toEqual(["user", "assistant"]);
    await agent.prompt("second");
    await tick();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.getSnapshot().status).toBe("active");
    stop();
  });

  it("gives the same persisted snapshot resting as awake", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]) });
    await agent.prompt("first");
    const awake = agent.getPersistedSnapshot();
    await tick();
    expect(agent.getPersistedSnapshot()).toEqual(awake);
  });

  it("an app that read agent.actor keeps that actor for good", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    const actor = agent.actor;
    const values: unknown[] = [];
    actor.subscribe((snapshot) => values.push(snapshot.value));
    await agent.prompt("first");
    await tick();
    await agent.prompt("second");
    await tick();
    expect(agent.actor).toBe(actor);
    expect(actor.getSnapshot().status).toBe("active");
    expect(values.filter((value) => value === "idle").length).toBeGreaterThanOrEqual(2);
  });

  it("stopped while resting: agent.actor is a stopped actor with the transcript", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]) });
    await agent.prompt("first");
    await tick();
    agent.stop();
    expect(agent.actor.getSnapshot().status).toBe("stopped");
    expect(roles(agent.actor.getSnapshot().context.messages)).toEqual(["user", "assistant"]);
    await expect(agent.prompt("again")).rejects.toThrow("Agent is stopped");
  });

  it("hibernates from rest without losing the transcript", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt("first");
    await tick();
    agent.hibernate();
    expect(agent.hibernated).toBe(true);
    expect(roles(agent.messages)).toEqual(["user", "assistant"]);
    await agent.prompt("second");
    expect(roles(agent.messages)).toEqual(["user", "assistant", "user", "assistant"]);
  });
});
