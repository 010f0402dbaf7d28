// Issue 23 items 5 and 7: approval declared on the tool, approve with edited arguments, and a
// decision taken once.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentEvent, createAgent, defineTool, scripted, type ToolResultMessage } from "../index.js";
import { expectValidTranscript, record } from "./helpers.js";

function transferTool(
  ran: unknown[],
  needsApproval: boolean | ((args: { to: string; amount: number }) => boolean),
) {
  return defineTool({
    name: "transfer",
    description: "Moves money",
    parameters: z.object({ to: z.string(), amount: z.number().positive() }),
    needsApproval,
    execute: async (args) => {
      ran.push(args);
      return `sent ${args.amount} to ${args.to}`;
    },
  });
}

const call = (id: string, args: Record<string, unknown>) => ({ id, name: "transfer", arguments: args });

/** Resolves with the first approval request. */
function nextApproval(
  events: AgentEvent[],
  agent: { events$: { subscribe: (f: (e: AgentEvent) => void) => unknown } },
) {
  return new Promise<Extract<AgentEvent, { type: "approval_requested" }>>((resolve) => {
    const found = events.find((e) => e.type === "approval_requested");
    if (found?.type === "approval_requested") return resolve(found);
    agent.events$.subscribe((e) => {
      if (e.type === "approval_requested") resolve(e);
    });
  });
}

const results = (agent: { messages: readonly unknown[] }) =>
  (agent.messages as { role: string }[]).filter((m): m is ToolResultMessage => m.role === "toolResult");

describe("needsApproval on the tool", () => {
  it("true: every call waits for a decision, without any permission checker", async () => {
    const ran: unknown[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [call("t1", { to: "bob", amount: 5 })] }, { text: "done" }]),
      tools: [transferTool(ran, true)],
    });
    const events = record(agent);
    const done = agent.prompt("pay bob");
    const request = await nextApproval(events, agent);
    expect(request).toMatchObject({ toolCallId: "t1", toolName: "transfer", args: { to: "bob", amount: 5 } });
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["t1"]);
    expect(ran).toEqual([]);
    agent.approve("t1");
    await done;
    expect(ran).toEqual([{ to: "bob", amount: 5 }]);
  });

  it("a function decides per call from the validated arguments", async () => {
    const ran: unknown[] = [];
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [call("small", { to: "bob", amount: 5 }), call("big", { to: "eve", amount: 5_000 })] },
        { text: "done" },
      ]),
      tools: [transferTool(ran, (args) => args.amount > 100)],
    });
    const events = record(agent);
    const done = agent.prompt("pay");
    const request = await nextApproval(events, agent);
    expect(request.toolCallId).toBe("big");
    agent.deny("big", "too much");
    await done;
    expect(ran).toEqual([{ to: "bob", amount: 5 }]);
    expect(results(agent).map((r) => [r.toolCallId, r.isError])).toEqual([
      ["small", false],
      ["big", true],
    ]);
  });
});

describe("approve with edited arguments", () => {
  it("runs the call with the corrected arguments, and the transcript records what ran", async () => {
    const ran: unknown[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [call("t1", { to: "bob", amount: 500 })] }, { text: "done" }]),
      tools: [transferTool(ran, true)],
    });
    const events = record(agent);
    const done = agent.prompt("pay bob");
    await nextApproval(events, agent);
    agent.approve("t1", { args: { to: "bob", amount: 50 } });
    await done;

    expect(ran).toEqual([{ to: "bob", amount: 50 }]);
    const [result] = results(agent);
    expect(result!.editedArgs).toEqual({ to: "bob", amount: 50 });
    // The model reads that the human changed the call, and what it ran with.
    expect(result!.content[0]).toEqual({
      type: "text",
      text: '[The user edited the arguments before approving; the call ran with: {"to":"bob","amount":50}]',
    });
    expect(result!.content[1]).toEqual({ type: "text", text: "sent 50 to bob" });
    expect(events.find((e) => e.type === "approval_decided")).toMatchObject({
      approved: true,
      editedArgs: { to: "bob", amount: 50 },
    });
    expectValidTranscript(agent.messages);
  });

  it("refuses arguments that fail the tool's schema: a clear error, and the call keeps waiting", async () => {
    const ran: unknown[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [call("t1", { to: "bob", amount: 500 })] }, { text: "done" }]),
      tools: [transferTool(ran, true)],
    });
    const events = record(agent);
    const done = agent.prompt("pay bob");
    await nextApproval(events, agent);
    expect(() => agent.approve("t1", { args: { to: "bob", amount: -3 } })).toThrow(
      /edited arguments fail the schema of tool transfer.*amount.*still waits for approval/s,
    );
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["t1"]);
    expect(events.some((e) => e.type === "approval_decided")).toBe(false);
    agent.approve("t1");
    await done;
    expect(ran).toEqual([{ to: "bob", amount: 500 }]);
  });
});

describe("a decision is taken once", () => {
  it("the first of approve and deny takes effect; the second is refused, and so is a later one", async () => {
    const ran: unknown[] = [];
    const agent = createAgent({
      provider: scripted([{ toolCalls: [call("t1", { to: "bob", amount: 5 })] }, { text: "done" }]),
      tools: [transferTool(ran, true)],
    });
    const events = record(agent);
    const done = agent.prompt("pay bob");
    await nextApproval(events, agent);
    agent.approve("t1");
    expect(() => agent.deny("t1")).toThrow(/not waiting for approval|No pending approval/);
    expect(() => agent.approve("t1")).toThrow(/not waiting for approval|No pending approval/);
    await done;
    expect(() => agent.deny("t1")).toThrow(/No pending approval/);
    expect(ran).toHaveLength(1);
    expect(events.filter((e) => e.type === "approval_decided")).toHaveLength(1);
  });
});
