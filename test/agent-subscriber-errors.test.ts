import { config, filter, map } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import { expectValidTranscript } from "./helpers.js";

// RxJS reports an error thrown in a subscriber's callback by rethrowing it in a timer, which ends a
// Node process: one bug in an app's listener would take down every agent the process serves. The
// streams the package hands out keep such an error with its subscriber instead.

afterEach(() => {
  vi.restoreAllMocks();
  config.onUnhandledError = null;
});

/** Lets timers due now run: RxJS's own report of an unhandled error is a `setTimeout(0)`. */
const timersRun = () => new Promise((resolve) => setTimeout(resolve, 20));

function agentWithTool() {
  const echo = defineTool({
    name: "echo",
    description: "Echoes",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => text,
  });
  return createAgent({
    provider: scripted([
      { toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
      { text: "done" },
      { text: "again" },
    ]),
    tools: [echo],
  });
}

describe("a subscriber of events$ that throws", () => {
  it("is reported once on the console; it stays subscribed, the run ends as usual and nothing is rethrown", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      const agent = agentWithTool();
      const seen: string[] = [];
      agent.events$.subscribe((event) => {
        seen.push(event.type);
        throw new Error("the listener is broken");
      });
      await agent.prompt("go");
      await agent.prompt("more");
      await timersRun();
      expect(agent.messages.map((m) => m.role)).toEqual([
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "user",
        "assistant",
      ]);
      expectValidTranscript(agent.messages);
      // Every event reached it, across both runs, although it threw on each.
      expect(seen.filter((type) => type === "agent_end")).toHaveLength(2);
      expect(seen.filter((type) => type === "tool_execution_end")).toHaveLength(1);
      const reports = printed.mock.calls.filter((call) => String(call[0]).includes("the listener is broken"));
      expect(reports).toHaveLength(1);
      expect(String(reports[0]![0])).toContain("agent.events$");
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });

  it("at the end of an operator chain is kept the same way, and other subscribers see every event", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const agent = agentWithTool();
    const ends: string[] = [];
    agent.events$
      .pipe(
        filter((event) => event.type === "agent_end"),
        map((event) => event.type),
      )
      .subscribe((type) => {
        ends.push(type);
        throw new Error("piped listener is broken");
      });
    const healthy: string[] = [];
    agent.events$.subscribe((event) => healthy.push(event.type));
    await agent.prompt("go");
    await timersRun();
    expect(ends).toEqual(["agent_end"]);
    expect(healthy[0]).toBe("agent_start");
    expect(healthy.at(-1)).toBe("agent_end");
  });

  it("goes to RxJS's config.onUnhandledError when the app set one, every time", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const handled: string[] = [];
    config.onUnhandledError = (error) => handled.push((error as Error).message);
    const agent = agentWithTool();
    agent.events$.subscribe({
      next: (event) => {
        if (event.type === "agent_start" || event.type === "agent_end") throw new Error(event.type);
      },
    });
    await agent.prompt("go");
    await timersRun();
    expect(handled).toEqual(["agent_start", "agent_end"]);
    expect(printed.mock.calls.some((call) => String(call[0]).includes("agent_start"))).toBe(false);
  });

  it("snapshot$ keeps its subscribers' errors too", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => {});
    const agent = agentWithTool();
    let snapshots = 0;
    agent.snapshot$.subscribe(() => {
      snapshots++;
      throw new Error("the snapshot store is down");
    });
    await agent.prompt("go");
    await timersRun();
    expect(snapshots).toBeGreaterThan(1);
    expect(agent.messages.at(-1)?.role).toBe("assistant");
    expect(printed.mock.calls.filter((call) => String(call[0]).includes("snapshot store"))).toHaveLength(1);
  });
});

describe("the guarded streams stay RxJS streams", () => {
  it("a subscriber from another copy of RxJS (firstValueFrom of an app's own rxjs) unsubscribes from the agent", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    // What another RxJS copy's Subscriber looks like to ours: not an instance, the same shape.
    const received: string[] = [];
    const teardowns: ((() => void) | { unsubscribe(): void })[] = [];
    const foreign = {
      closed: false,
      next(event: { type: string }) {
        if (!this.closed) received.push(event.type);
      },
      error: () => {},
      complete: () => {},
      add: (teardown: (() => void) | { unsubscribe(): void }) => teardowns.push(teardown),
      remove: () => {},
      unsubscribe() {
        if (this.closed) return;
        this.closed = true;
        for (const teardown of teardowns) {
          if (typeof teardown === "function") teardown();
          else teardown.unsubscribe();
        }
      },
    };
    agent.events$.subscribe(foreign as never);
    await agent.prompt("first");
    foreign.unsubscribe();
    const before = received.length;
    await agent.prompt("second");
    expect(before).toBeGreaterThan(0);
    expect(received).toHaveLength(before);
    // The source handed its teardown to that subscriber: its unsubscribing reaches the agent's subject.
    expect(teardowns.length).toBeGreaterThan(0);
  });
});
