import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentEvent, createAgent, defineTool, scripted } from "../index.js";

// A tool that throws: the model gets the message, the developer gets the rest (name, stack, cause,
// an Error's own fields, a thrown non-Error as data), JSON-safe so snapshots keep it.

function throwing(name: string, error: () => unknown) {
  return defineTool({
    name,
    description: "Throws",
    parameters: z.object({}),
    execute: () => {
      throw error();
    },
  });
}

async function runCall(tool: ReturnType<typeof throwing>) {
  const provider = scripted([{ toolCalls: [{ id: "c1", name: tool.name }] }, { text: "noted" }]);
  const agent = createAgent({ provider, tools: [tool] });
  const ends: Extract<AgentEvent, { type: "tool_execution_end" }>[] = [];
  agent.events$.subscribe((event) => event.type === "tool_execution_end" && ends.push(event));
  await agent.prompt("go");
  const modelSaw = provider.requests[1]!.messages.find((message) => message.role === "toolResult");
  return { agent, end: ends[0]!, modelSaw };
}

describe("a tool that throws keeps its error", () => {
  it("an Error: the model sees its message; details.error and the event keep name, stack, cause and fields", async () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
    const { agent, end, modelSaw } = await runCall(
      throwing("query", () =>
        Object.assign(new TypeError("database unreachable", { cause }), { retryable: true }),
      ),
    );
    expect(modelSaw).toMatchObject({
      content: [{ type: "text", text: "database unreachable" }],
      isError: true,
    });
    expect(end.isError).toBe(true);
    expect(end.result.details).toEqual({
      error: {
        name: "TypeError",
        message: "database unreachable",
        stack: expect.stringMatching(/^TypeError: database unreachable\n\s+at /),
        fields: { retryable: true },
        cause: {
          name: "Error",
          message: "connect ECONNREFUSED 127.0.0.1:5432",
          stack: expect.stringContaining("ECONNREFUSED"),
          fields: { code: "ECONNREFUSED" },
        },
      },
    });
    // The transcript's result carries the same details, and survives a JSON round trip (snapshots).
    const result = agent.messages.find((message) => message.role === "toolResult");
    expect(result).toMatchObject({ details: end.result.details });
    const snapshot = JSON.parse(JSON.stringify(agent.getPersistedSnapshot()));
    const restored = createAgent({ provider: scripted([]), snapshot });
    expect(restored.messages.find((message) => message.role === "toolResult")).toMatchObject({
      details: end.result.details,
    });
  });

  it("a thrown object is rendered as JSON, not [object Object], and kept as data", async () => {
    const { end, modelSaw } = await runCall(throwing("odd", () => ({ code: 42, reason: "quota" })));
    expect(modelSaw).toMatchObject({ content: [{ type: "text", text: '{"code":42,"reason":"quota"}' }] });
    expect(end.result.details).toEqual({
      error: {
        name: "NonError",
        message: '{"code":42,"reason":"quota"}',
        value: { code: 42, reason: "quota" },
      },
    });
  });

  it("a thrown string, and a value JSON cannot hold (a cycle, a bigint), stay JSON-safe", async () => {
    const text = await runCall(throwing("str", () => "plain failure"));
    expect(text.modelSaw).toMatchObject({ content: [{ text: "plain failure" }] });
    const cyclic: Record<string, unknown> = { id: 7n };
    cyclic.self = cyclic;
    const odd = await runCall(throwing("cyclic", () => cyclic));
    expect(odd.end.result.details).toEqual({
      error: { name: "NonError", message: '{"id":"7n","self":"[…]"}', value: { id: "7n", self: "[…]" } },
    });
    expect(() => JSON.stringify(odd.agent.getPersistedSnapshot())).not.toThrow();
  });
});
