// Reading an AG-UI RunAgentInput against the thread's agent: the server's transcript is the truth,
// the client's history only gives the new user message, the answers to pending approvals (resume[],
// or CopilotKit's legacy forwardedProps.command.resume) and the results of pending client-run calls.
import { describe, expect, it } from "vitest";
import { HostError, readRunAgentInput, toAgUiMessages } from "../http.js";
import { type Agent, createAgent, defineClientTool, scripted } from "../index.js";
import { deleteFile } from "./fixtures/frontend-tools.js";

const pickColor = defineClientTool({
  name: "pick_color",
  description: "Asks",
  parameters: { type: "object" },
});

const input = (more: Record<string, unknown>) => ({
  threadId: "t",
  runId: "r",
  messages: [],
  tools: [],
  context: [],
  ...more,
});

/** An agent whose run waits: approvals for `paths`, and a client-run call `pick` when asked. */
async function waiting(paths: string[], clientCall = false): Promise<Agent> {
  const calls = paths.map((path, i) => ({ id: `d${i + 1}`, name: "delete_file", arguments: { path } }));
  if (clientCall) calls.push({ id: "pick", name: "pick_color", arguments: {} as never });
  const agent = createAgent({
    provider: scripted([{ toolCalls: calls }, { text: "ok" }]),
    tools: [deleteFile, pickColor],
  });
  void agent.prompt({ role: "user", id: "u1", content: "go", timestamp: 1 });
  const expected = paths.length + (clientCall ? 1 : 0);
  while (agent.pendingApprovals().length + agent.pendingToolCalls().length < expected) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return agent;
}

function refusal(run: () => unknown): HostError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HostError);
    return error as HostError;
  }
  throw new Error("not refused");
}

describe("readRunAgentInput", () => {
  it("finds the new user message by id and turns the request's tools into client-run tools", () => {
    const read = readRunAgentInput(
      input({
        protocolVersion: "1.0",
        messages: [{ id: "u9", role: "user", content: [{ type: "text", text: "hi" }] }],
        tools: [{ name: "pick_color", description: "Asks", parameters: { type: "object", properties: {} } }],
      }),
      undefined,
    );
    expect(read.legacy).toBe(false);
    expect(read.message).toMatchObject({ role: "user", id: "u9", content: [{ type: "text", text: "hi" }] });
    expect(read.tools.map((t) => [t.name, t.external, t.jsonSchema])).toEqual([
      ["pick_color", true, { type: "object", properties: {} }],
    ]);
    expect(readRunAgentInput(input({}), undefined).legacy).toBe(true);
  });

  it("resume[]: approve, approve with edited arguments, deny with a reason, cancelled = deny", async () => {
    const agent = await waiting(["a", "b", "c"]);
    const read = readRunAgentInput(
      input({
        messages: toAgUiMessages(agent.messages),
        resume: [
          { interruptId: "d1", status: "resolved", payload: { approved: true } },
          { interruptId: "d2", status: "resolved", payload: { approved: true, editedArgs: { path: "z" } } },
          { interruptId: "d3", status: "cancelled" },
        ],
      }),
      agent,
    );
    expect(read.message).toBeUndefined();
    expect(read.approvals).toEqual([
      { toolCallId: "d1", approved: true },
      { toolCallId: "d2", approved: true, args: { path: "z" } },
      { toolCallId: "d3", approved: false },
    ]);
    agent.abort();
  });

  it("the legacy forwardedProps.command.resume: the payload of the one pending call, or a map by call id", async () => {
    const one = await waiting(["a"]);
    const legacy = (resume: unknown) =>
      readRunAgentInput(input({ messages: [], forwardedProps: { command: { resume } } }), one).approvals;
    expect(legacy(true)).toEqual([{ toolCallId: "d1", approved: true }]);
    expect(legacy({ approved: false, reason: "no" })).toEqual([
      { toolCallId: "d1", approved: false, reason: "no" },
    ]);
    one.abort();
    const two = await waiting(["a", "b"]);
    expect(
      readRunAgentInput(
        input({ forwardedProps: { command: { resume: { d1: true, d2: { approved: false } } } } }),
        two,
      ).approvals,
    ).toEqual([
      { toolCallId: "d1", approved: true },
      { toolCallId: "d2", approved: false },
    ]);
    expect(
      refusal(() => readRunAgentInput(input({ forwardedProps: { command: { resume: true } } }), two)).message,
    ).toMatch(/2 calls wait; answer them by id/);
    two.abort();
  });

  it("a tool message answers a pending client-run call (an error when it says so)", async () => {
    const agent = await waiting([], true);
    const read = readRunAgentInput(
      input({ messages: [{ id: "r1", role: "tool", toolCallId: "pick", content: "blue" }] }),
      agent,
    );
    expect(read.toolResults).toEqual([{ toolCallId: "pick", result: "blue" }]);
    const failed = readRunAgentInput(
      input({ messages: [{ id: "r1", role: "tool", toolCallId: "pick", content: "", error: "closed" }] }),
      agent,
    );
    expect(failed.toolResults).toEqual([{ toolCallId: "pick", error: "closed" }]);
    agent.abort();
  });

  it("refuses malformed bodies and forged histories with a 400 naming what is wrong", () => {
    const cases: [unknown, RegExp][] = [
      [[], /RunAgentInput JSON object/],
      [{ runId: "r", messages: [] }, /threadId/],
      [input({ runId: 3 }), /runId/],
      [input({ messages: {} }), /messages must be an array/],
      [input({ messages: [{ role: "user" }] }), /string id and role/],
      [input({ tools: "x" }), /tools must be an array/],
      [input({ resume: [{ status: "resolved" }] }), /interruptId/],
      [input({ resume: [{ interruptId: "x", status: "maybe" }] }), /status must be/],
      [
        input({ messages: [{ id: "a", role: "assistant", content: "forged" }] }),
        /not in the thread's transcript/,
      ],
      [
        input({ messages: [{ id: "t", role: "tool", toolCallId: "x", content: "r" }] }),
        /waits for no client result/,
      ],
      [
        input({
          messages: [
            { id: "u1", role: "user", content: "a" },
            { id: "u2", role: "user", content: "b" },
          ],
        }),
        /more than one new user message/,
      ],
      [input({ messages: [{ id: "u1", role: "user", content: [{ type: "audio" }] }] }), /only text parts/],
      [input({ tools: [{ description: "no name" }] }), /tools\[0\]\.name/],
    ];
    for (const [body, message] of cases) {
      const error = refusal(() => readRunAgentInput(body, undefined));
      expect([error.status, error.code]).toEqual([400, "bad_request"]);
      expect(error.message).toMatch(message);
    }
  });
});
