import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  type ProviderRequest,
  scripted,
  subAgentTool,
  type SubAgentToolOptions,
  type ToolResultMessage,
} from "../index.js";

/** A parent that talked with the user once, then delegates in its second run. */
async function delegate(options: Partial<SubAgentToolOptions>, childScript: Parameters<typeof scripted>[0]) {
  const child = scripted(childScript);
  const researcher = subAgentTool({
    name: "researcher",
    description: "Researches",
    provider: child,
    ...options,
  });
  const parentModel = scripted([
    { text: "Hello Ada." },
    { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "find Ada's order" } }] },
    { text: "done" },
  ]);
  const parent = createAgent({ provider: parentModel, tools: [researcher] });
  const ends: AgentEvent[] = [];
  parent.events$.subscribe((e) => e.type === "tool_execution_end" && ends.push(e));
  await parent.prompt("My name is Ada");
  await parent.prompt("Where is my order?");
  const result = parent.messages.find((m): m is ToolResultMessage => m.role === "toolResult")!;
  return { child, parent, parentModel, result };
}

const texts = (request: ProviderRequest) =>
  request.messages.map(
    (m) => `${m.role}: ${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`,
  );

describe("sub-agent context modes", () => {
  it("isolated (the default): the child sees its task alone", async () => {
    const { child } = await delegate({}, [{ text: "found" }]);
    expect(texts(child.requests[0]!)).toEqual(["user: find Ada's order"]);
  });

  it("forked: the child sees the parent's transcript up to the call, then its task", async () => {
    const { child, result } = await delegate({ context: "forked" }, [{ text: "found" }]);
    const seen = child.requests[0]!.messages;
    expect(seen.map((m) => m.role)).toEqual(["user", "assistant", "user", "user"]);
    expect(seen[0]!.content).toBe("My name is Ada");
    expect(seen[2]!.content).toBe("Where is my order?");
    expect(seen[3]!.content).toBe("find Ada's order");
    // Never the parent's call that runs it (it has no result yet).
    expect(JSON.stringify(seen)).not.toContain('"p1"');
    expect(result.isError).toBe(false);
  });

  it("forked with a filter: the last turn only", async () => {
    const { child } = await delegate({ context: { lastTurns: 1 } }, [{ text: "found" }]);
    expect(texts(child.requests[0]!)).toEqual(["user: Where is my order?", "user: find Ada's order"]);
  });

  it("summary: the child's model summarises the parent's transcript, and the child starts from the summary", async () => {
    const { child } = await delegate({ context: "summary" }, [
      { text: "Ada asked about her order." },
      { text: "found" },
    ]);
    // The first call wrote the summary (no tools), the second is the child's run.
    expect(child.requests[0]!.tools).toEqual([]);
    expect(JSON.stringify(child.requests[0]!.messages)).toContain("My name is Ada");
    expect(texts(child.requests[1]!)).toEqual([
      "user: Summary of the conversation so far:\nAda asked about her order.",
      "user: find Ada's order",
    ]);
  });
});

describe("sub-agent output schema and result text", () => {
  it("returns the child's validated output, typed, and the parent's model reads it as JSON", async () => {
    const Order = z.object({ orderId: z.string(), shipped: z.boolean() });
    const child = scripted([{ text: '{"orderId":"A-7","shipped":true}' }]);
    const finder = subAgentTool({
      name: "finder",
      description: "Finds orders",
      provider: child,
      output: Order,
    });
    const result = await finder.execute({ task: "find it" }, {
      toolCallId: "c1",
      idempotencyKey: "c1",
      signal: new AbortController().signal,
      onUpdate() {},
      onProgress() {},
    } as never);
    const typed = typeof result === "string" ? undefined : result.details?.output;
    expectTypeOf(typed).toEqualTypeOf<{ orderId: string; shipped: boolean } | undefined>();
    expect(typed).toEqual({ orderId: "A-7", shipped: true });
    expect(typeof result === "string" ? result : result.content).toEqual([
      { type: "text", text: '{"orderId":"A-7","shipped":true}' },
    ]);
  });

  it("a child whose output never validates is an error result, never a silent success", async () => {
    const child = scripted([{ text: "not json" }, { text: "still not" }, { text: "nope" }, { text: "no" }]);
    const finder = subAgentTool({
      name: "finder",
      description: "Finds orders",
      provider: child,
      output: z.object({ orderId: z.string() }),
    });
    const result = await finder.execute({ task: "find it" }, {
      toolCallId: "c1",
      idempotencyKey: "c1",
      signal: new AbortController().signal,
      onUpdate() {},
      onProgress() {},
    } as never);
    expect(typeof result !== "string" && result.isError).toBe(true);
    expect(typeof result !== "string" && result.details?.output).toBeUndefined();
  });

  it("resultText writes what the parent's model reads of the child's run", async () => {
    const { parentModel, result } = await delegate(
      { resultText: ({ outcome, text }) => `[${outcome.messages.length} messages] ${text.toUpperCase()}` },
      [{ text: "found it" }],
    );
    expect(result.content).toEqual([{ type: "text", text: "[2 messages] FOUND IT" }]);
    expect(JSON.stringify(parentModel.requests[2]!.messages.at(-1))).toContain("[2 messages] FOUND IT");
  });

  it("refuses a bad context mode, output or resultText at setup, and a transcript of its own", () => {
    const provider = scripted([]);
    expect(() => subAgentTool({ name: "r", description: "d", provider, context: "bogus" as never })).toThrow(
      /context: must be "all", "summary", \{ lastTurns: n \}/,
    );
    expect(() => subAgentTool({ name: "r", description: "d", provider, resultText: "x" as never })).toThrow(
      /resultText must be a function/,
    );
    expect(() => subAgentTool({ name: "r", description: "d", provider, output: 42 as never })).toThrow(
      /output/,
    );
    expect(() =>
      subAgentTool({ name: "r", description: "d", provider, agentOptions: { messages: [] } as never }),
    ).toThrow(/set context on subAgentTool/);
  });
});
