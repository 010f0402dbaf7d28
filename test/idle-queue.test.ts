import { describe, expect, it } from "vitest";
import { type AgentEvent, createAgent, scripted } from "../index.js";

// steer / followUp on an idle agent queue for the next run (as pi-agent-core does) and start
// none; the queue is visible (`agent.queued`); abort() drops it, idle or running.

/** The texts of the user messages a model request carried. */
function userTexts(messages: readonly { role: string; content: unknown }[]): string[] {
  return messages
    .filter((message) => message.role === "user")
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : (message.content as { type: string; text?: string }[]).map((block) => block.text ?? "").join(""),
    );
}

function record(agent: ReturnType<typeof createAgent>): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((event) => events.push(event));
  return events;
}

describe("steer and followUp on an idle agent", () => {
  it("steer: starts no run, is visible as queued, and joins the next run's first turn after the prompt", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    const events = record(agent);
    agent.steer("use metric units");
    await Promise.resolve();
    expect(agent.state).toBe("idle");
    expect(events).toEqual([]);
    expect(provider.calls).toBe(1);
    expect(agent.queued).toEqual({
      steering: [expect.objectContaining({ role: "user", content: "use metric units" })],
      followUp: [],
    });

    const outcome = await agent.prompt("weather in Lisbon?");
    // One model call: the steering message went with the prompt, not after a first answer.
    expect(provider.calls).toBe(2);
    expect(userTexts(provider.requests[1]!.messages)).toEqual([
      "first",
      "weather in Lisbon?",
      "use metric units",
    ]);
    expect(outcome.messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
  });

  it("followUp: waits for the next run and is taken when that run would otherwise stop", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }, { text: "three" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    agent.followUp("then summarise");
    expect(agent.state).toBe("idle");
    expect(agent.queued.followUp).toHaveLength(1);
    const outcome = await agent.prompt("second");
    expect(provider.calls).toBe(3);
    expect(userTexts(provider.requests[1]!.messages)).toEqual(["first", "second"]);
    expect(userTexts(provider.requests[2]!.messages)).toEqual(["first", "second", "then summarise"]);
    expect(outcome.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("what is queued is kept in the persisted snapshot and taken by the restored agent's next run", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }]) });
    await agent.prompt("first");
    agent.steer("remember me");
    const snapshot = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    const provider = scripted([{ text: "two" }]);
    const restored = createAgent({ provider, snapshot });
    expect(restored.queued.steering).toHaveLength(1);
    await restored.prompt("second");
    expect(userTexts(provider.requests[0]!.messages)).toEqual(["first", "second", "remember me"]);
  });
});

describe("abort() drops what is queued", () => {
  it("on an idle agent: the queued messages are gone and the next run never sees them", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider });
    await agent.prompt("first");
    agent.steer("also check Porto");
    agent.followUp("then summarise");
    agent.abort();
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
    const outcome = await agent.prompt("second");
    expect(outcome.reason).toBe("stop");
    expect(provider.calls).toBe(2);
    expect(userTexts(provider.requests[1]!.messages)).toEqual(["first", "second"]);
    // The snapshot holds no queued message either.
    const { context } = agent.getPersistedSnapshot() as { context: { steeringQueue: []; followUpQueue: [] } };
    expect([context.steeringQueue, context.followUpQueue]).toEqual([[], []]);
  });

  it("on a hibernated agent with queued messages", async () => {
    const provider = scripted([{ text: "one" }, { text: "two" }]);
    const agent = createAgent({ provider, hibernate: "whenIdle" });
    await agent.prompt("first");
    agent.followUp("then summarise");
    await Promise.resolve();
    expect(agent.queued.followUp).toHaveLength(1);
    agent.abort();
    expect(agent.queued.followUp).toEqual([]);
    await agent.prompt("second");
    expect(provider.calls).toBe(2);
  });

  it("during a run: the run ends aborted and what was queued does not carry over to the next run", async () => {
    const provider = scripted([{ text: "slow answer", delayMs: 50 }, { text: "two" }]);
    const agent = createAgent({ provider });
    const run = agent.prompt("first");
    agent.steer("also check Porto");
    agent.followUp("then summarise");
    agent.abort();
    const outcome = await run;
    expect(outcome.reason).toBe("aborted");
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
    await agent.prompt("second");
    expect(provider.calls).toBe(2);
    expect(userTexts(provider.requests[1]!.messages)).toEqual(["first", "second"]);
  });

  it("an agent that never ran and queued nothing stays unstarted", () => {
    const agent = createAgent({ provider: scripted([]) });
    agent.abort();
    expect(agent.state).toBe("idle");
    expect(agent.queued).toEqual({ steering: [], followUp: [] });
  });
});
