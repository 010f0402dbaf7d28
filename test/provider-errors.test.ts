import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, type ProviderEvent, retryDelay, scripted } from "../index.js";
import {
  assistants,
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
} from "./helpers.js";

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0 };

describe("provider failures", () => {
  it("an error event ends the turn with an error message and agent_end reason error", async () => {
    const agent = createAgent({
      provider: scripted([{ error: { kind: "auth", message: "invalid x-api-key" } }]),
    });
    const events = record(agent);
    const { messages: added } = await agent.prompt("hi");
    expect(added.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "error",
      errorMessage: "invalid x-api-key",
    });
    const end = events.at(-1);
    expect(end).toMatchObject({ type: "agent_end", reason: "error", errorMessage: "invalid x-api-key" });
    expectEventInvariants(events);
  });

  it("a transient failure is retried with a retry event; the partial message never reaches the transcript", async () => {
    const provider = scripted([
      { text: "half an ans", error: { kind: "overloaded", message: "Overloaded", retryAfterMs: 2 } },
      { text: "the full answer" },
    ]);
    const agent = createAgent({ provider, retry: fastRetry });
    const events = record(agent);
    await agent.prompt("hi");
    const retry = events.find((e) => e.type === "retry");
    expect(retry).toEqual({ type: "retry", attempt: 1, delayMs: 2, error: "Overloaded" });
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(agent.messages[1]).toMatchObject({
      content: [{ type: "text", text: "the full answer" }],
      stopReason: "stop",
    });
    // One message_end for the message that was kept; the failed attempt's message_start is closed
    // too, by a message_end marked discarded that carries what it said and why it failed.
    const ends = events.filter((e) => e.type === "message_end" && e.message.role === "assistant");
    expect(ends.filter((e) => e.type === "message_end" && !e.discarded)).toEqual([
      { type: "message_end", message: agent.messages[1] },
    ]);
    expect(ends.filter((e) => e.type === "message_end" && e.discarded)).toEqual([
      {
        type: "message_end",
        discarded: true,
        message: expect.objectContaining({
          stopReason: "error",
          errorMessage: "Overloaded",
          content: [{ type: "text", text: "half an ans" }],
        }),
      },
    ]);
    expectEventInvariants(events);
  });

  it("an abort during the backoff after a partial answer: the attempt is closed, the aborted message is new and empty", async () => {
    const provider = scripted([
      { text: "half", error: { kind: "rate_limit", message: "slow down", retryAfterMs: 60_000 } },
    ]);
    const agent = createAgent({ provider, retry: { maxDelayMs: 120_000 } });
    const events = record(agent);
    const run = agent.prompt("hi");
    await eventMatching(agent, events, (e) => e.type === "retry");
    agent.abort();
    await run;
    expectEventInvariants(events);
    expect(assistants(agent.messages)).toEqual([
      expect.objectContaining({ stopReason: "aborted", content: [] }),
    ]);
    expect(
      events
        .filter((e) => e.type === "message_end" && e.message.role === "assistant")
        .map((e) => e.type === "message_end" && !!e.discarded),
    ).toEqual([true, false]);
  });

  it("auth errors are not retried; retries stop after maxRetries", async () => {
    const auth = scripted([{ error: { kind: "auth", message: "bad key" } }, { text: "never" }]);
    await createAgent({ provider: auth, retry: fastRetry }).prompt("hi");
    expect(auth.calls).toBe(1);

    const limited = scripted(() => ({ error: { kind: "rate_limit", message: "429" } }));
    const agent = createAgent({ provider: limited, retry: { ...fastRetry, maxRetries: 2 } });
    const events = record(agent);
    await agent.prompt("hi");
    expect(limited.calls).toBe(3);
    expect(events.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.attempt)).toEqual([
      1, 2,
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error" });
  });

  it("a provider that throws or ends without done is a network error, retried, never a crash", async () => {
    let call = 0;
    const flaky = {
      id: "flaky",
      model: "m",
      async *stream(): AsyncGenerator<ProviderEvent> {
        call++;
        yield { type: "start" };
        if (call === 1) throw new Error("socket hang up");
        if (call === 2) return; // the connection dropped without a done event
        yield { type: "text_delta", delta: "finally" };
        yield { type: "done", stopReason: "stop" };
      },
    };
    const agent = createAgent({ provider: flaky, retry: fastRetry });
    const events = record(agent);
    await agent.prompt("hi");
    expect(events.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.error)).toEqual([
      "socket hang up",
      "The stream ended before the model finished its answer",
    ]);
    expect(agent.messages.at(-1)).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "finally" }],
    });
  });

  it("abort during a retry wait ends the run at once", async () => {
    const provider = scripted(() => ({
      error: { kind: "rate_limit", message: "slow down", retryAfterMs: 60_000 },
    }));
    const agent = createAgent({ provider, retry: { maxDelayMs: 120_000 } });
    const events = record(agent);
    const run = agent.prompt("hi");
    await new Promise<void>((resolve) => {
      const sub = agent.events$.subscribe((e) => {
        if (e.type === "retry") {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    agent.abort();
    await run;
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    expect(provider.calls).toBe(1);
  });

  it("tool calls of a failed message are answered, so the transcript stays valid", async () => {
    const provider = scripted([
      { toolCalls: [{ id: "x", name: "anything" }], error: { kind: "api", message: "stream broke" } },
    ]);
    const agent = createAgent({ provider });
    const events = record(agent);
    await agent.prompt("hi");
    expectValidTranscript(agent.messages);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error" });
    expectEventInvariants(events);
  });

  it("a failed or aborted message's completed calls are answered and never run", async () => {
    const runs: string[] = [];
    const sideEffect = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({}),
      execute: async () => {
        runs.push("deployed");
        return "ok";
      },
    });
    const failed = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "d1", name: "deploy" }], error: { kind: "api", message: "stream broke" } },
      ]),
      tools: [sideEffect],
    });
    const events = record(failed);
    await failed.prompt("ship it");
    expect(runs).toEqual([]);
    expect(failed.messages.at(-1)).toMatchObject({
      role: "toolResult",
      toolCallId: "d1",
      isError: true,
      content: [{ type: "text", text: "Tool deploy aborted" }],
    });
    expectEventInvariants(events);
    expectValidTranscript(failed.messages);

    // Aborted while the model was still writing, after the call's arguments were complete.
    const aborted = createAgent({
      provider: scripted([{ toolCalls: [{ id: "d2", name: "deploy" }], text: "", delayMs: 20 }]),
      tools: [sideEffect],
    });
    const abortedEvents = record(aborted);
    aborted.events$.subscribe((e) => {
      if (e.type === "message_update" && e.kind === "toolcall_end") aborted.abort();
    });
    await aborted.prompt("ship it");
    expect(runs).toEqual([]);
    expect(abortedEvents.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    expectEventInvariants(abortedEvents);
    expectValidTranscript(aborted.messages);
  });

  it("a context overflow that compaction cannot shrink ends the run at once, reported clearly", async () => {
    const provider = scripted(() => ({ error: { kind: "context_overflow", message: "prompt is too long" } }));
    const agent = createAgent({ provider });
    const events = record(agent);
    await agent.prompt("hi");
    // One message: nothing to compact, so the same request is not sent again.
    expect(provider.calls).toBe(1);
    const end = events.at(-1)!;
    expect(end).toMatchObject({ type: "agent_end", reason: "error", errorKind: "context_overflow" });
    expect(end.type === "agent_end" && end.errorMessage).toMatch(
      /^The conversation does not fit the model's context window: .* \(Provider: prompt is too long\)$/,
    );
    expect(agent.messages.filter((m) => m.role === "assistant")).toHaveLength(1);
  });
});

describe("retryDelay", () => {
  it("doubles from the base, honours retry-after, caps, and jitters within ±20 %", () => {
    const policy = { baseDelayMs: 1000, maxDelayMs: 30_000, jitter: 0.2 };
    expect(retryDelay(0, policy, undefined, () => 0.5)).toBe(1000);
    expect(retryDelay(3, policy, undefined, () => 0.5)).toBe(8000);
    expect(retryDelay(10, policy, undefined, () => 0.5)).toBe(30_000);
    expect(retryDelay(0, policy, 5000, () => 0.5)).toBe(5000);
    expect(retryDelay(0, policy, 90_000, () => 0.5)).toBe(30_000);
    expect(retryDelay(1, policy, undefined, () => 0)).toBe(1600);
    expect(retryDelay(1, policy, undefined, () => 1)).toBe(2400);
  });
});
