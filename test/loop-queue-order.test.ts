// Black-box scenarios, sixth batch: queued steers and follow-ups taken one at a time, in order.
import { describe, expect, it } from "vitest";
import { createAgent, type ProviderRequest, scripted, textOf } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  sleepTool,
  waitCall as wait,
} from "./helpers.js";

const lastUser = (r: ProviderRequest) => {
  const u = r.messages.filter((m) => m.role === "user").at(-1);
  return u ? textOf(u.content as never) : "";
};

describe("the loop: queues", () => {
  it("one-at-a-time: two steers and two follow-ups, each taken once, steers first, in order", async () => {
    const provider = scripted((_r, call) =>
      call === 0 ? { toolCalls: [wait("a", 40)] } : { text: `answer ${call}` },
    );
    const agent = createAgent({ provider, tools: [sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start");
    agent.followUp("F1");
    agent.steer("S1");
    agent.followUp("F2");
    agent.steer("S2");
    const outcome = await run;
    expect(outcome.reason).toBe("stop");
    expect(provider.requests.map(lastUser)).toEqual(["go", "S1", "S2", "F1", "F2"]);
    const users = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(users).toEqual(["go", "S1", "S2", "F1", "F2"]);
    expect(agent.queued).toMatchObject({ steering: [], followUp: [] });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("a steer sent from a follow-up's turn_start is taken in that run", async () => {
    const provider = scripted((_r, call) => ({ text: `answer ${call}` }));
    const agent = createAgent({ provider });
    const events = record(agent);
    let sent = false;
    agent.events$.subscribe((e) => {
      if (e.type === "turn_start" && e.turn === 2 && !sent) {
        sent = true;
        agent.steer("S-late");
      }
    });
    agent.followUp("F1");
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("stop");
    const users = agent.messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    expect(users).toEqual(["go", "F1", "S-late"]);
    expectEventInvariants(events);
  });
});
