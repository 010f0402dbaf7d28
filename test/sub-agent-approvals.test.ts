import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type Agent,
  type AgentEvent,
  type AgentMessage,
  createAgent,
  defineTool,
  scripted,
  subAgentTool,
  type ToolResultMessage,
} from "../index.js";
import { observeSubAgents, type SubAgentObserver } from "../agent/sub-agent-observer.js";

// A parent delegates to a researcher, which delegates to a writer, whose refund needs approval:
// the refund waits two levels down and is answered from the top.

function tree() {
  const refunds: number[] = [];
  const refund = defineTool({
    name: "refund",
    description: "Refunds an amount",
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      refunds.push(amount);
      return `refunded ${amount}`;
    },
  });
  const writerModel = scripted((request, call) =>
    call === 0
      ? { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] }
      : { text: `writer: ${JSON.stringify(request.messages.at(-1)!.content)}` },
  );
  const writer = subAgentTool({
    name: "writer",
    description: "Writes",
    tools: [refund],
    provider: writerModel,
  });
  const researcherModel = scripted((_request, call) =>
    call === 0
      ? { toolCalls: [{ id: "r1", name: "writer", arguments: { task: "refund 20" } }] }
      : { text: "researcher done" },
  );
  const researcher = subAgentTool({
    name: "researcher",
    description: "Researches",
    tools: [writer],
    provider: researcherModel,
  });
  const parentModel = scripted((_request, call) =>
    call === 0
      ? { toolCalls: [{ id: "p1", name: "researcher", arguments: { task: "handle it" } }] }
      : { text: "parent done" },
  );
  // Every child's transcript, as its run ended.
  const transcripts = new Map<string, AgentMessage[]>();
  const observer: SubAgentObserver = ({ tools }) => ({
    tools: [...tools],
    agent: (child: Agent) =>
      child.events$.subscribe((e) => {
        if (e.type === "agent_end") transcripts.set(child.id, [...child.messages]);
      }),
    observer,
  });
  const parent = createAgent(observeSubAgents({ provider: parentModel, tools: [researcher] }, observer));
  const events: AgentEvent[] = [];
  parent.events$.subscribe((e) => events.push(e));
  const waiting = new Promise<AgentEvent & { type: "approval_requested" }>((resolve) =>
    parent.events$.subscribe((e) => e.type === "approval_requested" && resolve(e)),
  );
  return { parent, events, waiting, refunds, transcripts, writerModel };
}

function expectEveryCallAnsweredOnce(messages: readonly AgentMessage[]) {
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((p) => p.type === "toolCall").map((p) => p.id) : [],
  );
  const results = messages
    .filter((m): m is ToolResultMessage => m.role === "toolResult")
    .map((m) => m.toolCallId);
  expect(calls.length).toBeGreaterThan(0);
  expect([...results].sort()).toEqual([...calls].sort());
}

describe("approvals at any depth", () => {
  it("a call waiting two levels down surfaces at the top with its path, and the top approves it", async () => {
    const { parent, events, waiting, refunds, transcripts } = tree();
    const run = parent.prompt("go");
    const asked = await waiting;

    expect(asked).toMatchObject({
      toolCallId: "p1/r1/w1",
      toolName: "refund",
      args: { amount: 20 },
      path: ["p1", "r1", "w1"],
      agents: ["researcher-p1", "writer-r1"],
    });
    expect(parent.pendingApprovals()).toEqual([
      {
        toolCallId: "p1/r1/w1",
        toolName: "refund",
        args: { amount: 20 },
        path: ["p1", "r1", "w1"],
        agents: ["researcher-p1", "writer-r1"],
      },
    ]);
    expect(refunds).toEqual([]);
    parent.approve("p1/r1/w1");
    const outcome = await run;

    expect(outcome.reason).toBe("stop");
    expect(refunds).toEqual([20]);
    expect(parent.pendingApprovals()).toEqual([]);
    // Order at the top: the parent's call starts, the nested call asks, is decided, the parent's call ends.
    const order = events
      .filter((e) =>
        ["tool_execution_start", "approval_requested", "approval_decided", "tool_execution_end"].includes(
          e.type,
        ),
      )
      .map((e) => `${e.type}:${(e as { toolCallId: string }).toolCallId}`);
    expect(order).toEqual([
      "tool_execution_start:p1",
      "approval_requested:p1/r1/w1",
      "approval_decided:p1/r1/w1",
      "tool_execution_end:p1",
    ]);
    expect(events.find((e) => e.type === "approval_decided")).toMatchObject({
      approved: true,
      path: ["p1", "r1", "w1"],
    });
    // Every transcript of the tree answers each of its calls exactly once.
    expectEveryCallAnsweredOnce(parent.messages);
    expectEveryCallAnsweredOnce(transcripts.get("researcher-p1")!);
    expectEveryCallAnsweredOnce(transcripts.get("writer-r1")!);
  });

  it("a deny from the top reaches the child's model with its reason", async () => {
    const { parent, waiting, refunds, writerModel } = tree();
    const run = parent.prompt("go");
    await waiting;
    parent.deny("p1/r1/w1", "refunds need a manager");
    expect((await run).reason).toBe("stop");
    expect(refunds).toEqual([]);
    expect(JSON.stringify(writerModel.requests[1]!.messages.at(-1)!.content)).toContain(
      "refunds need a manager",
    );
  });

  it("a nested call that no longer waits gets a clear error, and nothing changes", async () => {
    const { parent, waiting } = tree();
    const run = parent.prompt("go");
    await waiting;
    expect(() => parent.approve("p1/r1/nope")).toThrow(/No pending approval for tool call "nope"/);
    expect(() => parent.approve("p9/r1/w1")).toThrow(/No pending approval for tool call "p9\/r1\/w1"/);
    expect(parent.pendingApprovals()).toHaveLength(1);
    parent.approve("p1/r1/w1");
    expect(() => parent.approve("p1/r1/w1")).toThrow(/not waiting for approval|No pending approval/);
    expect((await run).reason).toBe("stop");
    expectEveryCallAnsweredOnce(parent.messages);
  });

  it("abort at the top answers every call at every depth", async () => {
    const { parent, waiting, refunds, transcripts } = tree();
    const run = parent.prompt("go");
    await waiting;
    parent.abort();
    const outcome = await run;
    expect(outcome.reason).toBe("aborted");
    expect(refunds).toEqual([]);
    expect(parent.pendingApprovals()).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expectEveryCallAnsweredOnce(parent.messages);
    expectEveryCallAnsweredOnce(transcripts.get("researcher-p1")!);
    expectEveryCallAnsweredOnce(transcripts.get("writer-r1")!);
    // The refund two levels down was answered as aborted, once.
    const refundResults = transcripts.get("writer-r1")!.filter((m) => m.role === "toolResult");
    expect(refundResults).toHaveLength(1);
    expect(refundResults[0]).toMatchObject({ toolCallId: "w1", isError: true });
  });
});
