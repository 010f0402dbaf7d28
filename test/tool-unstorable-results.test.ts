import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";

// A tool whose result JSON cannot hold (a BigInt from a database driver, an ORM object with a cycle):
// the transcript is stored and sent as JSON, and a durable run journals the result, where such a
// value fails every retry. In process and durable alike, the model reads an error, as for a tool
// that throws, and the run goes on.

function returning(name: string, result: () => unknown) {
  return defineTool({
    name,
    description: "Answers with what it is given",
    parameters: z.object({}),
    execute: () => result() as { content: { type: "text"; text: string }[] },
  });
}

async function runCall(tool: ReturnType<typeof returning>) {
  const provider = scripted([{ toolCalls: [{ id: "c1", name: tool.name }] }, { text: "noted" }]);
  const agent = createAgent({ provider, tools: [tool] });
  const outcome = await agent.prompt("go");
  const modelSaw = provider.requests[1]!.messages.find((message) => message.role === "toolResult");
  return { agent, outcome, modelSaw };
}

describe("a tool result JSON cannot hold", () => {
  it("a BigInt in details: the model reads an error naming the tool and the problem; the run goes on", async () => {
    const tool = returning("count_rows", () => ({
      content: [{ type: "text", text: "42 rows" }],
      details: { rows: 42n },
    }));
    const { agent, outcome, modelSaw } = await runCall(tool);
    expect(outcome.reason).toBe("stop");
    expect(modelSaw).toMatchObject({
      isError: true,
      content: [
        {
          type: "text",
          text: "Tool count_rows returned a result that cannot be stored as JSON: Do not know how to serialize a BigInt",
        },
      ],
    });
    // What the agent keeps is JSON: a snapshot of it can be written.
    expect(() => JSON.stringify(agent.messages)).not.toThrow();
    expect(agent.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "noted" }],
    });
  });

  it("a cycle in details: the same, in one line", async () => {
    const tool = returning("load_user", () => {
      const user: Record<string, unknown> = { name: "Ada" };
      user.self = user;
      return { content: [{ type: "text", text: "Ada" }], details: { user } };
    });
    const { outcome, modelSaw } = await runCall(tool);
    expect(outcome.reason).toBe("stop");
    const text = (modelSaw!.content as { text: string }[])[0]!.text;
    expect(text).toMatch(
      /^Tool load_user returned a result that cannot be stored as JSON: Converting circular structure to JSON/,
    );
    expect(text).not.toContain("\n");
    expect(modelSaw).toMatchObject({ isError: true });
  });

  it("an afterToolCall hook that adds such details is caught the same way", async () => {
    const tool = returning("plain", () => "fine");
    const provider = scripted([{ toolCalls: [{ id: "c1", name: "plain" }] }, { text: "noted" }]);
    const agent = createAgent({
      provider,
      tools: [tool],
      hooks: { afterToolCall: () => ({ details: { at: 1n } }) },
    });
    expect((await agent.prompt("go")).reason).toBe("stop");
    const modelSaw = provider.requests[1]!.messages.find((message) => message.role === "toolResult");
    expect(modelSaw).toMatchObject({ isError: true });
    expect(JSON.stringify(modelSaw!.content)).toContain(
      "Tool plain returned a result that cannot be stored as JSON",
    );
  });

  it("a result JSON can hold is untouched", async () => {
    const tool = returning("ok", () => ({
      content: [{ type: "text", text: "fine" }],
      details: { at: "2026-01-01" },
    }));
    const { modelSaw } = await runCall(tool);
    expect(modelSaw).toMatchObject({ content: [{ type: "text", text: "fine" }] });
    expect(modelSaw).not.toMatchObject({ isError: true });
  });
});
