// A server's retry-after that is longer than the user's `retry.maxDelayMs`, on each vendor's wire:
// the agent never waits longer than the user's cap (it retries at the cap, as the vendors' SDKs do),
// the final error says what the server asked for, and a fallback chain hands over at once.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  aiSdk,
  anthropic,
  createAgent,
  fallback,
  gemini,
  openai,
  type Provider,
} from "../index.js";
import { asksTooLongAWait, shouldRetry } from "../actors/backoff.js";
import { geminiHttpError, retryInfo } from "./fixtures/gemini-wire.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";
import {
  anthropicHttpError,
  anthropicMessage,
  chatStream,
  openaiHttpError,
} from "./fixtures/provider-wire.js";

const KEY = "sk-test-retry-after-0001";
const inAnHour = () => new Date(Date.now() + 3_600_000).toUTCString();

interface Wire {
  name: string;
  provider: (server: ProviderFixtureServer) => Provider;
  /** A 429 whose retry-after asks for an hour, in the vendor's own form. */
  tooLong: () => FixtureReply;
}

const wires: Wire[] = [
  {
    name: "anthropic, retry-after in seconds",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: KEY, baseURL: s.url }),
    tooLong: () =>
      anthropicHttpError(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit", {
        "retry-after": "3600",
      }),
  },
  {
    name: "anthropic, retry-after as an HTTP date",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: KEY, baseURL: s.url }),
    tooLong: () =>
      anthropicHttpError(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit", {
        "retry-after": inAnHour(),
      }),
  },
  {
    name: "openai chat, retry-after as an HTTP date",
    provider: (s) => openai({ model: "gpt-4.1", apiKey: KEY, baseURL: s.openaiURL }),
    tooLong: () =>
      openaiHttpError(429, "Rate limit reached for gpt-4.1", "rate_limit_exceeded", "requests", {
        "retry-after": inAnHour(),
      }),
  },
  {
    name: "openai responses, retry-after in seconds",
    provider: (s) => openai({ model: "gpt-4.1", api: "responses", apiKey: KEY, baseURL: s.openaiURL }),
    tooLong: () =>
      openaiHttpError(429, "Rate limit reached for gpt-4.1", "rate_limit_exceeded", "requests", {
        "retry-after": "3600",
      }),
  },
  {
    name: "gemini, RetryInfo",
    provider: (s) => gemini({ model: "gemini-2.5-flash", apiKey: KEY, baseURL: s.url }),
    tooLong: () =>
      geminiHttpError(429, "RESOURCE_EXHAUSTED", "You exceeded your current quota.", [retryInfo("3600s")]),
  },
  {
    name: "aiSdk (@ai-sdk/openai-compatible), retry-after in seconds",
    provider: (s) =>
      aiSdk(
        createOpenAICompatible({ name: "fixture", baseURL: s.openaiURL, apiKey: KEY }).chatModel("gpt-4.1"),
      ),
    tooLong: () =>
      openaiHttpError(429, "Rate limit reached", "rate_limit_exceeded", "requests", {
        "retry-after": "3600",
      }),
  },
];

let server: ProviderFixtureServer;
let second: ProviderFixtureServer;
beforeAll(async () => {
  server = await startProviderServer();
  second = await startProviderServer();
});
afterAll(async () => {
  await server.close();
  await second.close();
});

function record(provider: Provider) {
  server.requests.length = 0;
  second.requests.length = 0;
  const agent = createAgent({ provider, retry: { baseDelayMs: 1, maxDelayMs: 50, maxRetries: 1 } });
  const events: AgentEvent[] = [];
  agent.events$.subscribe((e) => events.push(e));
  return { agent, events };
}

describe.each(wires)("a retry-after longer than retry.maxDelayMs: $name", (wire) => {
  it("is retried after the user's cap, never later; the final error says what the server asked for", async () => {
    server.reply(wire.tooLong(), wire.tooLong());
    const { agent, events } = record(wire.provider(server));
    await agent.prompt("Hi");

    expect(server.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry")).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 50 }),
    ]);
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end).toMatchObject({ type: "agent_end", reason: "error", errorKind: "rate_limit" });
    expect(end.errorMessage).toMatch(
      /^429 .*\(the server asked to wait 3\d{3}(\.\d)? s before trying again, longer than retry\.maxDelayMs, 50 ms\)$/,
    );
    expect(agent.messages.at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
    expect(JSON.stringify(events)).not.toContain(KEY);
  });

  it("a fallback chain that retries its models hands over at once instead", async () => {
    server.reply(wire.tooLong());
    second.reply({ type: "sse", frames: chatStream({ text: ["From the second model."] }) });
    const next = openai({ model: "gpt-4.1-mini", apiKey: KEY, baseURL: second.openaiURL });
    const { agent, events } = record(fallback([wire.provider(server), next], { retries: 2 }));
    await agent.prompt("Hi");

    expect(server.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === "retry")).toEqual([
      expect.objectContaining({ delayMs: 0, provider: "openai", model: "gpt-4.1-mini" }),
    ]);
    expect(agent.messages.at(-1)).toMatchObject({
      role: "assistant",
      model: "gpt-4.1-mini",
      content: [{ type: "text", text: "From the second model." }],
    });
  });
});

describe("a rate limit that says its wait only in words (OpenAI's TPM and RPM limits)", () => {
  const limited = (wait: string) =>
    openaiHttpError(
      429,
      `Rate limit reached for gpt-4.1 in organization org-fixture on tokens per min (TPM): Limit 30000, Used 29500, Requested 900. Please try again in ${wait}. Visit https://platform.openai.com/account/rate-limits to learn more.`,
      "rate_limit_exceeded",
      "tokens",
    );
  const chat = () => openai({ model: "gpt-4.1", apiKey: KEY, baseURL: server.openaiURL });

  it("is retried after the wait it names, not the backoff's first second", async () => {
    server.reply(limited("40ms"), { type: "sse", frames: chatStream({ text: ["Done."] }) });
    const { agent, events } = record(chat());
    await agent.prompt("Hi");
    expect(events.filter((e) => e.type === "retry")).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 40 }),
    ]);
    expect(agent.messages.at(-1)).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "Done." }],
    });
  });

  it("a named wait longer than retry.maxDelayMs is waited up to the cap, and the error names it", async () => {
    server.reply(limited("6m0s"), limited("6m0s"));
    const { agent, events } = record(chat());
    await agent.prompt("Hi");
    expect(events.filter((e) => e.type === "retry")).toEqual([expect.objectContaining({ delayMs: 50 })]);
    expect((events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>).errorMessage).toMatch(
      /\(the server asked to wait 360 s before trying again, longer than retry\.maxDelayMs, 50 ms\)$/,
    );
  });
});

describe("a fallback chain remembers the wait a server asked for", () => {
  it("the next calls skip the rate-limited model until its retry-after is over, then try it again", async () => {
    let now = 0;
    const primary = anthropic({ model: "claude-haiku-4-5", apiKey: KEY, baseURL: server.url });
    const next = openai({ model: "gpt-4.1-mini", apiKey: KEY, baseURL: second.openaiURL });
    const { agent } = record(fallback([primary, next], { breaker: { now: () => now } }));
    const answer = (text: string): FixtureReply => ({ type: "sse", frames: chatStream({ text: [text] }) });

    server.reply(anthropicHttpError(429, "rate_limit_error", "Rate limited", { "retry-after": "30" }));
    second.reply(answer("one"), answer("two"));
    await agent.prompt("first");
    now = 29_000;
    await agent.prompt("second");
    expect(server.requests).toHaveLength(1); // asked once, not again within its 30 s
    expect(second.requests).toHaveLength(2);

    now = 30_000;
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["back"] }] }) });
    await agent.prompt("third");
    expect(server.requests).toHaveLength(2);
    expect(agent.messages.at(-1)).toMatchObject({
      model: "claude-haiku-4-5",
      content: [{ type: "text", text: "back" }],
    });
  });
});

describe("asksTooLongAWait", () => {
  it("says whether the server asked for more than the cap; such a failure is still retried", () => {
    const policy = { maxRetries: 4, maxConnectRetries: 0, maxDelayMs: 60_000 };
    const at = (retryAfterMs: number) => ({
      type: "error" as const,
      kind: "rate_limit" as const,
      message: "429",
      retryAfterMs,
    });
    expect(asksTooLongAWait(at(60_000), policy)).toBe(false);
    expect(asksTooLongAWait(at(60_001), policy)).toBe(true);
    expect(shouldRetry(at(3_600_000), 0, 0, policy)).toBe(true);
  });
});
