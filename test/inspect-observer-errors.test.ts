import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";

// An `inspect` observer is the app's code, called by XState in the middle of delivering an event:
// an error it throws must not leave that event undelivered (the run would wait for ever). It is
// reported once on the console, the observer is detached, and the run goes on.

afterEach(() => vi.restoreAllMocks());

/** An observer that throws on every event from the first one after `armed()` is called. */
function throwingObserver() {
  let armed = false;
  let calls = 0;
  const observer = (_event: unknown) => {
    if (!armed) return;
    calls++;
    throw new Error("the inspector is down");
  };
  return { observer, arm: () => (armed = true), calls: () => calls };
}

const within = <T>(promise: Promise<T>, ms = 5_000) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)),
  ]);

describe("an inspect observer that throws", () => {
  it("on a later event (the model's answer): the run finishes; the error is reported once; the observer is detached", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {});
    const inspector = throwingObserver();
    const provider = scripted([
      { toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
      { text: "done" },
      { text: "again" },
    ]);
    const echo = defineTool({
      name: "echo",
      description: "Echoes",
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => text,
    });
    const agent = createAgent({ provider, tools: [echo], id: "watched", inspect: inspector.observer });
    const run = agent.prompt("go");
    // Every event from here on comes later, from the run's own work (the model's stream, the tool).
    inspector.arm();
    const outcome = await within(run);
    expect(outcome.reason).toBe("stop");
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(inspector.calls()).toBe(1);
    expect(report).toHaveBeenCalledTimes(1);
    expect(String(report.mock.calls[0]![0])).toBe(
      'agent-machine: the inspect observer of agent "watched" threw, and sees no more events: the inspector is down',
    );
    // The next run too.
    expect((await within(agent.prompt("again"))).reason).toBe("stop");
    expect(inspector.calls()).toBe(1);
  });

  it("on the prompt's own event: the same (the run goes ahead)", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const inspector = throwingObserver();
    inspector.arm();
    const agent = createAgent({
      provider: scripted([{ text: "done" }]),
      inspect: { next: inspector.observer },
    });
    // Armed before creation: the actor's own creation event is the first it throws on.
    expect((await within(agent.prompt("go"))).reason).toBe("stop");
    expect(inspector.calls()).toBe(1);
  });

  it("an observer that keeps working sees every event", async () => {
    const seen: string[] = [];
    const agent = createAgent({
      provider: scripted([{ text: "done" }]),
      inspect: (e: { type: string }) => seen.push(e.type),
    });
    await agent.prompt("go");
    expect(seen).toContain("@xstate.event");
    expect(seen.length).toBeGreaterThan(10);
  });
});
