// Fallback chains over the wire fixtures of every provider: the first model fails mid-stream (a
// 529 or its vendor's overload) after it streamed part of an answer; the second answers. The
// transcript, the AI SDK UI stream and an AG-UI client all show that one answer, and the message
// records the model that gave it.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgUiEvent, agUiEncoder, encodeUIMessageChunks, type ResponseContext } from "../http.js";
import {
  type AgentEvent,
  aiSdk,
  anthropic,
  type AssistantMessage,
  bedrock,
  createAgent,
  fallback,
  gemini,
  openai,
  openaiCompatible,
  type Provider,
} from "../index.js";
import { InProcessClient } from "./fixtures/ag-ui-clients.js";
import { bedrockExceptionEvent, bedrockReply, converseStream } from "./fixtures/bedrock-wire.js";
import { geminiErrorEvent, geminiReply, geminiStream } from "./fixtures/gemini-wire.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";
import {
  anthropicErrorFrame,
  anthropicMessage,
  chatStream,
  responsesStream,
} from "./fixtures/provider-wire.js";

interface FirstModel {
  name: string;
  http2?: boolean;
  provider: (server: ProviderFixtureServer) => Provider;
  /** Streams `partial`, then fails with the vendor's overload. */
  overloadMidStream: (partial: string) => FixtureReply;
}

const chatOverload = (partial: string): FixtureReply => ({
  type: "sse",
  frames: [
    ...chatStream({ text: [partial], open: true }),
    {
      data: {
        error: { message: "The server is overloaded", type: "server_error", code: "server_is_overloaded" },
      },
    },
  ],
});

const firstModels: FirstModel[] = [
  {
    name: "anthropic (529 overloaded_error mid-stream)",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-test-key-000", baseURL: s.url }),
    overloadMidStream: (partial) => {
      const frames = anthropicMessage({ blocks: [{ type: "text", text: [partial, "never sent"] }] });
      return {
        type: "sse",
        frames: [...frames.slice(0, 4), anthropicErrorFrame("overloaded_error", "Overloaded")],
      };
    },
  },
  {
    name: "openai chat",
    provider: (s) => openai({ model: "gpt-4.1", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
    overloadMidStream: chatOverload,
  },
  {
    name: "openai responses",
    provider: (s) =>
      openai({ model: "gpt-4.1", api: "responses", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
    overloadMidStream: (partial) => {
      const frames = responsesStream({ text: [partial, "never sent"] });
      const error = {
        type: "error",
        code: "server_is_overloaded",
        message: "Overloaded",
        param: null,
        sequence_number: 5,
      };
      return { type: "sse", frames: [...frames.slice(0, 5), { event: "error", data: error }] };
    },
  },
  {
    name: "openai-compatible (connection reset mid-stream)",
    provider: (s) =>
      openaiCompatible({ baseURL: s.openaiURL, model: "qwen3-8b", apiKey: "local-secret-token-123" }),
    overloadMidStream: (partial) => ({
      type: "sse",
      frames: chatStream({ text: [partial, "never sent"] }),
      resetAfter: 2,
    }),
  },
  {
    name: "gemini",
    provider: (s) =>
      gemini({ model: "gemini-2.5-flash", apiKey: "AIzaSyAgentTest000000000000000000000", baseURL: s.url }),
    overloadMidStream: (partial) =>
      geminiReply([
        ...geminiStream({ chunks: [[{ text: partial }]], open: true }),
        geminiErrorEvent(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
      ]),
  },
  {
    name: "bedrock",
    http2: true,
    provider: (s) =>
      bedrock({
        model: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        region: "us-east-1",
        credentials: {
          accessKeyId: "AKIAAGENTTEST0000001",
          secretAccessKey: "agentTestSecretKey/0123456789abcdefABCDEF",
        },
        baseURL: s.url,
      }),
    overloadMidStream: (partial) =>
      bedrockReply([
        ...converseStream({ blocks: [{ text: [partial] }], open: true }).slice(0, -1),
        bedrockExceptionEvent("serviceUnavailableException", "Bedrock is unable to process your request."),
      ]),
  },
  {
    name: "aiSdk (@ai-sdk/openai-compatible)",
    provider: (s) =>
      aiSdk(
        createOpenAICompatible({ name: "fixture", baseURL: s.openaiURL, apiKey: "sk-aisdk-0123" }).chatModel(
          "gpt-4.1",
        ),
      ),
    overloadMidStream: chatOverload,
  },
];

let first: ProviderFixtureServer;
let firstH2: ProviderFixtureServer;
let second: ProviderFixtureServer;
beforeAll(async () => {
  [first, firstH2, second] = await Promise.all([
    startProviderServer(),
    startProviderServer({ http2: true }),
    startProviderServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([first.close(), firstH2.close(), second.close()]);
});

const context: ResponseContext = { kind: "run", threadId: "t", runId: undefined, messages: [] };

/** The texts an AI SDK client keeps: a `reset-step` drops what its step streamed. */
function uiTexts(chunks: readonly { type: string; [key: string]: unknown }[]): string[] {
  const parts: { id: string; text: string }[] = [];
  let stepStart = 0;
  for (const chunk of chunks) {
    if (chunk.type === "start-step") stepStart = parts.length;
    else if (chunk.type === "reset-step") parts.length = stepStart;
    else if (chunk.type === "text-start") parts.push({ id: chunk.id as string, text: "" });
    else if (chunk.type === "text-delta") parts.find((p) => p.id === chunk.id)!.text += chunk.delta as string;
  }
  return parts.map((p) => p.text);
}

function agUiFrames(
  events: readonly AgentEvent[],
  end: Extract<AgentEvent, { type: "agent_end" }>,
): AgUiEvent[] {
  const encoder = agUiEncoder({ runId: "run-1", client: "1.0" });
  let wire = encoder.open({
    kind: "run",
    threadId: "t1",
    runId: undefined,
    messages: [],
    transcript: () => [],
  });
  for (const event of events) wire += encoder.event(event, 0);
  wire += encoder.close({ kind: "end", event: end, messages: end.messages });
  return wire
    .split("\n\n")
    .filter((frame) => frame !== "")
    .map((frame) => JSON.parse(frame.slice("data: ".length)) as AgUiEvent);
}

describe.each(firstModels)("fallback: $name fails mid-stream, the second model answers", (model) => {
  it("one answer in the transcript, the AI SDK UI stream and AG-UI; the message names the second model", async () => {
    const server = model.http2 ? firstH2 : first;
    server.reply(model.overloadMidStream("I think the answ"));
    second.reply({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: ["Forty", "-two."] }] }),
    });
    const backup = anthropic({ model: "claude-opus-4-5", apiKey: "sk-ant-second-000", baseURL: second.url });
    const agent = createAgent({
      provider: fallback([model.provider(server), backup], { breaker: false }),
      retry: { baseDelayMs: 1, maxDelayMs: 2, jitter: 0 },
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((event) => events.push(event));
    await agent.prompt({ role: "user", content: "What is the answer?", timestamp: 0, id: "u1" });

    const assistants = agent.messages.filter((m): m is AssistantMessage => m.role === "assistant");
    expect(assistants).toHaveLength(1);
    expect(assistants[0]).toMatchObject({
      stopReason: "stop",
      provider: backup.id,
      model: "claude-opus-4-5",
      content: [{ type: "text", text: "Forty-two." }],
    });
    // The cost is the second model's price, on its own usage.
    expect(assistants[0]!.usage.cost?.total).toBeGreaterThan(0);
    // No retry of the first model: one request each.
    expect(server.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(1);
    server.requests.length = 0;
    second.requests.length = 0;
    expect(events).toContainEqual(
      expect.objectContaining({ type: "retry", provider: backup.id, model: "claude-opus-4-5", delayMs: 0 }),
    );
    const discarded = events.filter((e) => e.type === "message_end" && e.discarded);
    expect(discarded).toHaveLength(1);

    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    const chunks = encodeUIMessageChunks(context, events, {
      kind: "end",
      event: end,
      messages: end.messages,
    });
    expect(chunks.some((c) => c.type === "reset-step")).toBe(true);
    expect(uiTexts(chunks)).toEqual(["Forty-two."]);

    const client = new InProcessClient("1.0");
    const run = await client.run(agUiFrames(events, end));
    expect(run.failures).toEqual([]);
    const shown = (client.messages as { role: string; content?: unknown }[]).filter(
      (m) => m.role === "assistant",
    );
    expect(shown).toEqual([expect.objectContaining({ content: "Forty-two." })]);
  });
});
