// The test kit (agent-machine/testing) with agents together (issue 39), as a user would use it:
// a scripted model drives handoffs, and what the kit reports sees the calls of every agent and
// every depth (a handed-to agent's calls, a sub-agent's approvals).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineHandoff, defineTool, subAgentTool } from "../index.js";
import {
  approvalRequired,
  assertEventInvariants,
  assertToolCalled,
  assertValidTranscript,
  exploreAgent,
  runAgent,
  scriptedModel,
} from "../testing.js";

function refundTool(ran: number[]) {
  return defineTool({
    name: "refund",
    description: "Refunds an amount",
    parameters: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: ({ amount }) => {
      ran.push(amount);
      return `refunded ${amount}`;
    },
  });
}

describe("runAgent with handoffs", () => {
  it("a scripted model hands off to billing, whose refund the policy approves: the kit sees billing's call ran", async () => {
    const ran: number[] = [];
    const billing = defineHandoff({
      name: "billing",
      description: "Handles refunds",
      systemPrompt: "You are billing.",
      tools: [refundTool(ran)],
    });
    // One model for both agents (billing has none of its own): the script reads who is active.
    const model = scriptedModel([
      { toolCalls: [{ name: "transfer_to_billing", arguments: {} }] },
      {
        toolCalls: [{ name: "refund", arguments: { amount: 20 } }],
        expectRequest: (r) => expect(r.systemPrompt).toContain("You are billing."),
      },
      { text: "Refunded." },
    ]);
    const run = await runAgent({ provider: model, handoffs: [billing] }, "refund me", {
      approve: (call) => call.toolName === "refund",
    });
    expect(run.outcome.reason).toBe("stop");
    expect(ran).toEqual([20]);
    expect(run.toolCalls.map((c) => [c.name, c.executed, c.approval])).toEqual([
      ["transfer_to_billing", true, undefined],
      ["refund", true, "approved"],
    ]);
    expect(run.events.filter((e) => e.type === "handoff")).toMatchObject([{ from: "main", to: "billing" }]);
    assertToolCalled(run, "refund", { amount: 20 });
    assertValidTranscript(run.transcript);
    assertEventInvariants(run.events);
  });
});

describe("runAgent with a sub-agent's approval", () => {
  it("the policy sees where the nested call waits, and the run reports it decided", async () => {
    const ran: number[] = [];
    const writer = subAgentTool({
      name: "writer",
      description: "Writes",
      tools: [refundTool(ran)],
      provider: scriptedModel([
        { toolCalls: [{ id: "w1", name: "refund", arguments: { amount: 20 } }] },
        { text: "writer done" },
      ]),
    });
    const seen: unknown[] = [];
    const run = await runAgent(
      {
        provider: scriptedModel([
          { toolCalls: [{ id: "p1", name: "writer", arguments: { task: "refund 20" } }] },
          { text: "done" },
        ]),
        tools: [writer],
      },
      "go",
      {
        approve: (call) => {
          seen.push(call);
          return true;
        },
      },
    );
    expect(run.outcome.reason).toBe("stop");
    expect(ran).toEqual([20]);
    expect(seen).toEqual([
      {
        toolCallId: "p1/w1",
        toolName: "refund",
        args: { amount: 20 },
        path: ["p1", "w1"],
        agents: ["writer-p1"],
      },
    ]);
    assertEventInvariants(run.events);
  });
});

describe("exploreAgent with handoffs and sub-agents", () => {
  const deploy = (ran: string[]) =>
    defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({}),
      execute: () => {
        ran.push("deploy");
        return "deployed";
      },
    });

  it("hands off on its paths and finds the handoff agent's unguarded deploy", async () => {
    const ran: string[] = [];
    const exploration = await exploreAgent({
      agent: ({ provider }) => ({
        provider,
        handoffs: [defineHandoff({ name: "ops", description: "Operations", tools: [deploy(ran)] })],
      }),
      properties: [approvalRequired()],
      aborts: false,
    });
    expect(ran.length).toBeGreaterThan(0);
    const [first] = exploration.failures;
    expect(first?.description).toMatch(/deploy p2_1 ran without approval/);
    expect(first?.path.turns.map((turn) => turn.map((c) => c.name))).toEqual([
      ["transfer_to_ops"],
      ["deploy"],
    ]);
  });

  it("answers a sub-agent's approvals both ways: a refund approved two levels down runs, a denied one does not", async () => {
    const ran: number[] = [];
    const writer = subAgentTool({
      name: "writer",
      description: "Writes",
      tools: [refundTool(ran)],
      provider: scriptedModel((_request, call) =>
        call === 0 ? { toolCalls: [{ name: "refund", arguments: { amount: 20 } }] } : { text: "writer done" },
      ),
    });
    const exploration = await exploreAgent({
      agent: ({ provider }) => ({ provider, tools: [writer] }),
      calls: () => [{ name: "writer", arguments: { task: "refund" }, label: "delegate" }],
      properties: [
        approvalRequired((call) => call.name === "refund"),
        {
          name: "the refund's approval is answered where it waits",
          check: ({ calls }) =>
            calls
              .filter((c) => c.name === "refund" && (c.approval === undefined || c.depth !== 1))
              .map((c) => `refund ${c.id} at depth ${c.depth}: ${c.approval ?? "not answered"}`),
        },
      ],
      maxCalls: 1,
      aborts: false,
    });
    exploration.assertHolds();
    // Approved on one path, denied on another: the refund ran once.
    expect(exploration.paths).toBeGreaterThanOrEqual(2);
    expect(ran).toEqual([20]);
  });
});
