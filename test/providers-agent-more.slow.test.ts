import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AssistantMessage,
  aiSdk,
  bedrock,
  createAgent,
  defineTool,
  gemini,
  type Provider,
} from "../index.js";
import {
  bedrockExceptionEvent,
  bedrockHttpError,
  bedrockReply,
  converseStream,
} from "./fixtures/bedrock-wire.js";
import {
  geminiErrorEvent,
  geminiHttpError,
  geminiReply,
  geminiStream,
  retryInfo,
} from "./fixtures/gemini-wire.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";
import { chatStream, openaiHttpError } from "./fixtures/provider-wire.js";

// Whole agent runs (createAgent, the real message builder, retries, tool actors) through the
// providers of issue 26, each against the fixture server in its API's wire format.

interface ApiCase {
  name: string;
  http2?: boolean;
  secret: string;
  provider: (server: ProviderFixtureServer) => Provider;
  text: (chunks: string[]) => FixtureReply;
  toolCall: (id: string, json: string) => FixtureReply;
  overloadMidStream: (partial: string) => FixtureReply;
  rateLimited: FixtureReply;
  unauthorized: FixtureReply;
  /** The tool result for `callId` as it appears in a later request body. */
  toolResultIn: (body: any, callId: string) => unknown;
}

const GEMINI_KEY = "AIzaSyAgentTest000000000000000000000";
const AWS_KEY_ID = "AKIAAGENTTEST0000001";
const AWS_SECRET = "agentTestSecretKey/0123456789abcdefABCDEF";
const AI_SDK_KEY = "sk-agent-aisdk-0123456789";

const cases: ApiCase[] = [
  {
    name: "gemini",
    secret: GEMINI_KEY,
    provider: (s) => gemini({ model: "gemini-2.5-flash", apiKey: GEMINI_KEY, baseURL: s.url }),
    text: (text) => geminiReply(geminiStream({ chunks: text.map((t) => [{ text: t }]) })),
    toolCall: (_id, json) =>
      geminiReply(
        geminiStream({
          chunks: [
            [{ text: "Let me look." }],
            [{ call: { name: "read_file", args: JSON.parse(json) }, signature: "R0VNSU5JLVNJRw==" }],
          ],
        }),
      ),
    overloadMidStream: (partial) =>
      geminiReply([
        ...geminiStream({ chunks: [[{ text: partial }]], open: true }),
        geminiErrorEvent(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
      ]),
    rateLimited: geminiHttpError(429, "RESOURCE_EXHAUSTED", "Quota exceeded.", [retryInfo("0.001s")]),
    unauthorized: geminiHttpError(
      403,
      "PERMISSION_DENIED",
      `Method doesn't allow unregistered callers (${GEMINI_KEY}).`,
    ),
    // Gemini API calls carry no id: a result is the newest functionResponse of its name.
    toolResultIn: (body, _callId) =>
      body.contents
        .flatMap((c: any) => c.parts)
        .filter((p: any) => p.functionResponse?.name === "read_file")
        .at(-1),
  },
  {
    name: "bedrock",
    http2: true,
    secret: AWS_SECRET,
    provider: (s) =>
      bedrock({
        model: "us.anthropic.claude-haiku-4-5-20251001-v1:0",
        region: "us-east-1",
        credentials: { accessKeyId: AWS_KEY_ID, secretAccessKey: AWS_SECRET },
        baseURL: s.url,
      }),
    text: (text) => bedrockReply(converseStream({ blocks: [{ text }] })),
    toolCall: (id, json) =>
      bedrockReply(
        converseStream({
          blocks: [{ text: ["Let me look."] }, { toolUse: { id, name: "read_file", json: [json] } }],
        }),
      ),
    overloadMidStream: (partial) =>
      bedrockReply([
        ...converseStream({ blocks: [{ text: [partial] }], open: true }).slice(0, -1),
        bedrockExceptionEvent("serviceUnavailableException", "Bedrock is unable to process your request."),
      ]),
    rateLimited: bedrockHttpError(
      429,
      "ThrottlingException",
      "Too many requests, please wait before trying again.",
    ),
    unauthorized: bedrockHttpError(
      403,
      "UnrecognizedClientException",
      "The security token included in the request is invalid.",
    ),
    toolResultIn: (body, callId) =>
      body.messages.flatMap((m: any) => m.content).find((b: any) => b.toolResult?.toolUseId === callId),
  },
  {
    name: "aiSdk (@ai-sdk/openai-compatible)",
    secret: AI_SDK_KEY,
    provider: (s) =>
      aiSdk(
        createOpenAICompatible({ name: "fixture", baseURL: s.openaiURL, apiKey: AI_SDK_KEY }).chatModel(
          "gpt-4.1",
        ),
      ),
    text: (text) => ({ type: "sse", frames: chatStream({ text }) }),
    toolCall: (id, json) => ({
      type: "sse",
      frames: chatStream({
        text: ["Let me look."],
        toolCalls: [{ index: 0, id, name: "read_file", json: [json] }],
      }),
    }),
    overloadMidStream: (partial) => ({
      type: "sse",
      frames: [
        ...chatStream({ text: [partial], open: true }),
        {
          data: {
            error: {
              message: "The server is overloaded",
              type: "server_error",
              code: "server_is_overloaded",
            },
          },
        },
      ],
    }),
    rateLimited: openaiHttpError(429, "Rate limit reached", "rate_limit_exceeded", "requests", {
      "retry-after-ms": "1",
    }),
    unauthorized: openaiHttpError(401, `Incorrect API key provided: ${AI_SDK_KEY}.`, "invalid_api_key"),
    toolResultIn: (body, callId) =>
      body.messages.find((m: any) => m.role === "tool" && m.tool_call_id === callId),
  },
];

const readFile = defineTool({
  name: "read_file",
  description: "Read a text file",
  parameters: z.object({ path: z.string() }),
  readOnly: true,
  execute: async ({ path }) => `contents of ${path}: hello`,
});

const assistants = (messages: readonly { role: string }[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant");

describe.each(cases)("a whole agent run against $name", (api) => {
  let server: ProviderFixtureServer;
  beforeAll(async () => {
    server = await startProviderServer({ http2: api.http2 });
  });
  afterAll(() => server.close());

  function agentFor() {
    server.requests.length = 0;
    const agent = createAgent({
      provider: api.provider(server),
      systemPrompt: "You read files.",
      tools: [readFile],
      retry: { baseDelayMs: 1, maxDelayMs: 5, maxRetries: 3 },
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => events.push(e));
    return { agent, events };
  }

  it("runs turns with a tool; each result reaches the next request in place", async () => {
    const { agent, events } = agentFor();
    server.reply(
      api.toolCall("call_1", '{"path":"a.txt"}'),
      api.toolCall("call_2", '{"path":"b.txt"}'),
      api.text(["Both files ", "say hello."]),
    );
    await agent.prompt("What do a.txt and b.txt say?");
    expect(agent.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(assistants(agent.messages).map((m) => m.stopReason)).toEqual(["toolUse", "toolUse", "stop"]);
    expect(assistants(agent.messages)[2]!.content).toEqual([{ type: "text", text: "Both files say hello." }]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(server.requests).toHaveLength(3);
    const [first, second] = agent.messages.filter((m) => m.role === "toolResult") as { toolCallId: string }[];
    expect(JSON.stringify(api.toolResultIn(server.requests[1]!.body, first!.toolCallId))).toContain(
      "contents of a.txt: hello",
    );
    expect(JSON.stringify(api.toolResultIn(server.requests[2]!.body, second!.toolCallId))).toContain(
      "contents of b.txt: hello",
    );
  });

  it("retries a rate limit and a mid-stream overload; no half message reaches the transcript", async () => {
    const { agent, events } = agentFor();
    server.reply(api.rateLimited, api.overloadMidStream("Half an ans"), api.text(["Whole answer."]));
    await agent.prompt("Hi");
    expect(events.filter((e) => e.type === "retry")).toHaveLength(2);
    expect(assistants(agent.messages)).toHaveLength(1);
    expect(assistants(agent.messages)[0]).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "Whole answer." }],
    });
    expect(JSON.stringify(agent.messages)).not.toContain("Half an ans");
    expect(server.requests).toHaveLength(3);
  });

  it("an auth failure ends the run at once; the credentials appear in no event, message or snapshot", async () => {
    const { agent, events } = agentFor();
    server.reply(api.unauthorized);
    await agent.prompt("Hi");
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error" });
    expect(server.requests).toHaveLength(1);
    const seen = JSON.stringify([events, agent.messages, agent.getPersistedSnapshot()]);
    expect(seen).not.toContain(api.secret);
    expect(seen).not.toContain(AWS_KEY_ID);
  });
});

describe("gemini through the agent: thought signatures", () => {
  let server: ProviderFixtureServer;
  beforeAll(async () => {
    server = await startProviderServer();
  });
  afterAll(() => server.close());

  it("the signature the API put on a function call goes back on that call in the next request", async () => {
    server.reply(
      geminiReply(
        geminiStream({
          chunks: [
            [{ thought: "I need a.txt." }],
            [{ call: { name: "read_file", args: { path: "a.txt" } }, signature: "U0lHLUNBTEw=" }],
          ],
        }),
      ),
      geminiReply(geminiStream({ chunks: [[{ text: "It says hello.", signature: "U0lHLVRFWFQ=" }]] })),
      geminiReply(geminiStream({ chunks: [[{ text: "Bye." }]] })),
    );
    const agent = createAgent({
      provider: gemini({
        model: "gemini-3-pro-preview",
        apiKey: GEMINI_KEY,
        baseURL: server.url,
        thinking: true,
      }),
      tools: [readFile],
    });
    await agent.prompt("What does a.txt say?");
    await agent.prompt("Thanks");
    expect(server.requests).toHaveLength(3);
    const model = (request: number) =>
      server.requests[request]!.body.contents.filter((c: { role: string }) => c.role === "model");
    expect(model(1)).toEqual([
      {
        role: "model",
        parts: [
          { thought: true, text: "I need a.txt." },
          { functionCall: { name: "read_file", args: { path: "a.txt" } }, thoughtSignature: "U0lHLUNBTEw=" },
        ],
      },
    ]);
    expect(model(2)[1]).toEqual({
      role: "model",
      parts: [{ text: "It says hello.", thoughtSignature: "U0lHLVRFWFQ=" }],
    });
    expect(server.requests[1]!.body.contents[2]).toEqual({
      role: "user",
      parts: [{ functionResponse: { name: "read_file", response: { output: "contents of a.txt: hello" } } }],
    });
  });
});
