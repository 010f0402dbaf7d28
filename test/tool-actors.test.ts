import { describe, expect, it } from "vitest";
import type { AnyActorRef } from "xstate";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import { eventMatching, record, sleepTool, waitCall as wait } from "./helpers.js";

const toolActors = (agent: ReturnType<typeof createAgent>) => {
  const execution = agent.actor.getSnapshot().children.toolExecution as AnyActorRef | undefined;
  return Object.keys(execution?.getSnapshot().children ?? {});
};

describe("one child actor per tool call", () => {
  it("each call is an actor whose id is the tool call id, stopped as soon as its result is recorded", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [wait("fast", 1), wait("slow1", 60), wait("slow2", 60)] },
        { text: "ok" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "slow2");
    expect(toolActors(agent).sort()).toEqual(["fast", "slow1", "slow2"]);
    await eventMatching(agent, events, (e) => e.type === "tool_execution_end" && e.toolCallId === "fast");
    await new Promise((r) => setImmediate(r));
    expect(toolActors(agent).sort()).toEqual(["slow1", "slow2"]);
    await run;
    expect(agent.actor.getSnapshot().children.toolExecution).toBeUndefined();
    expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
  });
});

describe("a turn with one call", () => {
  it("runs the call's actor as the agent's own child; approvals and abort reach it", async () => {
    let aborted = 0;
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("only", 10_000)] }]),
      tools: [sleepTool({ onAbort: () => aborted++ })],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    // No duration limit, so no deadline actor: the call is the agent's only child.
    expect(Object.keys(agent.actor.getSnapshot().children)).toEqual(["only"]);
    agent.abort();
    const { messages } = await run;
    expect(aborted).toBe(1);
    expect(messages.at(-1)).toMatchObject({
      role: "toolResult",
      toolCallId: "only",
      isError: true,
      content: [{ type: "text", text: "Tool wait aborted" }],
    });
    expect(events.filter((e) => e.type === "tool_execution_end")).toHaveLength(1);
  });

  it("stopping the agent aborts the tool that runs (it runs in its call's actor)", async () => {
    let aborted = 0;
    const agent = createAgent({
      provider: scripted([{ toolCalls: [wait("a", 10_000), wait("b", 10_000)] }]),
      tools: [sleepTool({ onAbort: () => aborted++ })],
    });
    const events = record(agent);
    void agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "b");
    agent.stop();
    await new Promise((r) => setImmediate(r));
    expect(aborted).toBe(2);
  });

  it("restored while its tool runs, the call runs again and the run completes", async () => {
    let runs = 0;
    const counting = defineTool({
      name: "count",
      description: "Counts its runs",
      parameters: z.object({ ms: z.number() }),
      execute: async ({ ms }, { signal }) => {
        runs++;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener("abort", () => clearTimeout(timer));
        });
        return `run ${runs}`;
      },
    });
    const script = [{ toolCalls: [{ id: "c", name: "count", arguments: { ms: 5 } }] }, { text: "done" }];
    const first = createAgent({ provider: scripted(script), tools: [counting] });
    const events = record(first);
    void first.prompt("go");
    await eventMatching(first, events, (e) => e.type === "tool_execution_start");
    const saved = first.getPersistedSnapshot();
    first.stop();
    const restored = createAgent({ provider: scripted([script[1]!]), tools: [counting], snapshot: saved });
    await restored.waitForIdle();
    expect(runs).toBe(2);
    expect(restored.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(restored.messages[2]).toMatchObject({
      toolCallId: "c",
      content: [{ type: "text", text: "run 2" }],
    });
  });
});
