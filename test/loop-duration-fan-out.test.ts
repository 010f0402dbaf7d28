// Black-box scenarios, seventh batch: maxDurationMs mid fan-out, sub-agents included.
import { describe, expect, it } from "vitest";
import { createAgent, scripted, subAgentTool, textOf } from "../index.js";
import {
  expectEventInvariants,
  expectValidTranscript,
  record,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

describe("the loop: limits mid fan-out", () => {
  it("maxDurationMs while parallel calls and a sub-agent run: limit, each call answered once, reusable", async () => {
    let childAborted = 0;
    const childProvider = scripted(() => ({ toolCalls: [wait("cw", 10_000)] }));
    const helper = subAgentTool({
      name: "helper",
      description: "helps",
      provider: childProvider,
      tools: [sleepTool({ onAbort: () => childAborted++ })],
    });
    const provider = scripted((_r, call) =>
      call === 0
        ? {
            toolCalls: [
              wait("a", 10_000),
              { id: "h", name: "helper", arguments: { task: "t" } },
              wait("b", 1),
            ],
          }
        : { text: `answer ${call}` },
    );
    const agent = createAgent({ provider, tools: [sleepTool(), helper], limits: { maxDurationMs: 300 } });
    const events = record(agent);
    const t0 = Date.now();
    const outcome = await agent.prompt("go");
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(outcome.reason).toBe("limit");
    expect(childAborted).toBe(1);
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(["a", "h", "b"]);
    const last = agent.messages.at(-1)!;
    expect(last.role === "assistant" && textOf(last.content as never)).toMatch(/^\[Agent stopped: /);
    const again = await agent.prompt("again");
    expect(again.reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });
});
