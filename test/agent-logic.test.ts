import { describe, expect, it } from "vitest";
import type { AssistantMessage } from "../index.js";
import { callsOf, hasCalls, newRun, openedRun } from "../rules/agent.logic.js";

const assistant = (content: AssistantMessage["content"]): AssistantMessage => ({
  role: "assistant",
  content,
  provider: "test",
  model: "test",
  usage: newRun().usage,
  stopReason: content.some((block) => block.type === "toolCall") ? "toolUse" : "stop",
  timestamp: 0,
});

describe("the run's bookkeeping", () => {
  it("opens a turn: counted, its per-turn fields reset, the run's own kept", () => {
    const message = assistant([{ type: "text", text: "hi" }]);
    const run = {
      ...newRun(3),
      turn: 4,
      turnMessage: message,
      executionSpawned: true,
      overflowRetried: true,
      overflowRetries: 2,
      limitText: "Max turns reached (4/4)",
      answeringLimit: true,
    };
    const opened = openedRun(run);
    expect(opened).toMatchObject({
      turn: 5,
      firstMessage: 3,
      turnMessage: undefined,
      turnResults: [],
      executionSpawned: false,
      overflowRetried: false,
      overflowRetries: 0,
      limitText: "Max turns reached (4/4)",
      answeringLimit: true,
    });
    expect(opened.usage).toBe(run.usage);
    // Every field is there (absent ones undefined), so every run of a turn has one shape; JSON is unchanged.
    expect(Object.keys(opened)).toEqual(
      expect.arrayContaining(["endReason", "errorKind", "loop", "overflowError"]),
    );
    expect(JSON.parse(JSON.stringify(opened))).not.toHaveProperty("endReason");
  });

  it("tells a message that asks for tools from one that does not, as callsOf does", () => {
    const text = assistant([{ type: "text", text: "done" }]);
    const call = assistant([
      { type: "text", text: "let me look" },
      { type: "toolCall", id: "c1", name: "read", arguments: {} },
    ]);
    expect(hasCalls(undefined)).toBe(false);
    expect(hasCalls(text)).toBe(false);
    expect(hasCalls(call)).toBe(true);
    expect(callsOf(call).length > 0).toBe(hasCalls(call));
  });
});
