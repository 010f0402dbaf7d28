import { describe, expect, it } from "vitest";
import { type AgentEvent, createAgent, type Provider, type ProviderEvent, scripted } from "../index.js";
import { record, sleepTool } from "./helpers.js";

/** A provider that interleaves the argument deltas of two calls, then answers in text. */
function interleaving(): Provider {
  let call = 0;
  return {
    id: "interleaving",
    model: "test",
    async *stream(): AsyncIterable<ProviderEvent> {
      if (call++ > 0) {
        yield { type: "text_delta", delta: "done" };
        yield { type: "done", stopReason: "stop" };
        return;
      }
      yield { type: "toolcall_start", id: "a", name: "wait" };
      yield { type: "toolcall_start", id: "b", name: "wait" };
      yield { type: "toolcall_delta", id: "a", delta: '{"ms":1,' };
      yield { type: "toolcall_delta", id: "b", delta: '{"ms":2,' };
      yield { type: "toolcall_delta", id: "a", delta: '"label":"A"}' };
      yield { type: "toolcall_end", id: "a", name: "wait", arguments: { ms: 1, label: "A" } };
      yield { type: "toolcall_delta", id: "b", delta: '"label":"B"}' };
      yield { type: "toolcall_end", id: "b", name: "wait", arguments: { ms: 2, label: "B" } };
      yield { type: "done", stopReason: "toolUse" };
    },
  };
}

const toolUpdates = (events: AgentEvent[]) =>
  events.flatMap((e) =>
    e.type === "message_update" && "toolCallId" in e ? [`${e.kind}:${e.toolCallId}:${e.delta}`] : [],
  );

describe("message_update names the tool call it belongs to", () => {
  it("carries the provider's call id when the deltas of two calls interleave", async () => {
    const agent = createAgent({ provider: interleaving(), tools: [sleepTool()] });
    const events = record(agent);
    await agent.prompt("go");

    expect(toolUpdates(events)).toEqual([
      "toolcall_start:a:",
      "toolcall_start:b:",
      'toolcall_delta:a:{"ms":1,',
      'toolcall_delta:b:{"ms":2,',
      'toolcall_delta:a:"label":"A"}',
      "toolcall_end:a:",
      'toolcall_delta:b:"label":"B"}',
      "toolcall_end:b:",
    ]);
    // Text updates name no call.
    const text = events.find((e) => e.type === "message_update" && e.kind === "text_delta");
    expect(text && "toolCallId" in text).toBe(false);
  });

  it("names the call on every update of a scripted call too", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "t1", name: "wait", arguments: { ms: 1, label: "x" } }] },
        { text: "ok" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    await agent.prompt("go");
    const updates = toolUpdates(events);
    expect(updates.length).toBeGreaterThanOrEqual(3);
    expect(updates.every((u) => u.split(":")[1] === "t1")).toBe(true);
  });
});
