import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentMessage, createAgent, defineTool, scripted } from "../index.js";
import { eventMatching, expectValidTranscript, record, resultText, toolResults } from "./helpers.js";

/** `fixedMs` stands in for a machine that is faster after the restart. */
function countingTool(runs: string[], fixedMs?: number) {
  return defineTool({
    name: "work",
    description: "does slow work",
    parameters: z.object({ job: z.string(), ms: z.number() }),
    execute: ({ job, ms }, { signal }) =>
      new Promise<string>((resolve, reject) => {
        runs.push(job);
        const t = setTimeout(() => resolve(`finished ${job}`), fixedMs ?? ms);
        signal.addEventListener("abort", () => {
          clearTimeout(t);
          reject(new Error("aborted"));
        });
      }),
  });
}

describe("persisted snapshots", () => {
  it("persist while a tool runs, restore in a new agent, and the run completes with nothing lost", async () => {
    const runs: string[] = [];
    const steps = [
      {
        toolCalls: [
          { id: "quick", name: "work", arguments: { job: "quick", ms: 1 } },
          { id: "long", name: "work", arguments: { job: "long", ms: 10_000 } },
        ],
      },
      { text: "all done" },
    ];
    const first = createAgent({
      provider: scripted(steps),
      tools: [countingTool(runs)],
      systemPrompt: "sys",
    });
    const events = record(first);
    void first.prompt("start");
    await eventMatching(first, events, (e) => e.type === "tool_execution_end" && e.toolCallId === "quick");

    const json = JSON.stringify(first.getPersistedSnapshot());
    first.stop();
    expect(json).not.toContain("apiKey");

    // A fresh process: new provider (it answers the next call), same tools, the saved snapshot.
    const resumedRuns: string[] = [];
    const provider = scripted([{ text: "all done" }]);
    const restored = createAgent({
      provider,
      tools: [countingTool(resumedRuns, 5)],
      systemPrompt: "sys",
      snapshot: JSON.parse(json),
    });
    const restoredEvents = record(restored);
    expect(restored.state).toBe("running.executing");
    await restored.waitForIdle();

    // The call without a recorded result ran again (at-least-once); the finished one did not.
    expect(resumedRuns).toEqual(["long"]);
    const results = toolResults(restored.messages);
    expect(results.map((r) => [r.toolCallId, resultText(r)])).toEqual([
      ["quick", "finished quick"],
      ["long", "finished long"],
    ]);
    expect(restored.messages.map((m: AgentMessage) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
    ]);
    expect(provider.requests[0]!.messages).toHaveLength(4);
    expect(restoredEvents.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expectValidTranscript(restored.messages);
  });

  it("a snapshot taken mid-stream restarts the model call", async () => {
    const first = createAgent({ provider: scripted([{ text: "slow answer", delayMs: 50 }]) });
    const events = record(first);
    void first.prompt("hello");
    await eventMatching(first, events, (e) => e.type === "turn_start");
    const snapshot = first.getPersistedSnapshot();
    first.stop();

    const provider = scripted([{ text: "restarted answer" }]);
    const restored = createAgent({ provider, snapshot });
    await restored.waitForIdle();
    expect(provider.calls).toBe(1);
    expect(restored.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(restored.messages[1]).toMatchObject({ content: [{ type: "text", text: "restarted answer" }] });
  });

  it("an idle snapshot keeps the transcript and queues", async () => {
    const first = createAgent({ provider: scripted([{ text: "one" }]) });
    await first.prompt("hi");
    first.followUp("later");
    const restored = createAgent({
      provider: scripted([{ text: "two" }]),
      snapshot: first.getPersistedSnapshot(),
    });
    expect(restored.messages).toEqual(first.messages);
    const { messages: added } = await restored.continue();
    expect(added.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(added[0]).toMatchObject({ content: "later" });
  });
});
