import { describe, expect, expectTypeOf, it } from "vitest";
import { type AgentEvent, createAgent, type RunOutcome, scripted } from "../index.js";
import type { RunResult } from "../restate.js";

// A user who awaits a run gets its outcome from the await, the same shape the durable session
// client answers: how it ended, what it added, what it cost, what failed.

function ends(agent: ReturnType<typeof createAgent>) {
  const seen: Extract<AgentEvent, { type: "agent_end" }>[] = [];
  agent.events$.subscribe((event) => event.type === "agent_end" && seen.push(event));
  return seen;
}

describe("prompt() and continue() resolve to the run's outcome", () => {
  it("a run that answers: reason stop, the new messages, the run's usage", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "Hello!", usage: { input: 12, output: 3 } }]),
    });
    const seen = ends(agent);
    const outcome = await agent.prompt("hi");
    expect(outcome).toEqual({
      reason: "stop",
      messages: [
        expect.objectContaining({ role: "user", content: "hi" }),
        expect.objectContaining({
          role: "assistant",
          stopReason: "stop",
          content: [{ type: "text", text: "Hello!" }],
        }),
      ],
      usage: expect.objectContaining({ input: 12, output: 3, totalTokens: 15 }),
    });
    // The await and the event say the same.
    const [end] = seen;
    expect(outcome).toEqual({ reason: end!.reason, messages: end!.messages, usage: end!.usage });
    expect(outcome.messages).toEqual(agent.messages);
  });

  it("a failed run resolves (never rejects) with reason error, the error and its kind", async () => {
    const agent = createAgent({
      provider: scripted([{ error: { kind: "auth", message: "invalid x-api-key" } }]),
    });
    const outcome = await agent.prompt("hi");
    expect(outcome).toMatchObject({ reason: "error", errorMessage: "invalid x-api-key", errorKind: "auth" });
    expect(outcome.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
  });

  it("a prompt the input filters refuse: reason rejected, with the filter's reason, nothing added", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "never" }]),
      inputFilters: [
        (text) => (text.includes("password") ? { reject: "Looks like a password" } : { pass: true }),
      ],
    });
    const outcome = await agent.prompt("my password is hunter2");
    expect(outcome).toEqual({
      reason: "rejected",
      messages: [],
      usage: expect.any(Object),
      rejection: "Looks like a password",
    });
  });

  it("a rejected steer during a run is not the run's rejection", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "ok", delayMs: 20 }]),
      inputFilters: [(text) => (text === "bad" ? { reject: "no" } : { pass: true })],
    });
    const run = agent.prompt("go");
    agent.steer("bad");
    const outcome = await run;
    expect(outcome.reason).toBe("stop");
    expect(outcome).not.toHaveProperty("rejection");
  });

  it("continue() resolves the same way", async () => {
    const agent = createAgent({
      provider: scripted([{ text: "one" }, { text: "two" }]),
    });
    await agent.prompt("first");
    agent.followUp("and then?");
    const outcome = await agent.continue();
    expect(outcome.reason).toBe("stop");
    expect(outcome.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("is the type the durable client answers, besides the run's id", () => {
    expectTypeOf<RunResult>().toExtend<RunOutcome>();
    expectTypeOf<Omit<RunResult, "runId">>().toEqualTypeOf<RunOutcome>();
    expectTypeOf(createAgent({ provider: scripted([]) }).prompt).returns.resolves.toEqualTypeOf<RunOutcome>();
  });
});
