import { describe, expect, it } from "vitest";
import { createAgent, scripted } from "../index.js";
import { expectEventInvariants, record } from "./helpers.js";

// A new agent makes its actor only when something first needs it. Nothing of that may show: an
// agent that has never run answers every read, method and subscription as one whose actor exists.

const types = (events: readonly { type: string }[]) => events.map((e) => e.type);

describe("an agent that has never run", () => {
  it("answers reads without an actor, as an idle agent: state, transcript, approvals, not hibernated", () => {
    const history = [{ role: "user" as const, content: "earlier", timestamp: 1 }];
    const agent = createAgent({ provider: scripted([]), id: "fresh", messages: history });
    expect(agent.state).toBe("idle");
    expect(agent.hibernated).toBe(false);
    expect(agent.messages).toEqual([{ ...history[0], id: expect.any(String) }]);
    expect(agent.pendingApprovals()).toEqual([]);
    expect(() => agent.approve("call_1")).toThrow(/No pending approval/);
    // Its actor, once read, is the agent's, idle, with the given transcript.
    expect(agent.actor.id).toBe("fresh");
    expect(agent.actor.getSnapshot().status).toBe("active");
    expect(agent.actor.getSnapshot().value).toBe("idle");
    expect(agent.actor.getSnapshot().context.messages).toEqual(agent.messages);
    expect(agent.actor).toBe(agent.actor);
  });

  it("publishes the same events in the same order as an agent whose actor was read first", async () => {
    const run = async (readActorFirst: boolean) => {
      const agent = createAgent({ provider: scripted([{ text: "hello" }]) });
      if (readActorFirst) void agent.actor;
      const events = record(agent);
      const { messages: added } = await agent.prompt("hi");
      expectEventInvariants(events);
      return { events: types(events), added: added.map((m) => m.role), messages: agent.messages.length };
    };
    expect(await run(false)).toEqual(await run(true));
  });

  it("takes queued messages: a follow-up before the first run is taken by continue()", async () => {
    const provider = scripted([{ text: "ok" }]);
    const agent = createAgent({
      provider,
      messages: [
        { role: "user", content: "q", timestamp: 1 },
        {
          role: "assistant",
          content: [{ type: "text", text: "a" }],
          stopReason: "stop",
          timestamp: 2,
        } as never,
      ],
    });
    agent.followUp("and then this");
    await agent.continue();
    expect(provider.requests[0]!.messages.at(-1)).toMatchObject({ role: "user", content: "and then this" });
  });

  it("snapshot$ starts with the idle snapshot; getPersistedSnapshot restores to an equal agent", async () => {
    const agent = createAgent({ provider: scripted([]), id: "s" });
    const values: unknown[] = [];
    const subscription = agent.snapshot$.subscribe((snapshot) => values.push(snapshot.value));
    expect(values).toEqual(["idle"]);
    subscription.unsubscribe();
    const restored = createAgent({ provider: scripted([]), id: "s", snapshot: agent.getPersistedSnapshot() });
    expect(restored.state).toBe("idle");
    expect(restored.messages).toEqual([]);
  });

  it("stop() before any use: events$ completes, agent.actor is the stopped actor, prompt is refused", async () => {
    const agent = createAgent({ provider: scripted([{ text: "never" }]) });
    let completed = false;
    agent.events$.subscribe({ complete: () => (completed = true) });
    agent.stop();
    expect(completed).toBe(true);
    expect(agent.actor.getSnapshot().status).toBe("stopped");
    await expect(agent.prompt("hi")).rejects.toThrow("Agent is stopped");
  });

  it("hibernate() before any use: asleep, then a prompt wakes it with the same id", async () => {
    const agent = createAgent({ provider: scripted([{ text: "hello" }]), id: "h" });
    agent.hibernate();
    expect(agent.hibernated).toBe(true);
    await agent.prompt("hi");
    expect(agent.hibernated).toBe(false);
    expect(agent.actor.id).toBe("h");
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("an inspector sees the agent's actor from its creation", () => {
    const actors: string[] = [];
    createAgent({
      provider: scripted([]),
      id: "watched",
      inspect: (event) => {
        if (event.type === "@xstate.actor") actors.push(event.actorRef.id);
      },
    });
    expect(actors).toEqual(["watched"]);
  });
});
