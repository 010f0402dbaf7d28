import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";

/** A tool that waits `ms` and reports the signal it got. */
function slowTool(seen: { signal?: AbortSignal }) {
  return defineTool({
    name: "slow",
    description: "Waits",
    parameters: z.object({}),
    execute: (_args, { signal }) => {
      seen.signal = signal;
      return new Promise<string>((resolve) => setTimeout(() => resolve("done"), 5_000));
    },
  });
}

describe("stop() while a run is going", () => {
  it("settles the run's prompt() with an error, lets waitForIdle() resolve, and aborts the running tool", async () => {
    const seen: { signal?: AbortSignal } = {};
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "a", name: "slow", arguments: {} }] }, { text: "never" }]),
      tools: [slowTool(seen)],
    });
    const run = agent.prompt("go");
    const idle = agent.waitForIdle();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(seen.signal?.aborted).toBe(false);
    agent.stop();
    await expect(run).rejects.toThrow("Agent is stopped: the run was stopped before it ended");
    await expect(idle).resolves.toBeUndefined();
    expect(seen.signal?.aborted).toBe(true);
    // Later calls answer at once too.
    await expect(agent.waitForIdle()).resolves.toBeUndefined();
    await expect(agent.prompt("again")).rejects.toThrow("Agent is stopped");
  });

  it("settles a continue() in flight the same way", async () => {
    const seen: { signal?: AbortSignal } = {};
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "a", name: "slow", arguments: {} }] }]),
      tools: [slowTool(seen)],
      messages: [{ role: "user", content: "go", timestamp: 0 }],
    });
    const run = agent.continue();
    await new Promise((resolve) => setTimeout(resolve, 30));
    agent.stop();
    await expect(run).rejects.toThrow("Agent is stopped");
    expect(seen.signal?.aborted).toBe(true);
  });
});

describe("stop() with a run whose promise the app let go", () => {
  it("raises no unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const agent = createAgent({
        provider: scripted([{ toolCalls: [{ id: "a", name: "slow", arguments: {} }] }]),
        tools: [slowTool({})],
      });
      void agent.prompt("go");
      await new Promise((resolve) => setTimeout(resolve, 30));
      agent.stop();
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
