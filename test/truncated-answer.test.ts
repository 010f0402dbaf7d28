import { describe, expect, it } from "vitest";
import { z } from "zod";
import { anthropic, createAgent, defineTool, type Provider, scripted } from "../index.js";
import { anthropicMessage, startProviderServer } from "../testing.js";
import { expectEventInvariants, expectValidTranscript, record, resultText, toolResults } from "./helpers.js";

// An answer that stops at the output limit (stopReason "length") may end inside a tool call: a
// call cut off before its first argument fragment parses as `{}`. None of its calls runs; each is
// answered with an error the model reads, and the model may issue them again.

const CUT_OFF =
  /^Not run: your answer was cut off at the output token limit, so this note call may be incomplete\. Issue it again if you still need it; if its arguments are long, make them smaller/;

/** A tool whose parameters are all optional: `{}` is a valid call of it. */
function noteTool(ran: unknown[]) {
  return defineTool({
    name: "note",
    description: "Writes a note",
    parameters: z.object({ title: z.string().optional(), body: z.string().optional() }),
    execute: (args) => {
      ran.push(args);
      return "written";
    },
  });
}

describe("an answer cut off at the output limit", () => {
  it("its call never runs: an error result says why, the model re-issues it, the transcript stays valid", async () => {
    const ran: unknown[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "c1", name: "note", arguments: {} }], stopReason: "length" },
      { toolCalls: [{ id: "c2", name: "note", arguments: { title: "t", body: "short" } }] },
      { text: "Done." },
    ]);
    const agent = createAgent({ provider, tools: [noteTool(ran)] });
    const events = record(agent);
    const outcome = await agent.prompt("write a note");

    expect(outcome.reason).toBe("stop");
    expect(ran).toEqual([{ title: "t", body: "short" }]);
    const [cut, rerun] = toolResults(agent.messages);
    expect(cut).toMatchObject({ toolCallId: "c1", toolName: "note", isError: true });
    expect(resultText(cut!)).toMatch(CUT_OFF);
    expect(rerun).toMatchObject({ toolCallId: "c2", isError: false });
    // Events show it: the call has its start and an error end with the same text.
    const c1 = events.filter(
      (e) => e.type.startsWith("tool_execution") && "toolCallId" in e && e.toolCallId === "c1",
    );
    expect(c1.map((e) => e.type)).toEqual(["tool_execution_start", "tool_execution_end"]);
    expect(c1[1]).toMatchObject({ isError: true, result: { isError: true } });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("with eager execution, the call the stream ended on never starts", async () => {
    const ran: unknown[] = [];
    // Two calls: c1 complete (the model went on to c2), c2 cut off before its arguments.
    const provider: Provider = {
      id: "cut",
      model: "m",
      async *stream(request) {
        if (request.messages.some((m) => m.role === "toolResult")) {
          yield { type: "start" };
          yield { type: "text_delta", delta: "ok" };
          yield { type: "done", stopReason: "stop" };
          return;
        }
        yield { type: "start" };
        yield { type: "toolcall_start", id: "c1", name: "note" };
        yield { type: "toolcall_end", id: "c1", name: "note", arguments: { title: "one" } };
        yield { type: "toolcall_start", id: "c2", name: "note" };
        yield { type: "toolcall_end", id: "c2", name: "note", arguments: {} };
        yield { type: "done", stopReason: "length" };
      },
    };
    for (const toolExecution of ["parallel", "sequential"] as const) {
      ran.length = 0;
      const agent = createAgent({
        provider,
        tools: [noteTool(ran)],
        eagerToolExecution: true,
        toolExecution,
      });
      const events = record(agent);
      await agent.prompt("write notes");
      expect(ran, toolExecution).not.toContainEqual({});
      const results = toolResults(agent.messages);
      expect(results.map((r) => r.toolCallId)).toEqual(["c1", "c2"]);
      expect(resultText(results[1]!), toolExecution).toMatch(CUT_OFF);
      // c1 had started eagerly only if the model had finished it: it ran, or was stopped as aborted.
      if (ran.length === 0)
        expect(resultText(results[0]!)).toMatch(/^(Not run: your answer was cut off|Tool note aborted)/);
      expectValidTranscript(agent.messages);
      expectEventInvariants(events);
    }
  });

  it("over the Anthropic wire: a tool_use cut by max_tokens is answered, not run", async () => {
    const server = await startProviderServer();
    try {
      server.reply(
        {
          type: "sse",
          frames: anthropicMessage({
            blocks: [{ type: "tool_use", id: "toolu_1", name: "note", json: ['{"title": "a very lo'] }],
            stopReason: "max_tokens",
          }),
        },
        { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["I will split it."] }] }) },
      );
      const ran: unknown[] = [];
      const agent = createAgent({
        provider: anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-test", baseURL: server.url }),
        tools: [noteTool(ran)],
      });
      const outcome = await agent.prompt("write a long note");
      expect(outcome.reason).toBe("stop");
      expect(ran).toEqual([]);
      const [cut] = toolResults(agent.messages);
      expect(cut).toMatchObject({ toolCallId: "toolu_1", isError: true });
      expect(resultText(cut!)).toMatch(CUT_OFF);
      // The model got the error result with its call on the next request.
      const second = server.requests[1]!.body as { messages: { role: string; content: unknown }[] };
      expect(JSON.stringify(second.messages.at(-1))).toContain("cut off at the output token limit");
      expectValidTranscript(agent.messages);
    } finally {
      await server.close();
    }
  });
});
