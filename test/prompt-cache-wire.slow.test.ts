// Issue 42 item 4: prompt caching that survives a pause, over each vendor's wire. A call that an
// approval wait may follow asks for the long cache lifetime in its vendor's own field; the cache
// reads and writes each vendor reports (in its own usage fields) reach the message, the run's
// outcome and its cache report. Anthropic's cache is modelled by the fixture server with a fake
// clock: an approval that waits 20 minutes keeps the prefix with the 1-hour lifetime, loses it
// with the 5-minute one.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  anthropic,
  type AssistantMessage,
  bedrock,
  createAgent,
  defineTool,
  gemini,
  openai,
  openaiCompatible,
  type PromptCacheOptions,
  type Provider,
} from "../index.js";
import { bedrockReply, converseStream } from "./fixtures/bedrock-wire.js";
import { geminiReply, geminiStream } from "./fixtures/gemini-wire.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicMessage, chatStream, responsesStream } from "./fixtures/provider-wire.js";

let clock = 1_000_000;
let server: ProviderFixtureServer;
let h2: ProviderFixtureServer;
beforeAll(async () => {
  [server, h2] = await Promise.all([startProviderServer(), startProviderServer({ http2: true })]);
});
afterAll(async () => {
  await Promise.all([server.close(), h2.close()]);
});

const deploy = defineTool({
  name: "deploy",
  description: "Deploys the service",
  parameters: z.object({ env: z.string() }),
  needsApproval: true,
  execute: async ({ env }) => `deployed to ${env}`,
});

// Each run its own system prompt: the fixture server's cache outlives a test.
let runs = 0;
const system = () => `You deploy services (run ${++runs}). ${"Follow the runbook carefully. ".repeat(40)}`;

/** Runs one prompt whose first answer calls `deploy`; approves it after `waitMs` of the fake clock. */
async function deployAfterWait(provider: Provider, waitMs: number, promptCache?: PromptCacheOptions) {
  const agent = createAgent({
    provider,
    systemPrompt: system(),
    tools: [deploy],
    ...(promptCache && { promptCache }),
  });
  const approval = new Promise<string>((resolve) => {
    agent.events$.subscribe((event: AgentEvent) => {
      if (event.type === "approval_requested") resolve(event.toolCallId);
    });
  });
  const done = agent.prompt("Deploy to staging");
  const id = await approval;
  clock += waitMs;
  agent.approve(id);
  return done;
}

const assistants = (messages: readonly { role: string }[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant");

describe("Anthropic: the 1-hour lifetime across a 20-minute approval", () => {
  // A cache of its own per test: what one test wrote must not be read by the next.
  let fresh: ProviderFixtureServer;
  beforeEach(async () => {
    fresh = await startProviderServer({ now: () => clock });
  });
  afterEach(() => fresh.close());
  const claude = () =>
    anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-test-key-000", baseURL: fresh.url });
  const replies = () =>
    fresh.reply(
      {
        type: "sse",
        frames: anthropicMessage({
          blocks: [{ type: "tool_use", id: "toolu_01", name: "deploy", json: ['{"env":"staging"}'] }],
        }),
      },
      { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Deployed."] }] }) },
    );

  it("asks for ttl 1h when an approval may follow, and reads the prefix after the wait", async () => {
    const before = fresh.requests.length;
    replies();
    const outcome = await deployAfterWait(claude(), 20 * 60_000);
    expect(outcome.reason).toBe("stop");
    const [first, second] = fresh.requests.slice(before);
    expect(first!.body.system.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(first!.body.tools.at(-1).cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(second!.anthropicUsage!.cache_read_input_tokens).toBeGreaterThan(0);

    const [call1, call2] = assistants(outcome.messages);
    // The first call wrote its whole prefix for an hour; Anthropic prices that at 2× input.
    expect(call1!.usage.cacheWrite).toBeGreaterThan(0);
    expect(call1!.usage.cacheWriteLong).toBe(call1!.usage.cacheWrite);
    expect(call1!.usage.cost!.cacheWrite).toBeCloseTo((call1!.usage.cacheWrite * 2) / 1e6, 12);
    expect(call2!.usage.cacheRead).toBe(second!.anthropicUsage!.cache_read_input_tokens);
    expect(outcome.cache).toMatchObject({ calls: 2, hits: 1, readTokens: call2!.usage.cacheRead });
    expect(outcome.cache!.hitRatio).toBeGreaterThan(0);
  });

  it("with retention short, the same wait loses the cache: the second call writes it all again", async () => {
    const before = fresh.requests.length;
    replies();
    const outcome = await deployAfterWait(claude(), 20 * 60_000, { retention: "short" });
    const [first, second] = fresh.requests.slice(before);
    expect(first!.body.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(second!.anthropicUsage!.cache_read_input_tokens).toBe(0);
    const [, call2] = assistants(outcome.messages);
    expect(call2!.usage.cacheRead).toBe(0);
    expect(call2!.usage.cacheWrite).toBe(second!.anthropicUsage!.cache_creation_input_tokens);
    expect(call2!.usage.cacheWriteLong).toBeUndefined();
    expect(outcome.cache).toMatchObject({ calls: 2, hits: 0 });
  });

  it("an agent whose calls no wait follows asks for the default lifetime", async () => {
    const before = fresh.requests.length;
    fresh.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Hi."] }] }) });
    const agent = createAgent({ provider: claude(), systemPrompt: system() });
    await agent.prompt("Hello");
    expect(fresh.requests[before]!.body.system.at(-1).cache_control).toEqual({ type: "ephemeral" });
  });
});

describe("OpenAI: prompt_cache_retention 24h, cached_tokens reported", () => {
  const toolCallThenText = (api: "chat" | "responses") =>
    api === "chat"
      ? [
          {
            type: "sse" as const,
            frames: chatStream({
              toolCalls: [{ index: 0, id: "call_1", name: "deploy", json: ['{"env":"staging"}'] }],
              usage: { prompt: 900, completion: 9 },
            }),
          },
          {
            type: "sse" as const,
            frames: chatStream({ text: ["Deployed."], usage: { prompt: 950, completion: 3, cached: 896 } }),
          },
        ]
      : [
          {
            type: "sse" as const,
            frames: responsesStream({
              functionCalls: [{ id: "fc_1", callId: "call_1", name: "deploy", json: ['{"env":"staging"}'] }],
              usage: { input: 900, output: 9 },
            }),
          },
          {
            type: "sse" as const,
            frames: responsesStream({ text: ["Deployed."], usage: { input: 950, output: 3, cached: 896 } }),
          },
        ];

  for (const api of ["chat", "responses"] as const) {
    it(`${api}: a call an approval may follow sends prompt_cache_retention "24h"; the cached tokens are cache reads`, async () => {
      const before = server.requests.length;
      server.reply(...toolCallThenText(api));
      const provider = openai({
        model: "gpt-4.1",
        api,
        apiKey: "sk-test-key-000000",
        baseURL: server.openaiURL,
      });
      const outcome = await deployAfterWait(provider, 20 * 60_000);
      expect(outcome.reason).toBe("stop");
      for (const request of server.requests.slice(before)) {
        expect(request.body.prompt_cache_retention).toBe("24h");
      }
      const [, call2] = assistants(outcome.messages);
      expect(call2!.usage).toMatchObject({ input: 950 - 896, cacheRead: 896, cacheWrite: 0 });
      expect(outcome.cache).toMatchObject({ calls: 2, hits: 1, readTokens: 896, writeTokens: 0 });
    });
  }

  it("a model without extended retention, and an OpenAI-compatible server, are never sent the field", async () => {
    const before = server.requests.length;
    server.reply(...toolCallThenText("chat"), ...toolCallThenText("chat"));
    await deployAfterWait(
      openai({ model: "gpt-4o", apiKey: "sk-test-key-000000", baseURL: server.openaiURL }),
      0,
    );
    await deployAfterWait(openaiCompatible({ model: "llama3.1", baseURL: server.openaiURL }), 0);
    const sent = server.requests.slice(before);
    expect(sent).toHaveLength(4);
    for (const request of sent) expect(request.body).not.toHaveProperty("prompt_cache_retention");
  });
});

describe("Bedrock: cache points with ttl 1h, cacheDetails reported", () => {
  it("a Claude model's cache points ask for an hour; the 1h writes are priced as such", async () => {
    const before = h2.requests.length;
    h2.reply(
      bedrockReply(
        converseStream({
          blocks: [{ toolUse: { id: "tooluse_1", name: "deploy", json: ['{"env":"staging"}'] } }],
          usage: { input: 12, output: 9, cacheWrite: 800, cacheWriteLong: 800 },
        }),
      ),
      bedrockReply(
        converseStream({
          blocks: [{ text: ["Deployed."] }],
          usage: { input: 40, output: 3, cacheRead: 800 },
        }),
      ),
    );
    const provider = bedrock({
      model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      region: "us-east-1",
      credentials: {
        accessKeyId: "AKIAAGENTTEST0000001",
        secretAccessKey: "agentTestSecretKey/0123456789abcdefABCDEF",
      },
      baseURL: h2.url,
    });
    const outcome = await deployAfterWait(provider, 20 * 60_000);
    expect(outcome.reason).toBe("stop");
    const first = h2.requests[before]!.body;
    expect(first.system.at(-1)).toEqual({ cachePoint: { type: "default", ttl: "1h" } });
    expect(first.toolConfig.tools.at(-1)).toEqual({ cachePoint: { type: "default", ttl: "1h" } });
    const [call1, call2] = assistants(outcome.messages);
    expect(call1!.usage).toMatchObject({ cacheWrite: 800, cacheWriteLong: 800 });
    expect(call1!.usage.cost!.cacheWrite).toBeCloseTo((800 * 6) / 1e6, 12);
    expect(call2!.usage.cacheRead).toBe(800);
    expect(outcome.cache).toMatchObject({
      calls: 2,
      hits: 1,
      readTokens: 800,
      writeTokens: 800,
      writeLongTokens: 800,
    });
  });
});

describe("Gemini: implicit caching, cachedContentTokenCount reported", () => {
  it("sends no lifetime (the API has none for implicit caching) and reports the cached tokens", async () => {
    const before = server.requests.length;
    server.reply(
      geminiReply(
        geminiStream({
          chunks: [[{ call: { name: "deploy", args: { env: "staging" } } }]],
          usage: { prompt: 900, candidates: 9 },
        }),
      ),
      geminiReply(
        geminiStream({
          chunks: [[{ text: "Deployed." }]],
          usage: { prompt: 950, candidates: 3, cached: 896 },
        }),
      ),
    );
    const provider = gemini({
      model: "gemini-2.5-flash",
      apiKey: "AIzaSyAgentTest000000000000000000000",
      baseURL: server.url,
    });
    const outcome = await deployAfterWait(provider, 20 * 60_000);
    expect(outcome.reason).toBe("stop");
    expect(JSON.stringify(server.requests.slice(before).map((r) => r.body))).not.toMatch(/ttl|retention/i);
    const [, call2] = assistants(outcome.messages);
    expect(call2!.usage).toMatchObject({ input: 950 - 896, cacheRead: 896 });
    expect(outcome.cache).toMatchObject({ calls: 2, hits: 1, readTokens: 896 });
  });
});
