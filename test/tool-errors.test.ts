import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import { expectEventInvariants, expectValidTranscript, record, resultText, toolResults } from "./helpers.js";

const add = defineTool({
  name: "add",
  description: "Adds",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const thrower = defineTool({
  name: "explode",
  description: "Throws",
  parameters: z.object({}),
  execute: () => {
    throw new Error("kaboom");
  },
});
const hang = defineTool({
  name: "hang",
  description: "Ignores its signal",
  parameters: z.object({}),
  timeoutMs: 30,
  execute: () => new Promise<string>(() => {}),
});

describe("bad tool calls give the model an error result and the run goes on", () => {
  it("throwing, unknown, invalid arguments and hanging tools", async () => {
    const provider = scripted([
      {
        toolCalls: [
          { id: "t1", name: "explode" },
          { id: "t2", name: "no_such_tool", arguments: { x: 1 } },
          { id: "t3", name: "add", arguments: { a: "one", b: 2 } },
          { id: "t4", name: "hang" },
          { id: "t5", name: "add", arguments: { a: 1, b: 2 } },
        ],
      },
      { text: "I see the errors" },
    ]);
    const agent = createAgent({ provider, tools: [add, thrower, hang] });
    const events = record(agent);
    await agent.prompt("go");

    const results = toolResults(agent.messages);
    expect(results.map((r) => [r.toolCallId, r.isError])).toEqual([
      ["t1", true],
      ["t2", true],
      ["t3", true],
      ["t4", true],
      ["t5", false],
    ]);
    expect(resultText(results[0]!)).toBe("kaboom");
    expect(resultText(results[1]!)).toBe("Tool no_such_tool not found");
    expect(resultText(results[2]!)).toMatch(
      /^Validation failed for tool "add": ✖ Invalid input: expected number, received string\n {2}→ at a/,
    );
    expect(resultText(results[3]!)).toBe("Tool hang timed out after 30 ms");
    expect(resultText(results[4]!)).toBe("3");
    // The model saw every error on the next call.
    const seen = provider.requests[1]!.messages.filter((m) => m.role === "toolResult");
    expect(seen).toHaveLength(5);
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("the agent-wide toolTimeoutMs applies to tools without their own", async () => {
    const slow = defineTool({
      name: "slow",
      description: "slow",
      parameters: z.object({}),
      execute: (_, { signal }) =>
        new Promise<string>((resolve) => {
          const t = setTimeout(() => resolve("late"), 5_000);
          signal.addEventListener("abort", () => clearTimeout(t));
        }),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "s", name: "slow" }] }, { text: "ok" }]),
      tools: [slow],
      toolTimeoutMs: 20,
    });
    await agent.prompt("go");
    expect(resultText(toolResults(agent.messages)[0]!)).toBe("Tool slow timed out after 20 ms");
  });

  it("a tool's signal fires on timeout", async () => {
    let reason: unknown;
    const watcher = defineTool({
      name: "watcher",
      description: "w",
      parameters: z.object({}),
      timeoutMs: 10,
      execute: (_, { signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener("abort", () => {
            reason = signal.reason;
            resolve("stopped");
          });
        }),
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ id: "w", name: "watcher" }] }, { text: "ok" }]),
      tools: [watcher],
    });
    await agent.prompt("go");
    expect((reason as Error).name).toBe("TimeoutError");
  });
});

describe("arguments a provider could not parse", () => {
  it("tell the model its JSON was broken, even for a tool whose arguments are all optional", async () => {
    const optional = defineTool({
      name: "opt",
      description: "optional args",
      parameters: z.object({ path: z.string().optional() }),
      execute: () => "ran",
    });
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "j", name: "opt", arguments: { __invalid_json: '{"path": "a' } }] },
        { text: "ok" },
      ]),
      tools: [optional],
    });
    await agent.prompt("go");
    const [result] = toolResults(agent.messages);
    expect(result?.isError).toBe(true);
    expect(resultText(result!)).toBe(
      'Validation failed for tool "opt": the arguments are not valid JSON: {"path": "a',
    );
  });
});
