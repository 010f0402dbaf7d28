// Black-box scenarios, eighth batch: approvals corrected or refused, abort on an idle agent.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted, textOf } from "../index.js";
import { eventMatching, expectEventInvariants, expectValidTranscript, record } from "./helpers.js";

function transfer(ran: unknown[]) {
  return defineTool({
    name: "transfer",
    description: "moves money",
    parameters: z.object({ amount: z.number().positive() }),
    needsApproval: true,
    execute: async (args) => {
      ran.push(args);
      return `sent ${args.amount}`;
    },
  });
}

describe("the loop: corrected arguments and an idle abort", () => {
  it("approve with arguments the schema refuses throws and the call keeps waiting; a deny then ends it", async () => {
    const ran: unknown[] = [];
    const provider = scripted([
      { toolCalls: [{ id: "t", name: "transfer", arguments: { amount: 5 } }] },
      { text: "ok" },
    ]);
    const agent = createAgent({ provider, tools: [transfer(ran)] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    expect(() => agent.approve("t", { args: { amount: -1 } })).toThrow();
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["t"]);
    agent.deny("t", "too risky");
    expect((await run).reason).toBe("stop");
    expect(ran).toEqual([]);
    expect(JSON.stringify(provider.requests[1]!.messages.at(-1))).toContain("too risky");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort on an idle agent drops what is queued and starts nothing", async () => {
    const provider = scripted((_r, call) => ({ text: `answer ${call}` }));
    const agent = createAgent({ provider });
    const events = record(agent);
    agent.steer("S");
    agent.followUp("F");
    agent.abort();
    agent.abort();
    expect(provider.calls).toBe(0);
    await agent.prompt("go");
    expect(agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content))).toEqual(["go"]);
    expectEventInvariants(events);
  });
});
