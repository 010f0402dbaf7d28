import { afterEach, describe, expect, it, vi } from "vitest";
import {
  type AgentEvent,
  createAgent,
  defineTool,
  type Provider,
  type ProviderEvent,
  type ProviderRequest,
  scripted,
} from "../index.js";
import { z } from "zod";
import { assistants, expectEventInvariants, expectValidTranscript, record } from "./helpers.js";

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5, jitter: 0 };

/**
 * A provider whose calls play `script(call)`: the events it lists, then silence for ever — it
 * never ends and ignores its abort signal, like a proxy that holds the socket. A script that
 * returns `"answer"` plays a whole answer instead.
 */
function stallingProvider(script: (call: number) => ProviderEvent[] | "answer") {
  const signals: AbortSignal[] = [];
  const requests: ProviderRequest[] = [];
  let calls = 0;
  const provider: Provider & { readonly calls: number; signals: AbortSignal[]; requests: ProviderRequest[] } =
    {
      id: "stalling",
      model: "m",
      signals,
      requests,
      get calls() {
        return calls;
      },
      async *stream(request, signal) {
        const events = script(calls++);
        signals.push(signal);
        requests.push(request);
        if (events === "answer") {
          yield { type: "start" };
          yield { type: "text_delta", delta: "the whole answer" };
          yield { type: "done", stopReason: "stop" };
          return;
        }
        for (const event of events) yield event;
        await new Promise(() => {});
      },
    };
  return provider;
}

const retries = (events: AgentEvent[]) =>
  events.filter((e): e is Extract<AgentEvent, { type: "retry" }> => e.type === "retry");

afterEach(() => {
  vi.useRealTimers();
});

describe("stream stall watchdog", () => {
  it("no first event: each attempt is abandoned and retried, then the run ends naming the stall", async () => {
    const provider = stallingProvider(() => []);
    const agent = createAgent({
      provider,
      retry: { ...fastRetry, maxRetries: 2 },
      stallTimeout: { firstEventMs: 20, idleMs: 20 },
    });
    const events = record(agent);
    const { messages: added } = await agent.prompt("hi");

    expect(provider.calls).toBe(3);
    const stall = "The model stream stalled: no first event within 20 ms (stallTimeout.firstEventMs)";
    expect(retries(events).map((e) => [e.attempt, e.error])).toEqual([
      [1, stall],
      [2, stall],
    ]);
    const errorMessage = `${stall}; gave up after 2 retries`;
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error", errorMessage });
    expect(added).toEqual([
      expect.objectContaining({ role: "user" }),
      expect.objectContaining({ role: "assistant", content: [], stopReason: "error", errorMessage }),
    ]);
    // Every abandoned attempt's signal fired, so a provider that listens closes its connection.
    expect(provider.signals.map((s) => s.aborted)).toEqual([true, true, true]);
    expectEventInvariants(events);
  });

  it("a stall after the first delta: retries counted, the partial text never reaches the transcript", async () => {
    const provider = stallingProvider(() => [
      { type: "start" },
      { type: "text_delta", delta: "I will now expl" },
    ]);
    const agent = createAgent({
      provider,
      retry: { ...fastRetry, maxRetries: 3 },
      stallTimeout: { firstEventMs: 1_000, idleMs: 20 },
    });
    const events = record(agent);
    await agent.prompt("explain");

    expect(provider.calls).toBe(4);
    const stall = "The model stream stalled: no event for 20 ms after the last one (stallTimeout.idleMs)";
    expect(retries(events).map((e) => e.error)).toEqual([stall, stall, stall]);
    expect(events.at(-1)).toMatchObject({
      type: "agent_end",
      reason: "error",
      errorMessage: `${stall}; gave up after 3 retries`,
    });
    // The deltas were shown live, but nothing of them is kept.
    expect(events.some((e) => e.type === "message_update" && e.delta === "I will now expl")).toBe(true);
    expect(JSON.stringify(agent.messages)).not.toContain("I will now expl");
    expect(assistants(agent.messages)).toEqual([
      expect.objectContaining({ content: [], stopReason: "error" }),
    ]);
    const ended = events.filter((e) => e.type === "message_end" && e.message.role === "assistant");
    const kept = ended.filter((e) => e.type === "message_end" && !e.discarded);
    expect(kept).toEqual([expect.objectContaining({ message: expect.objectContaining({ content: [] }) })]);
    // Each abandoned attempt's message_start is closed, marked discarded, with what it said and why.
    const discarded = ended.flatMap((e) => (e.type === "message_end" && e.discarded ? [e.message] : []));
    expect(discarded).toHaveLength(3);
    for (const message of discarded) {
      expect(message).toMatchObject({
        stopReason: "error",
        errorMessage: stall,
        content: [{ type: "text", text: "I will now expl" }],
      });
    }
    expectEventInvariants(events);
  });

  it("a stalled attempt followed by a healthy one: only the healthy answer is kept", async () => {
    const provider = stallingProvider((call) =>
      call === 0 ? [{ type: "start" }, { type: "text_delta", delta: "half" }] : "answer",
    );
    const agent = createAgent({ provider, retry: fastRetry, stallTimeout: { idleMs: 20 } });
    const events = record(agent);
    await agent.prompt("hi");
    expect(provider.calls).toBe(2);
    expect(retries(events)).toHaveLength(1);
    expect(retries(events)[0]!.error).toContain("stalled: no event for 20 ms");
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(agent.messages[1]).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "the whole answer" }],
    });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
    expect(
      events
        .filter((e) => e.type !== "message_update")
        .slice(4, 9)
        .map((e) => (e.type === "message_end" ? `${e.type}${e.discarded ? ":discarded" : ""}` : e.type)),
    ).toEqual(["message_start", "retry", "message_end:discarded", "message_start", "message_end"]);
  });

  it("a call that already started eagerly is not asked again: the turn ends, the call still answered", async () => {
    const provider = stallingProvider(() => [
      { type: "start" },
      { type: "toolcall_start", id: "c1", name: "lookup" },
      { type: "toolcall_end", id: "c1", name: "lookup", arguments: {} },
      { type: "text_delta", delta: "and now" },
    ]);
    const agent = createAgent({
      provider,
      eagerToolExecution: true,
      retry: fastRetry,
      stallTimeout: { idleMs: 20 },
    });
    const events = record(agent);
    await agent.prompt("hi");
    expect(provider.calls).toBe(1);
    expect(retries(events)).toEqual([]);
    const [assistant] = assistants(agent.messages);
    expect(assistant).toMatchObject({ stopReason: "error", content: [{ type: "toolCall", id: "c1" }] });
    expect(assistant!.errorMessage).toMatch(/^The model stream stalled: no event for 20 ms/);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("a slow but steady stream is not a stall; a longer silence is (fake clock)", async () => {
    vi.useFakeTimers();
    // An event every 25 s for 100 s, with a 30 s idle limit: never silent long enough.
    const steady = createAgent({
      provider: scripted([{ text: "abcd", chunkSize: 1, delayMs: 25_000 }]),
      stallTimeout: { firstEventMs: 30_000, idleMs: 30_000 },
    });
    const steadyEvents = record(steady);
    const run = steady.prompt("hi");
    await vi.advanceTimersByTimeAsync(200_000);
    await run;
    expect(retries(steadyEvents)).toEqual([]);
    expect(steady.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "abcd" }] });

    // The same with 35 s between events: the first silence past 30 s is a stall.
    const provider = scripted([{ text: "abcd", chunkSize: 1, delayMs: 35_000 }, { text: "fine" }]);
    const slow = createAgent({
      provider,
      retry: fastRetry,
      stallTimeout: { firstEventMs: 40_000, idleMs: 30_000 },
    });
    const slowEvents = record(slow);
    const slowRun = slow.prompt("hi");
    await vi.advanceTimersByTimeAsync(200_000);
    await slowRun;
    expect(retries(slowEvents).map((e) => e.error)).toEqual([
      "The model stream stalled: no event for 30 s after the last one (stallTimeout.idleMs)",
    ]);
    expect(slow.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "fine" }] });
  });

  it("defaults: three minutes before the first event; stallTimeout: false turns the watchdog off", async () => {
    vi.useFakeTimers();
    const provider = stallingProvider(() => []);
    const agent = createAgent({ provider });
    const events = record(agent);
    void agent.prompt("hi");
    await vi.advanceTimersByTimeAsync(179_999);
    expect(retries(events)).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(retries(events).map((e) => e.error)).toEqual([
      "The model stream stalled: no first event within 180 s (stallTimeout.firstEventMs)",
    ]);
    agent.abort();
    await agent.waitForIdle();

    const patient = stallingProvider(() => []);
    const unwatched = createAgent({ provider: patient, stallTimeout: false });
    const unwatchedEvents = record(unwatched);
    void unwatched.prompt("hi");
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(unwatched.state).toBe("running.streaming");
    expect(retries(unwatchedEvents)).toEqual([]);
    unwatched.abort();
    await unwatched.waitForIdle();
    expect(unwatchedEvents.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });

  it("watches every turn of a run: a stall in the third model call is caught (fake clock)", async () => {
    vi.useFakeTimers();
    const toolCall = (id: string): ProviderEvent[] => [
      { type: "start" },
      { type: "toolcall_start", id, name: "noop" },
      { type: "toolcall_end", id, name: "noop", arguments: { id } },
      { type: "done", stopReason: "toolUse" },
    ];
    // Two turns that call a tool after 10 s of thinking each, a third that goes silent, then an answer.
    const provider = stallingProvider((call) =>
      call < 2 ? toolCall(`c${call}`) : call === 2 ? [] : "answer",
    );
    const slowStart: Provider = {
      ...provider,
      async *stream(request, signal) {
        if (provider.calls < 2) await new Promise((resolve) => setTimeout(resolve, 10_000));
        yield* provider.stream(request, signal);
      },
    };
    const noop = defineTool({
      name: "noop",
      description: "does nothing",
      parameters: z.object({ id: z.string() }),
      execute: async () => "ok",
    });
    const agent = createAgent({
      provider: slowStart,
      tools: [noop],
      retry: fastRetry,
      stallTimeout: { firstEventMs: 30_000, idleMs: 30_000 },
    });
    const events = record(agent);
    const run = agent.prompt("hi");
    await vi.advanceTimersByTimeAsync(29_999 + 20_000);
    expect(retries(events)).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(retries(events).map((e) => e.error)).toEqual([
      "The model stream stalled: no first event within 30 s (stallTimeout.firstEventMs)",
    ]);
    await vi.advanceTimersByTimeAsync(1_000);
    await run;
    expect(agent.messages.at(-1)).toMatchObject({ content: [{ type: "text", text: "the whole answer" }] });
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("leaves no timer behind once a run is over, and none after stop()", async () => {
    vi.useFakeTimers();
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt("hi");
    expect(vi.getTimerCount()).toBe(0);
    const stopped = createAgent({ provider: stallingProvider(() => []) });
    void stopped.prompt("hi");
    await vi.advanceTimersByTimeAsync(10);
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    stopped.stop();
    await vi.advanceTimersByTimeAsync(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a misspelt watchdog option is refused, not silently left at its default", () => {
    expect(() => createAgent({ provider: scripted([]), stallTimeout: { idelMs: 5 } as never })).toThrow(
      /createAgent stallTimeout: unknown option "idelMs" \(did you mean "idleMs"\?\)/,
    );
  });
});
