import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type AssistantMessage,
  type Message,
  openai,
  openaiCompatible,
  type ProviderEvent,
} from "../index.js";
import { collect, last, listSpec, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { chatStream, openaiHttpError } from "./fixtures/provider-wire.js";

const API_KEY = "sk-proj-test0123456789abcdef";
let server: ProviderFixtureServer;
const provider = () => openai({ model: "gpt-4.1", apiKey: API_KEY, baseURL: server.openaiURL });
const run = (request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(provider().stream(request, signal));

beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("openai chat provider: streams", () => {
  it("streams text, then done with usage (cached tokens split out) and cost", async () => {
    server.reply({
      type: "sse",
      frames: chatStream({ text: ["Hel", "lo"], usage: { prompt: 1000, completion: 10, cached: 800 } }),
    });
    const events = await run();
    expect(events).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "Hel" },
      { type: "text_delta", delta: "lo" },
      {
        type: "done",
        stopReason: "stop",
        usage: expect.objectContaining({
          input: 200,
          output: 10,
          cacheRead: 800,
          cacheWrite: 0,
          totalTokens: 1010,
        }),
      },
    ]);
    const usage = (last(events) as Extract<ProviderEvent, { type: "done" }>).usage;
    expect(usage?.cost?.total).toBeCloseTo((200 * 2 + 10 * 8 + 800 * 0.5) / 1e6, 12);
    expect(server.requests[0].path).toBe("/v1/chat/completions");
    expect(server.requests[0].body).toMatchObject({
      model: "gpt-4.1",
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("streams a single tool call: start, raw fragments, end with parsed arguments", async () => {
    server.reply({
      type: "sse",
      frames: chatStream({
        toolCalls: [{ index: 0, id: "call_1", name: "read_file", json: ['{"pa', 'th":"a.txt"}'] }],
      }),
    });
    const events = await run();
    expect(events).toEqual([
      { type: "start" },
      { type: "toolcall_start", id: "call_1", name: "read_file" },
      { type: "toolcall_delta", id: "call_1", delta: '{"pa' },
      { type: "toolcall_delta", id: "call_1", delta: 'th":"a.txt"}' },
      { type: "toolcall_end", id: "call_1", name: "read_file", arguments: { path: "a.txt" } },
      { type: "done", stopReason: "toolUse", usage: expect.any(Object) },
    ]);
  });

  it("keeps parallel tool calls apart when their fragments arrive interleaved by index", async () => {
    server.reply({
      type: "sse",
      frames: chatStream({
        interleave: true,
        toolCalls: [
          { index: 0, id: "call_a", name: "read_file", json: ['{"path"', ':"a"}'] },
          { index: 1, id: "call_b", name: "list_dir", json: ['{"dir"', ':"."', "}"] },
        ],
      }),
    });
    const events = await run();
    const deltas = events.filter((e) => e.type === "toolcall_delta").map((e) => (e as { id: string }).id);
    expect(deltas).toEqual(["call_a", "call_b", "call_a", "call_b", "call_b"]);
    expect(events.filter((e) => e.type === "toolcall_end")).toEqual([
      { type: "toolcall_end", id: "call_a", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_end", id: "call_b", name: "list_dir", arguments: { dir: "." } },
    ]);
    expect(last(events)).toMatchObject({ type: "done", stopReason: "toolUse" });
  });

  it("streams reasoning_content as thinking", async () => {
    server.reply({ type: "sse", frames: chatStream({ reasoning: ["Hmm, ", "easy."], text: ["4"] }) });
    const events = await run();
    expect(events.slice(0, 4)).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Hmm, " },
      { type: "thinking_delta", delta: "easy." },
      { type: "text_delta", delta: "4" },
    ]);
  });

  it("maps finish_reason length to length, and passes malformed tool JSON on as __invalid_json", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["cut"], finishReason: "length" }) });
    expect(last(await run())).toMatchObject({ type: "done", stopReason: "length" });
    server.reply({
      type: "sse",
      frames: chatStream({
        toolCalls: [{ index: 0, id: "call_x", name: "read_file", json: ["{'path': a}"] }],
      }),
    });
    const events = await run();
    expect(events.find((e) => e.type === "toolcall_end")).toEqual({
      type: "toolcall_end",
      id: "call_x",
      name: "read_file",
      arguments: { __invalid_json: "{'path': a}" },
    });
  });
});

describe("openai chat provider: request body", () => {
  const assistant = (
    content: AssistantMessage["content"],
    stopReason: AssistantMessage["stopReason"] = "toolUse",
  ): AssistantMessage => ({
    role: "assistant",
    content,
    stopReason,
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    timestamp: 2,
  });
  const transcript: Message[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "Look" },
        { type: "image", data: PNG_1x1, mimeType: "image/png" },
      ],
      timestamp: 1,
    },
    assistant([
      { type: "thinking", thinking: "private" },
      { type: "text", text: "Reading both." },
      { type: "toolCall", id: "call_1", name: "read_file", arguments: { path: "a" } },
      { type: "toolCall", id: "call_2", name: "list_dir", arguments: { dir: "." } },
    ]),
    {
      role: "toolResult",
      toolCallId: "call_1",
      toolName: "read_file",
      content: [
        { type: "text", text: "A" },
        { type: "image", data: PNG_1x1, mimeType: "image/png" },
      ],
      isError: false,
      timestamp: 3,
    },
    assistant([], "aborted"),
    { role: "user", content: "next", timestamp: 4 },
  ];

  it("sends system, user images, tool calls, tool results in place (missing ones filled) and tool-result images after them", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["ok"] }) });
    await run({ systemPrompt: "Be terse.", messages: transcript, tools: [readFileSpec, listSpec] });
    const body = server.requests[0].body;
    expect(body.messages).toEqual([
      { role: "system", content: "Be terse." },
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
        ],
      },
      {
        role: "assistant",
        content: "Reading both.",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"a"}' } },
          { id: "call_2", type: "function", function: { name: "list_dir", arguments: '{"dir":"."}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "A" },
      { role: "tool", tool_call_id: "call_2", content: "No result was recorded for this tool call." },
      {
        role: "user",
        content: [
          { type: "text", text: "Images returned by the tool calls above:" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
        ],
      },
      { role: "user", content: "next" },
    ]);
    expect(body.tools).toEqual([
      {
        type: "function",
        function: { name: "read_file", description: "Read a file", parameters: readFileSpec.parameters },
      },
      {
        type: "function",
        function: { name: "list_dir", description: "List a directory", parameters: listSpec.parameters },
      },
    ]);
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
  });
});

describe("openai chat provider: faults", () => {
  it("429 with retry-after → rate_limit with retryAfterMs; insufficient_quota → api", async () => {
    server.reply(
      openaiHttpError(429, "Rate limit reached for gpt-4.1", "rate_limit_exceeded", "requests", {
        "retry-after": "3",
      }),
    );
    expect(await run()).toEqual([
      {
        type: "error",
        kind: "rate_limit",
        message: "429 Rate limit reached for gpt-4.1",
        retryAfterMs: 3000,
      },
    ]);
    server.reply(
      openaiHttpError(429, "You exceeded your current quota", "insufficient_quota", "insufficient_quota"),
    );
    expect(last(await run())).toMatchObject({ kind: "api" });
  });

  it("400 context_length_exceeded → context_overflow", async () => {
    server.reply(
      openaiHttpError(
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        "context_length_exceeded",
      ),
    );
    expect(last(await run())).toMatchObject({ type: "error", kind: "context_overflow" });
  });

  it("an error object inside a 200 stream → classified by its code, after the partial deltas", async () => {
    const frames = chatStream({ text: ["par", "tial"], open: true });
    server.reply({
      type: "sse",
      frames: [
        ...frames,
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
    });
    const events = await run();
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(2);
    expect(last(events)).toMatchObject({ type: "error", kind: "overloaded" });
  });

  it("401 → auth without the key; 500 → network; 503 → overloaded; 400 → api", async () => {
    server.reply(openaiHttpError(401, `Incorrect API key provided: ${API_KEY}.`, "invalid_api_key"));
    const auth = last(await run()) as Extract<ProviderEvent, { type: "error" }>;
    expect(auth.kind).toBe("auth");
    expect(auth.message).not.toContain(API_KEY);
    for (const [status, kind] of [
      [500, "network"],
      [503, "overloaded"],
      [400, "api"],
    ] as const) {
      server.reply(openaiHttpError(status, "failure", null, "server_error"));
      expect(last(await run()), `HTTP ${status}`).toMatchObject({ kind });
    }
  });

  it("a connection reset halfway → network; a stream without finish_reason → network", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["a", "b", "c"] }), resetAfter: 3 });
    const events = await run();
    expect(events[0]).toEqual({ type: "start" });
    expect(last(events)).toMatchObject({ type: "error", kind: "network" });
    server.reply({ type: "sse", frames: chatStream({ text: ["a"], open: true }) });
    expect(last(await run())).toMatchObject({ type: "error", kind: "network" });
  });

  it("abort while the stream stalls ends promptly with aborted", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["a", "b"] }), stallAfter: 2 });
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    for await (const event of provider().stream(userRequest("hi"), controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "a" },
      { type: "error", kind: "aborted", message: "Request aborted" },
    ]);
  });

  it("no API key → auth error without a request; the key is not on the provider object", async () => {
    const saved = process.env.OPENAI_API_KEY;
    delete process.env.OPENAI_API_KEY;
    try {
      const p = openai({ model: "gpt-4.1", baseURL: server.openaiURL });
      expect(await collect(p.stream(userRequest("hi"), new AbortController().signal))).toEqual([
        { type: "error", kind: "auth", message: "No OpenAI API key: set OPENAI_API_KEY or pass apiKey" },
      ]);
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved;
    }
    expect(Object.keys(provider()).sort()).toEqual(["id", "model", "stream"]);
    expect(JSON.stringify(provider())).not.toContain(API_KEY);
  });
});

describe("openai-compatible provider", () => {
  const local = () => openaiCompatible({ baseURL: server.openaiURL, model: "qwen3:8b", maxTokens: 512 });

  it("streams from a local server without a key, sending max_tokens", async () => {
    server.reply({
      type: "sse",
      frames: chatStream({ reasoning: ["think"], text: ["hi"], model: "qwen3:8b" }),
    });
    const events = await collect(local().stream(userRequest("hi"), new AbortController().signal));
    expect(events.map((e) => e.type)).toEqual(["start", "thinking_delta", "text_delta", "done"]);
    expect(server.requests[0].body).toMatchObject({ model: "qwen3:8b", max_tokens: 512 });
    expect(local().id).toBe("openai-compatible");
  });

  it("sends a user image as an image_url part holding a base64 data URL (Ollama, vLLM and LM Studio read it)", async () => {
    server.reply({ type: "sse", frames: chatStream({ text: ["a dot"], model: "qwen2.5vl:7b" }) });
    const request = {
      messages: [
        {
          role: "user" as const,
          content: [
            { type: "text" as const, text: "What is this?" },
            { type: "image" as const, data: PNG_1x1, mimeType: "image/png" },
          ],
          timestamp: 1,
        },
      ],
      tools: [],
    };
    await collect(local().stream(request, new AbortController().signal));
    expect(server.requests[0].body.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_1x1}` } },
        ],
      },
    ]);
  });

  it("gives tool calls without an id one, so results can be paired", async () => {
    const frames = chatStream({
      toolCalls: [{ index: 0, id: "", name: "read_file", json: ['{"path":"x"}'] }],
    });
    server.reply({ type: "sse", frames: JSON.parse(JSON.stringify(frames).replaceAll('"id":"",', "")) });
    const events = await collect(local().stream(userRequest("hi"), new AbortController().signal));
    const start = events.find((e) => e.type === "toolcall_start") as { id: string };
    expect(start.id).toMatch(/^call_0_/);
    expect(events.find((e) => e.type === "toolcall_end")).toMatchObject({
      id: start.id,
      arguments: { path: "x" },
    });
  });

  it.each([
    ["llama.cpp", 400, "the request exceeds the available context size, try increasing it"],
    ["vLLM", 400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."],
    [
      "LM Studio",
      400,
      "Trying to keep the first 5000 tokens when context the overflows. However, the model is loaded with context length of 4096, which is greater than the context length",
    ],
    [
      "OpenRouter",
      400,
      "This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens.",
    ],
  ])("recognises %s's context overflow text", async (_name, status, message) => {
    server.reply(openaiHttpError(status, message, null, "invalid_request_error"));
    expect(
      last(await collect(local().stream(userRequest("hi"), new AbortController().signal))),
    ).toMatchObject({
      type: "error",
      kind: "context_overflow",
    });
  });

  it("treats an empty 400 or 413 as context overflow", async () => {
    for (const status of [400, 413]) {
      server.reply({ type: "json", status });
      expect(
        last(await collect(local().stream(userRequest("hi"), new AbortController().signal))),
      ).toMatchObject({
        kind: "context_overflow",
        // The SDK's own text already names the status: it is not said twice.
        message: `${status} status code (no body)`,
      });
    }
  });
});
