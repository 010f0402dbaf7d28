import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import { expectEventInvariants, record, resultText, toolResults } from "./helpers.js";

const echo = defineTool({
  name: "echo",
  description: "echo",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => ({ content: [{ type: "text", text }], details: { length: text.length } }),
});
const streaming = defineTool({
  name: "stream",
  description: "streams",
  parameters: z.object({}),
  execute: async (_, ctx) => {
    for (const part of ["one", "two", "three"]) {
      ctx.onUpdate(part);
      await Promise.resolve();
    }
    ctx.onProgress("almost there");
    return "finished";
  },
});

describe("tool hooks", () => {
  it("beforeToolCall blocks with a reason (or the default text) and can replace arguments", async () => {
    const provider = scripted([
      {
        toolCalls: [
          { id: "a", name: "echo", arguments: { text: "rm -rf" } },
          { id: "b", name: "echo", arguments: { text: "secret" } },
          { id: "c", name: "echo", arguments: { text: "hello" } },
        ],
      },
      { text: "ok" },
    ]);
    const agent = createAgent({
      provider,
      tools: [echo],
      hooks: {
        beforeToolCall: async ({ toolCall, args }) => {
          const { text } = args as { text: string };
          if (text === "rm -rf") return { block: true, reason: "Dangerous" };
          if (text === "secret") return { block: true };
          if (toolCall.id === "c") return { args: { text: "HELLO" } };
        },
      },
    });
    await agent.prompt("go");
    expect(toolResults(agent.messages).map((r) => [resultText(r), r.isError])).toEqual([
      ["Dangerous", true],
      ["Tool echo was blocked", true],
      ["HELLO", false],
    ]);
  });

  it("afterToolCall replaces content, details and the error flag", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "a", name: "echo", arguments: { text: "x" } }] },
        { text: "ok" },
      ]),
      tools: [echo],
      hooks: {
        afterToolCall: ({ result, isError }) => {
          expect(isError).toBe(false);
          expect(result.details).toEqual({ length: 1 });
          return {
            content: [{ type: "text", text: "redacted" }],
            details: { redacted: true },
            isError: true,
          };
        },
      },
    });
    const events = record(agent);
    await agent.prompt("go");
    const [result] = toolResults(agent.messages);
    expect(result).toMatchObject({
      content: [{ type: "text", text: "redacted" }],
      details: { redacted: true },
      isError: true,
    });
    expect(events.find((e) => e.type === "tool_execution_end")).toMatchObject({ isError: true });
  });

  it("updates pass through beforeToolUpdate (drop or replace) and precede the call's end", async () => {
    const seenAfter: string[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "s", name: "stream" }] }, { text: "ok" }]),
      tools: [streaming],
      hooks: {
        beforeToolUpdate: async ({ partialResult }) => {
          const text = resultText({ content: partialResult.content } as never);
          if (text === "two") return false;
          if (text === "three") return { partialResult: { content: [{ type: "text", text: "THREE" }] } };
        },
        afterToolUpdate: ({ partialResult }) => {
          seenAfter.push(resultText({ content: partialResult.content } as never));
        },
      },
    });
    const events = record(agent);
    await agent.prompt("go");
    const toolEvents = events.filter((e) => e.type.startsWith("tool_"));
    expect(
      toolEvents.map((e) =>
        e.type === "tool_execution_update"
          ? `update:${resultText({ content: e.partialResult.content } as never)}`
          : e.type === "tool_progress"
            ? `progress:${e.text}`
            : e.type,
      ),
    ).toEqual([
      "tool_execution_start",
      "update:one",
      "update:THREE",
      "progress:almost there",
      "tool_execution_end",
    ]);
    expect(seenAfter).toEqual(["one", "THREE"]);
    expectEventInvariants(events);
  });

  it("a hook that throws becomes an error result, never a crash", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "a", name: "echo", arguments: { text: "x" } }] },
        { text: "ok" },
      ]),
      tools: [echo],
      hooks: {
        beforeToolCall: () => {
          throw new Error("hook broke");
        },
      },
    });
    await agent.prompt("go");
    expect(resultText(toolResults(agent.messages)[0]!)).toBe("hook broke");
  });
});
