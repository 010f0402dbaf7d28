// Black-box scenarios, fifth batch: handoffs asked for beside other calls, two at once, aborted.
import { describe, expect, it } from "vitest";
import { createAgent, defineHandoff, scripted } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

describe("the loop: handoffs", () => {
  it("a transfer beside another call, and two transfers in one answer: every call answered once", async () => {
    const billingProvider = scripted([{ text: "billing here" }]);
    const supportProvider = scripted([{ text: "support here" }]);
    const billing = defineHandoff({ name: "billing", description: "b", provider: billingProvider });
    const support = defineHandoff({ name: "support", description: "s", provider: supportProvider });
    const provider = scripted([
      {
        toolCalls: [
          wait("w", 5),
          { id: "t1", name: "transfer_to_billing", arguments: {} },
          { id: "t2", name: "transfer_to_support", arguments: {} },
        ],
      },
      { text: "main again" },
    ]);
    const agent = createAgent({ provider, tools: [sleepTool()], handoffs: [billing, support] });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("stop");
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(["w", "t1", "t2"]);
    const handoffs = events.filter((e) => e.type === "handoff");
    expect(handoffs.length).toBe(1);
    expect(billingProvider.calls + supportProvider.calls).toBe(1);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort right after a transfer leaves the transcript valid and the agent usable", async () => {
    const billingProvider = scripted([
      { text: "x".repeat(200), chunkSize: 1, delayMs: 3 },
      { text: "billing again" },
    ]);
    const billing = defineHandoff({ name: "billing", description: "b", provider: billingProvider });
    const provider = scripted([{ toolCalls: [{ id: "t1", name: "transfer_to_billing", arguments: {} }] }]);
    const agent = createAgent({ provider, handoffs: [billing] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(
      agent,
      events,
      (e) =>
        e.type === "message_update" &&
        e.message.model === billingProvider.model &&
        events.some((x) => x.type === "handoff"),
    );
    agent.abort();
    expect((await run).reason).toBe("aborted");
    expect((await agent.prompt("again")).reason).toBe("stop");
    expect(billingProvider.calls).toBe(2);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });
});
