// Fallback chains, routing and the circuit breaker, with scripted models: which failures fall
// over, what the next model is sent, and when a failing model is kept out.
import { describe, expect, it } from "vitest";
import {
  type AssistantMessage,
  createAgent,
  createCircuitBreaker,
  fallback,
  type Message,
  type ProviderEvent,
  route,
  scripted,
  withoutOtherVendorsState,
} from "../index.js";

const overloaded = { kind: "overloaded", message: "529 overloaded" } as const;
const fastRetry = { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 };
const lastAssistant = (messages: readonly { role: string }[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant").at(-1)!;

describe("fallback", () => {
  it("an auth error does not fall over by default; naming it in `on` does", async () => {
    const run = async (on?: ("auth" | "overloaded")[]) => {
      const first = scripted([{ error: { kind: "auth", message: "401 bad key" } }], {
        id: "anthropic",
        model: "a",
      });
      const second = scripted([{ text: "from b" }], { id: "openai", model: "b" });
      const agent = createAgent({ provider: fallback([first, second], on && { on }), retry: fastRetry });
      await agent.prompt("hi");
      return { message: lastAssistant(agent.messages), second: second.calls };
    };
    const plain = await run();
    expect(plain.message).toMatchObject({ stopReason: "error", model: "a" });
    expect(plain.second).toBe(0);
    const named = await run(["auth"]);
    expect(named.message).toMatchObject({ stopReason: "stop", model: "b", provider: "openai" });
  });

  it("`retries` retries the first model with backoff before falling over", async () => {
    const first = scripted([{ error: overloaded }, { error: overloaded }, { error: overloaded }], {
      model: "a",
    });
    const second = scripted([{ text: "from b" }], { model: "b" });
    const agent = createAgent({ provider: fallback([first, second], { retries: 2 }), retry: fastRetry });
    await agent.prompt("hi");
    expect(first.calls).toBe(3);
    expect(lastAssistant(agent.messages)).toMatchObject({
      model: "b",
      content: [{ type: "text", text: "from b" }],
    });
  });

  it("the last model of the chain keeps the agent's retries", async () => {
    const first = scripted([{ error: overloaded }], { model: "a" });
    const second = scripted([{ error: overloaded }, { text: "from b" }], { model: "b" });
    const agent = createAgent({ provider: fallback([first, second]), retry: fastRetry });
    await agent.prompt("hi");
    expect(second.calls).toBe(2);
    expect(lastAssistant(agent.messages)).toMatchObject({ model: "b", stopReason: "stop" });
  });

  it("the circuit breaker keeps a model that failed twice out until its cooldown is over", async () => {
    let now = 0;
    const failing = scripted(
      Array.from({ length: 10 }, () => ({ error: overloaded })),
      { model: "a" },
    );
    const backup = scripted(
      Array.from({ length: 10 }, () => ({ text: "ok" })),
      { model: "b" },
    );
    const agent = createAgent({
      provider: fallback([failing, backup], { breaker: { failures: 2, cooldownMs: 1000, now: () => now } }),
      retry: fastRetry,
    });
    for (let i = 0; i < 4; i++) await agent.prompt(`q${i}`);
    // Two failures open it; the next two calls skip the failing model.
    expect(failing.calls).toBe(2);
    expect(backup.calls).toBe(4);
    now = 1000;
    await agent.prompt("after the cooldown");
    expect(failing.calls).toBe(3);
  });

  it("the next vendor gets the conversation without the first vendor's signatures", async () => {
    const thinking = scripted([{ thinking: "plan", text: "first answer" }, { error: overloaded }], {
      id: "anthropic",
      model: "a",
    });
    const other = scripted([{ text: "second answer" }], { id: "openai", model: "b" });
    const agent = createAgent({ provider: fallback([thinking, other]), retry: fastRetry });
    await agent.prompt("one");
    const signed = lastAssistant(agent.messages);
    // The scripted model signs nothing: sign it as Anthropic would.
    for (const block of signed.content) if (block.type === "thinking") block.signature = "sig-anthropic";
    await agent.prompt("two");
    const sent = other.requests[0]!.messages.find((m) => m.role === "assistant") as AssistantMessage;
    expect(sent.content).toEqual([
      { type: "thinking", thinking: "plan" },
      { type: "text", text: "first answer" },
    ]);
    // The transcript itself keeps the signature for the vendor that can read it.
    expect(signed.content[0]).toMatchObject({ signature: "sig-anthropic" });
  });

  it("stream() called directly falls over only while the failed model said nothing", async () => {
    const silent = scripted([{ error: overloaded }], { model: "a" });
    const chain = fallback([silent, scripted([{ text: "b speaks" }], { model: "b" })]);
    const events: ProviderEvent[] = [];
    for await (const event of chain.stream({ messages: [], tools: [] }, new AbortController().signal))
      events.push(event);
    expect(
      events
        .filter((e) => e.type === "text_delta")
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe("b speaks");
    expect(events.at(-1)).toMatchObject({ type: "done" });
  });

  it("refuses a bad list or trigger with a clear error", () => {
    expect(() => fallback([])).toThrow(/fallback: models must be a non-empty array of providers/);
    expect(() => fallback([scripted([]), {} as never])).toThrow(/models\[1\] is .*not a provider/);
    expect(() => fallback([scripted([])], { on: ["overload" as never] })).toThrow(
      /on has "overload", not one of/,
    );
  });
});

describe("route", () => {
  it("chooses the model per call from the request; the message records the choice", async () => {
    const cheap = scripted([{ text: "cheap answer" }], { id: "openai", model: "mini" });
    const strong = scripted([{ text: "strong answer" }], { id: "anthropic", model: "big" });
    const hasImages = (messages: Message[]) =>
      messages.some(
        (m) => m.role === "user" && Array.isArray(m.content) && m.content.some((c) => c.type === "image"),
      );
    const agent = createAgent({
      provider: route({
        models: [cheap, strong],
        choose: (request) => (hasImages(request.messages) ? strong : cheap),
      }),
    });
    await agent.prompt("text only");
    expect(lastAssistant(agent.messages)).toMatchObject({ model: "mini", provider: "openai" });
    await agent.prompt({
      role: "user",
      content: [
        { type: "text", text: "and this?" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      ],
      timestamp: 0,
    });
    expect(lastAssistant(agent.messages)).toMatchObject({ model: "big", provider: "anthropic" });
  });

  it("a choice outside its models ends the call with an error naming it", async () => {
    const agent = createAgent({
      provider: route({
        models: [scripted([{ text: "x" }])],
        choose: () => scripted([], { model: "stray" }),
      }),
    });
    await agent.prompt("hi");
    expect(lastAssistant(agent.messages)).toMatchObject({ stopReason: "error" });
    expect(lastAssistant(agent.messages).errorMessage).toMatch(
      /model "stray", which is not one of its models/,
    );
  });
});

describe("createCircuitBreaker", () => {
  it("opens after `failures` in a row, lets one trial through after the cooldown, closes on an answer", () => {
    let now = 0;
    const breaker = createCircuitBreaker({ failures: 2, cooldownMs: 100, now: () => now });
    breaker.record("m", false);
    expect(breaker.allows("m")).toBe(true);
    breaker.record("m", false);
    expect(breaker.allows("m")).toBe(false);
    now = 100;
    expect(breaker.allows("m")).toBe(true);
    breaker.record("m", true);
    breaker.record("m", false);
    expect(breaker.allows("m")).toBe(true);
  });
});

describe("withoutOtherVendorsState", () => {
  it("keeps the array when nothing is foreign, drops redacted and metadata-only thinking of others", () => {
    const own: Message = {
      role: "assistant",
      provider: "anthropic",
      content: [{ type: "thinking", thinking: "x", signature: "s" }],
      stopReason: "stop",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      timestamp: 0,
    };
    const messages = [own];
    expect(withoutOtherVendorsState(messages, "anthropic")).toBe(messages);
    const foreign: Message = {
      ...own,
      provider: "gemini",
      content: [
        { type: "thinking", thinking: "", signature: "meta" },
        { type: "thinking", thinking: "secret", signature: "enc", redacted: true },
        { type: "text", text: "hi" },
      ],
    };
    expect((withoutOtherVendorsState([foreign], "anthropic")[0] as AssistantMessage).content).toEqual([
      { type: "text", text: "hi" },
    ]);
  });
});
