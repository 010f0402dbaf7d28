import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError } from "@ai-sdk/provider";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  type AiSdkLanguageModel,
  aiSdk,
  type AssistantMessage,
  createAgent,
  defineTool,
  type Message,
  type ProviderEvent,
} from "../index.js";
import { collect, last, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { chatStream, openaiHttpError } from "./fixtures/provider-wire.js";

type ErrorEvent = Extract<ProviderEvent, { type: "error" }>;

/**
 * A `LanguageModel` built by hand from the specification: `doStream` records its call options and
 * answers with the given stream parts (or throws the given error).
 */
function mockModel(
  version: "v2" | "v3",
  parts: unknown[] | (() => never),
): AiSdkLanguageModel & { calls: any[] } {
  const calls: any[] = [];
  return {
    specificationVersion: version,
    provider: "mock.chat",
    modelId: "mock-1",
    calls,
    async doStream(options: any) {
      calls.push(options);
      if (typeof parts === "function") parts();
      const queue = [...(parts as unknown[])];
      return {
        stream: new ReadableStream({
          pull(controller) {
            const next = queue.shift();
            if (next === undefined) controller.close();
            else if (next instanceof Error) controller.error(next);
            else controller.enqueue(next);
          },
        }),
      };
    },
  } as AiSdkLanguageModel & { calls: any[] };
}

const run = (model: AiSdkLanguageModel, request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(aiSdk(model).stream(request, signal));

const v3Usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  inputTokens: { total: input + cacheRead + cacheWrite, noCache: input, cacheRead, cacheWrite },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

describe("aiSdk adapter: LanguageModelV3 stream parts", () => {
  it("maps text, reasoning (with its provider metadata), streamed tool input and the finish", async () => {
    const model = mockModel("v3", [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "r1", modelId: "mock-1" },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "Think" },
      { type: "reasoning-end", id: "r", providerMetadata: { anthropic: { signature: "sig-1" } } },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Reading." },
      { type: "text-end", id: "t" },
      { type: "tool-input-start", id: "call_1", toolName: "read_file" },
      { type: "tool-input-delta", id: "call_1", delta: '{"path":' },
      { type: "tool-input-delta", id: "call_1", delta: '"a"}' },
      { type: "tool-input-end", id: "call_1" },
      { type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: '{"path":"a"}' },
      { type: "tool-call", toolCallId: "call_2", toolName: "read_file", input: '{"path":"b"}' },
      {
        type: "finish",
        finishReason: { unified: "tool-calls", raw: "tool_use" },
        usage: v3Usage(100, 20, 800, 50),
      },
    ]);
    expect(await run(model)).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Think" },
      { type: "thinking_delta", delta: "", signature: 'ai-sdk-metadata:{"anthropic":{"signature":"sig-1"}}' },
      { type: "text_delta", delta: "Reading." },
      { type: "toolcall_start", id: "call_1", name: "read_file" },
      { type: "toolcall_delta", id: "call_1", delta: '{"path":' },
      { type: "toolcall_delta", id: "call_1", delta: '"a"}' },
      { type: "toolcall_end", id: "call_1", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_start", id: "call_2", name: "read_file" },
      { type: "toolcall_delta", id: "call_2", delta: '{"path":"b"}' },
      { type: "toolcall_end", id: "call_2", name: "read_file", arguments: { path: "b" } },
      {
        type: "done",
        stopReason: "toolUse",
        usage: { input: 100, output: 20, cacheRead: 800, cacheWrite: 50, totalTokens: 970 },
      },
    ]);
    expect(model.calls[0]).toMatchObject({
      prompt: [
        { role: "system", content: "You are terse." },
        { role: "user", content: [{ type: "text", text: "hi" }] },
      ],
      tools: [
        {
          type: "function",
          name: "read_file",
          description: "Read a file",
          inputSchema: readFileSpec.parameters,
        },
      ],
      abortSignal: expect.any(AbortSignal),
    });
  });

  it("leaves out calls the provider ran itself; maps length and content-filter", async () => {
    const model = mockModel("v3", [
      { type: "tool-call", toolCallId: "ws_1", toolName: "web_search", input: "{}", providerExecuted: true },
      { type: "text-delta", id: "t", delta: "cut" },
      { type: "finish", finishReason: { unified: "length", raw: "max_tokens" }, usage: v3Usage(1, 1) },
    ]);
    const events = await run(model);
    expect(events.map((e) => e.type)).toEqual(["start", "text_delta", "done"]);
    expect(last(events)).toMatchObject({ stopReason: "length" });

    const filtered = mockModel("v3", [
      { type: "text-delta", id: "t", delta: "x" },
      {
        type: "finish",
        finishReason: { unified: "content-filter", raw: "content_filter" },
        usage: v3Usage(1, 1),
      },
    ]);
    expect(last(await run(filtered))).toMatchObject({ type: "error", kind: "api" });
  });

  it("an error part ends the stream with its APICallError classified, retry-after included", async () => {
    const error = new APICallError({
      message: "Rate limit exceeded",
      url: "https://api.example/v1/chat",
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { "Retry-After": "7" },
      responseBody: '{"error":{"message":"Rate limit exceeded","type":"rate_limit_error"}}',
      isRetryable: true,
    });
    const model = mockModel("v3", [
      { type: "text-delta", id: "t", delta: "a" },
      { type: "error", error },
    ]);
    expect(await run(model)).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "a" },
      { type: "error", kind: "rate_limit", message: "429 Rate limit exceeded", retryAfterMs: 7000 },
    ]);
  });

  it("a doStream that throws, a stream that errors, a stream without finish", async () => {
    const overloaded = new APICallError({
      message: "Service Unavailable",
      url: "u",
      requestBodyValues: {},
      statusCode: 503,
      isRetryable: true,
    });
    expect(
      await run(
        mockModel("v3", () => {
          throw overloaded;
        }),
      ),
    ).toEqual([{ type: "error", kind: "overloaded", message: "503 Service Unavailable" }]);
    const cut = Object.assign(new TypeError("terminated"), { cause: { code: "ECONNRESET" } });
    expect(
      last(await run(mockModel("v3", [{ type: "text-delta", id: "t", delta: "a" }, cut]))),
    ).toMatchObject({
      kind: "network",
    });
    expect(last(await run(mockModel("v3", [{ type: "text-delta", id: "t", delta: "a" }])))).toMatchObject({
      kind: "network",
      message: "Stream ended before the response was complete",
    });
  });

  it("sends the transcript as the v3 prompt: tool results in one tool message, images as file parts, reasoning back to its own provider", async () => {
    const model = mockModel("v3", [
      { type: "finish", finishReason: { unified: "stop" }, usage: v3Usage(1, 1) },
    ]);
    const assistant = (provider: string): AssistantMessage => ({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Plan", signature: 'ai-sdk-metadata:{"anthropic":{"signature":"s"}}' },
        { type: "toolCall", id: "c1", name: "read_file", arguments: { path: "a" } },
        { type: "toolCall", id: "c2", name: "read_file", arguments: { path: "b" } },
      ],
      stopReason: "toolUse",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      provider,
      timestamp: 2,
    });
    const messages: Message[] = [
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", data: PNG_1x1, mimeType: "image/png" },
        ],
        timestamp: 1,
      },
      assistant("ai-sdk:mock.chat"),
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "read_file",
        content: [
          { type: "text", text: "A" },
          { type: "image", data: PNG_1x1, mimeType: "image/png" },
        ],
        isError: false,
        timestamp: 3,
      },
      {
        role: "toolResult",
        toolCallId: "c2",
        toolName: "read_file",
        content: [{ type: "text", text: "ENOENT" }],
        isError: true,
        timestamp: 3,
      },
    ];
    await run(model, { messages, tools: [readFileSpec], toolChoice: "none" });
    expect(model.calls[0].prompt).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "file", mediaType: "image/png", data: PNG_1x1 },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Plan", providerOptions: { anthropic: { signature: "s" } } },
          { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a" } },
          { type: "tool-call", toolCallId: "c2", toolName: "read_file", input: { path: "b" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "read_file",
            output: {
              type: "content",
              value: [
                { type: "text", text: "A" },
                { type: "file-data", mediaType: "image/png", data: PNG_1x1 },
              ],
            },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "read_file",
            output: { type: "error-text", value: "ENOENT" },
          },
        ],
      },
    ]);
    expect(model.calls[0].toolChoice).toEqual({ type: "none" });
    // From another provider: the reasoning stays in our transcript only.
    const other = mockModel("v3", [
      { type: "finish", finishReason: { unified: "stop" }, usage: v3Usage(1, 1) },
    ]);
    await run(other, {
      messages: messages.slice(0, 2).map((m, i) => (i === 1 ? assistant("anthropic") : m)),
      tools: [],
    });
    expect(other.calls[0].prompt[1].content.map((c: { type: string }) => c.type)).toEqual([
      "tool-call",
      "tool-call",
    ]);
  });
});

describe("aiSdk adapter: LanguageModelV2 (AI SDK 5)", () => {
  it("reads v2's string finish reason and flat usage, and sends v2's media parts", async () => {
    const model = mockModel("v2", [
      { type: "stream-start", warnings: [] },
      { type: "text-delta", id: "0", delta: "ok" },
      { type: "tool-call", toolCallId: "c", toolName: "read_file", input: "" },
      {
        type: "finish",
        finishReason: "tool-calls",
        usage: { inputTokens: 1000, outputTokens: 10, totalTokens: 1010, cachedInputTokens: 600 },
      },
    ]);
    const events = await run(model, {
      messages: [
        {
          role: "toolResult",
          toolCallId: "x",
          toolName: "read_file",
          content: [{ type: "image", data: PNG_1x1, mimeType: "image/png" }],
          isError: false,
          timestamp: 1,
        },
      ],
      tools: [readFileSpec],
    });
    expect(events.slice(1)).toEqual([
      { type: "text_delta", delta: "ok" },
      { type: "toolcall_start", id: "c", name: "read_file" },
      { type: "toolcall_end", id: "c", name: "read_file", arguments: {} },
      {
        type: "done",
        stopReason: "toolUse",
        usage: { input: 400, output: 10, cacheRead: 600, cacheWrite: 0, totalTokens: 1010 },
      },
    ]);
  });

  it("refuses what is not a LanguageModel object, saying why", () => {
    expect(() => aiSdk("openai/gpt-4.1" as never)).toThrow(/the string "openai\/gpt-4.1"/);
  });
});

describe("aiSdk adapter over a real AI SDK provider (@ai-sdk/openai-compatible) and the fixture server", () => {
  const API_KEY = "sk-fixture-aisdk-0123456789";
  let server: ProviderFixtureServer;
  beforeAll(async () => {
    server = await startProviderServer();
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const model = () =>
    createOpenAICompatible({
      name: "fixture",
      baseURL: server.openaiURL,
      apiKey: API_KEY,
      includeUsage: true,
    }).chatModel("gpt-4.1");

  it("streams text, reasoning and interleaved parallel tool calls from the Chat Completions wire format", async () => {
    server.reply({
      type: "sse",
      frames: chatStream({
        reasoning: ["Hmm"],
        text: ["Reading both."],
        interleave: true,
        toolCalls: [
          { index: 0, id: "call_a", name: "read_file", json: ['{"path"', ':"a"}'] },
          { index: 1, id: "call_b", name: "read_file", json: ['{"path"', ':"b"}'] },
        ],
        usage: { prompt: 1000, completion: 10, cached: 800 },
      }),
    });
    const events = await run(model());
    expect(events.filter((e) => e.type !== "toolcall_delta")).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Hmm" },
      { type: "text_delta", delta: "Reading both." },
      { type: "toolcall_start", id: "call_a", name: "read_file" },
      { type: "toolcall_start", id: "call_b", name: "read_file" },
      { type: "toolcall_end", id: "call_a", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_end", id: "call_b", name: "read_file", arguments: { path: "b" } },
      {
        type: "done",
        stopReason: "toolUse",
        usage: expect.objectContaining({ input: 200, output: 10, cacheRead: 800, totalTokens: 1010 }),
      },
    ]);
    expect((last(events) as { usage: { cost?: { total: number } } }).usage.cost?.total).toBeCloseTo(
      (200 * 2 + 10 * 8 + 800 * 0.5) / 1e6,
      12,
    );
    const request = server.requests[0];
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.body).toMatchObject({
      model: "gpt-4.1",
      stream: true,
      messages: [{ role: "system" }, { role: "user" }],
    });
    expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("429 with retry-after → rate_limit with retryAfterMs, the key in no event", async () => {
    server.reply(
      openaiHttpError(429, `Rate limit reached for key ${API_KEY}`, "rate_limit_exceeded", "requests", {
        "retry-after": "2",
      }),
    );
    const error = last(await run(model())) as ErrorEvent;
    expect(error).toMatchObject({ kind: "rate_limit", retryAfterMs: 2000 });
    expect(JSON.stringify(error)).not.toContain(API_KEY);
  });

  it("context overflow, overload, a dropped connection and a malformed chunk", async () => {
    server.reply(
      openaiHttpError(
        400,
        "This model's maximum context length is 128000 tokens.",
        "context_length_exceeded",
      ),
    );
    expect(last(await run(model()))).toMatchObject({ kind: "context_overflow" });

    server.reply(openaiHttpError(503, "The server is overloaded", null, "server_error"));
    expect(last(await run(model()))).toMatchObject({ kind: "overloaded" });

    server.reply({ type: "sse", frames: chatStream({ text: ["a", "b", "c"] }), resetAfter: 3 });
    const dropped = await run(model());
    expect(dropped[0]).toEqual({ type: "start" });
    expect(last(dropped)).toMatchObject({ kind: "network" });

    server.reply({
      type: "sse",
      frames: [...chatStream({ text: ["a"], open: true }), { data: "{not json" }],
    });
    const malformed = await run(model());
    expect(malformed.find((e) => e.type === "text_delta")).toEqual({ type: "text_delta", delta: "a" });
    expect(last(malformed)).toMatchObject({ type: "error", kind: "api" });
  });

  it("abort while the stream stalls ends promptly with aborted", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["a", "b"] }), stallAfter: 2 });
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    for await (const event of aiSdk(model()).stream(userRequest("hi"), controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "a" },
      { type: "error", kind: "aborted", message: "Request aborted" },
    ]);
  });
});

describe("aiSdk adapter: provider metadata from whichever part carries it, through an agent", () => {
  /** A model answering each call with the next list of parts; records the call options. */
  function turnsModel(turns: unknown[][]): AiSdkLanguageModel & { calls: any[] } {
    const calls: any[] = [];
    return {
      specificationVersion: "v3",
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5",
      calls,
      async doStream(options: any) {
        calls.push(options);
        const queue = [...(turns[calls.length - 1] ?? [])];
        return {
          stream: new ReadableStream({
            pull(controller) {
              const next = queue.shift();
              if (next === undefined) controller.close();
              else controller.enqueue(next);
            },
          }),
        };
      },
    } as AiSdkLanguageModel & { calls: any[] };
  }

  it("@ai-sdk/anthropic's signature on an empty reasoning-delta, redacted data on reasoning-start and a tool call's metadata all go back", async () => {
    const model = turnsModel([
      [
        // What @ai-sdk/anthropic sends: the signature on an empty delta, nothing on reasoning-end.
        { type: "reasoning-start", id: "r0" },
        { type: "reasoning-delta", id: "r0", delta: "Let me look." },
        {
          type: "reasoning-delta",
          id: "r0",
          delta: "",
          providerMetadata: { anthropic: { signature: "sig-1" } },
        },
        { type: "reasoning-end", id: "r0" },
        { type: "reasoning-start", id: "r1", providerMetadata: { anthropic: { redactedData: "opaque" } } },
        { type: "reasoning-end", id: "r1" },
        { type: "tool-input-start", id: "c1", toolName: "lookup" },
        { type: "tool-input-delta", id: "c1", delta: '{"q":"x"}' },
        { type: "tool-input-end", id: "c1" },
        {
          type: "tool-call",
          toolCallId: "c1",
          toolName: "lookup",
          input: '{"q":"x"}',
          providerMetadata: { anthropic: { caller: "direct" } },
        },
        { type: "finish", finishReason: { unified: "tool-calls" }, usage: v3Usage(10, 5) },
      ],
      [
        { type: "text-delta", id: "t", delta: "Done." },
        { type: "finish", finishReason: { unified: "stop" }, usage: v3Usage(10, 5) },
      ],
    ]);
    const lookup = defineTool({
      name: "lookup",
      description: "Looks a thing up",
      parameters: z.object({ q: z.string() }),
      execute: async () => "found",
    });
    const agent = createAgent({ provider: aiSdk(model), tools: [lookup] });
    const outcome = await agent.prompt("go");
    expect(outcome.reason).toBe("stop");
    const assistant = model.calls[1].prompt.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content).toEqual([
      { type: "reasoning", text: "Let me look.", providerOptions: { anthropic: { signature: "sig-1" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque" } } },
      {
        type: "tool-call",
        toolCallId: "c1",
        toolName: "lookup",
        input: { q: "x" },
        providerOptions: { anthropic: { caller: "direct" } },
      },
    ]);
  });

  it("on abort the model's stream is cancelled, not only signalled", async () => {
    let cancelled: unknown = "not cancelled";
    const model: AiSdkLanguageModel = {
      specificationVersion: "v3",
      provider: "deaf.chat",
      modelId: "deaf-1",
      // A package that ignores abortSignal: only cancelling its stream stops it.
      async doStream() {
        return {
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: "text-delta", id: "t", delta: "Starting" });
            },
            cancel(reason) {
              cancelled = reason;
            },
          }),
        };
      },
    };
    const agent = createAgent({ provider: aiSdk(model) });
    const run = agent.prompt("go");
    await new Promise<void>((resolve) => {
      const subscription = agent.events$.subscribe((event) => {
        if (event.type === "message_update") {
          subscription.unsubscribe();
          resolve();
        }
      });
    });
    agent.abort();
    expect((await run).reason).toBe("aborted");
    await vi.waitFor(() => expect(cancelled).not.toBe("not cancelled"));
  });
});
