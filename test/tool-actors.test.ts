import { describe, expect, it } from "vitest";
import type { AnyActorRef } from "xstate";
import { createAgent, scripted } from "../index.js";
import { eventMatching, record, sleepTool } from "./helpers.js";

const wait = (id: string, ms: number) => ({ id, name: "wait", arguments: { ms, label: id } });
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
