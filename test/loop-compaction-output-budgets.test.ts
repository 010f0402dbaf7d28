// Black-box scenarios, second batch: compaction corners, typed output that never validates,
// budgets mid fan-out, a sub-agent aborted with its parent.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, scripted, setModelPrice, subAgentTool } from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

describe("the loop: compaction, typed output and budgets at their limits", () => {
  it("a single user message larger than the window: a clear error, a valid transcript, a usable agent", async () => {
    // A provider that refuses a prompt over 2,000 tokens, as a real one does.
    const provider = scripted((request) =>
      JSON.stringify(request.messages).length > 8000
        ? { error: { kind: "context_overflow", message: "prompt is too long: 25000 tokens > 2000 maximum" } }
        : { text: "ok" },
    );
    const agent = createAgent({ provider, context: { maxContextTokens: 2000 } });
    const events = record(agent);
    const outcome = await agent.prompt("word ".repeat(20_000));
    expect(outcome.reason).toBe("error");
    expect(outcome.errorMessage).toMatch(/does not fit the model's context window/);
    expect(outcome.errorMessage).toMatch(/make the last message or tool output shorter/);
    await expect(agent.prompt("small")).resolves.toMatchObject({ reason: expect.any(String) });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort while compacting with a slow summarizer: answered, reusable", async () => {
    let summaryStarted!: () => void;
    const started = new Promise<void>((r) => (summaryStarted = r));
    let slow = true;
    const summarizer = (_req: unknown, signal: AbortSignal) =>
      new Promise<string>((resolve, reject) => {
        summaryStarted();
        const t = setTimeout(() => resolve("summary"), slow ? 10_000 : 1);
        signal.addEventListener("abort", () => {
          clearTimeout(t);
          reject(new Error("aborted"));
        });
      });
    const turns = Array.from({ length: 12 }, (_, i) => ({ text: `answer ${i} ${"y".repeat(400)}` }));
    const provider = scripted([...turns, { text: "after" }, { text: "after2" }]);
    const agent = createAgent({ provider, context: { maxContextTokens: 1500, summarizer } });
    const events = record(agent);
    for (let i = 0; i < 12; i++) {
      const run = agent.prompt(`q ${i} ${"z".repeat(400)}`);
      const res = await Promise.race([run.then(() => "done"), started.then(() => "summ")]);
      if (res === "summ") {
        agent.abort();
        const o = await run;
        slow = false;
        expect(o.reason).toBe("aborted");
        break;
      }
    }
    const again = await agent.prompt("hello");
    expect(again.reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("typed output never valid: reason error, rawOutput, usable agent", async () => {
    const provider = scripted(() => ({ text: "not json at all" }));
    const agent = createAgent({ provider, output: z.object({ a: z.number() }) });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("error");
    expect(outcome.errorMessage).toMatch(/No valid output after 3 attempts/);
    expect(outcome.rawOutput).toBe("not json at all");
    expect(outcome.output).toBeUndefined();
    expect(provider.calls).toBe(3);
    const again = await agent.prompt("go again");
    expect(again.reason).toBe("error");
    expect(provider.calls).toBe(6);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("typed output cut off at the output token limit says so, to the model and to the user", async () => {
    const provider = scripted(() => ({ text: '{"summary": "a long answer th', stopReason: "length" }));
    const agent = createAgent({ provider, output: z.object({ summary: z.string() }) });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("error");
    expect(outcome.errorMessage).toMatch(
      /^No valid output after 3 attempts: The answer was cut off at the output token limit/,
    );
    expect(outcome.rawOutput).toBe('{"summary": "a long answer th');
    // The model's correction says why, so it can answer shorter.
    const correction = JSON.stringify(provider.requests[1]!.messages.at(-1));
    expect(correction).toContain("cut off at the output token limit");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("typed output with maxTurns reached while the model keeps calling tools", async () => {
    let n = 0;
    const provider = scripted((req) =>
      req.toolChoice === "none" ? { text: "still not json" } : { toolCalls: [wait(`w${n++}`, 1)] },
    );
    const agent = createAgent({
      provider,
      tools: [sleepTool()],
      output: z.object({ a: z.number() }),
      limits: { maxTurns: 2 },
    });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("limit");
    expect(outcome.output).toBeUndefined();
    // The answer the limit asked for (without tools) did not parse: the user gets it raw.
    expect(outcome.rawOutput).toBe("still not json");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("maxCostUsd counts a provider's usage that carries tokens but no cost (scripted, custom providers)", async () => {
    setModelPrice("loop-priced", { input: 10, output: 10 });
    // Each call reports 200,000 tokens: $2 at this price. The script would go on for 10 calls.
    const provider = scripted(
      (_request, call) =>
        call < 10
          ? {
              toolCalls: [wait(`a${call}`, 5), wait(`b${call}`, 10), wait(`c${call}`, 1)],
              usage: { input: 100_000, output: 100_000 },
            }
          : { text: "done" },
      { model: "loop-priced" },
    );
    const agent = createAgent({ provider, tools: [sleepTool()], limits: { maxCostUsd: 5, onLimit: "stop" } });
    const events = record(agent);
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("limit");
    expect(provider.calls).toBe(2);
    expect(outcome.usage.cost?.total).toBeCloseTo(4);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("a sub-agent is aborted with its parent; both transcripts stay valid; the parent is reusable", async () => {
    let childAborted = false;
    const childTools = [sleepTool({ onAbort: () => (childAborted = true) })];
    const childProvider = scripted([{ toolCalls: [wait("cw", 10_000)] }, { text: "child done" }]);
    const helper = subAgentTool({
      name: "helper",
      description: "helps",
      provider: childProvider,
      tools: childTools,
    });
    const provider = scripted([
      { toolCalls: [{ id: "h1", name: "helper", arguments: { task: "do it" } }, wait("p1", 10_000)] },
      { text: "again" },
    ]);
    const agent = createAgent({ provider, tools: [helper, sleepTool()] });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(
      agent,
      events,
      (e) => e.type === "tool_progress" || (e.type === "tool_execution_update" && e.toolCallId === "h1"),
    );
    await new Promise((r) => setTimeout(r, 50));
    agent.abort();
    const outcome = await run;
    expect(outcome.reason).toBe("aborted");
    expect(childAborted).toBe(true);
    expect(toolResults(agent.messages).map((r) => r.toolCallId)).toEqual(["h1", "p1"]);
    expect((await agent.prompt("again")).reason).toBe("stop");
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });
});
