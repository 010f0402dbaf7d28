import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AssistantMessage, anthropic, type Message, type ProviderEvent } from "../index.js";
import { collect, last, listSpec, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { anthropicErrorFrame, anthropicHttpError, anthropicMessage } from "./fixtures/provider-wire.js";

const API_KEY = "sk-ant-test-0123456789abcdef";
let server: ProviderFixtureServer;
const provider = () => anthropic({ model: "claude-haiku-4-5", apiKey: API_KEY, baseURL: server.url });
const run = (request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(provider().stream(request, signal));

beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

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

describe("anthropic provider: streams", () => {
  it("streams text and ends with done, mapped stop reason and usage with cost", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({
        blocks: [{ type: "text", text: ["Hel", "lo"] }],
        usage: { input: 100, output: 20, cacheRead: 300, cacheWrite: 50 },
      }),
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
          input: 100,
          output: 20,
          cacheRead: 300,
          cacheWrite: 50,
          totalTokens: 470,
        }),
      },
    ]);
    const usage = (last(events) as Extract<ProviderEvent, { type: "done" }>).usage;
    // claude-haiku-4-5: $1 in, $5 out, $0.10 cache read, $1.25 cache write per million
    expect(usage?.cost?.total).toBeCloseTo((100 * 1 + 20 * 5 + 300 * 0.1 + 50 * 1.25) / 1e6, 12);
  });

  it("streams one tool call as start, raw JSON fragments and end with parsed arguments", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({
        blocks: [
          { type: "text", text: ["Reading."] },
          { type: "tool_use", id: "toolu_01", name: "read_file", json: ['{"pa', 'th": "a.txt"}'] },
        ],
      }),
    });
    const events = await run();
    expect(events.slice(0, 6)).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "Reading." },
      { type: "toolcall_start", id: "toolu_01", name: "read_file" },
      { type: "toolcall_delta", id: "toolu_01", delta: '{"pa' },
      { type: "toolcall_delta", id: "toolu_01", delta: 'th": "a.txt"}' },
      { type: "toolcall_end", id: "toolu_01", name: "read_file", arguments: { path: "a.txt" } },
    ]);
    expect(last(events)).toMatchObject({ type: "done", stopReason: "toolUse" });
  });

  it("streams parallel tool calls, each completed at its own block end", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({
        blocks: [
          { type: "tool_use", id: "toolu_a", name: "read_file", json: ['{"path":"a"}'] },
          { type: "tool_use", id: "toolu_b", name: "list_dir", json: ['{"dir":', '"."}'] },
          { type: "tool_use", id: "toolu_c", name: "list_dir", json: [] },
        ],
      }),
    });
    const events = await run();
    const ends = events.filter((e) => e.type === "toolcall_end");
    expect(ends).toEqual([
      { type: "toolcall_end", id: "toolu_a", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_end", id: "toolu_b", name: "list_dir", arguments: { dir: "." } },
      { type: "toolcall_end", id: "toolu_c", name: "list_dir", arguments: {} },
    ]);
  });

  it("streams thinking, then its signature on an empty delta; redacted thinking carries its data", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({
        blocks: [
          { type: "thinking", thinking: ["Let me ", "think."], signature: "sig-EqQBCgIYAhIM" },
          { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
          { type: "text", text: ["Done."] },
        ],
      }),
    });
    const events = await run();
    expect(events.slice(0, 6)).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Let me " },
      { type: "thinking_delta", delta: "think." },
      { type: "thinking_delta", delta: "", signature: "sig-EqQBCgIYAhIM" },
      { type: "thinking_delta", delta: "", redacted: true, signature: "EmwKAhgBEgy3va3pzix" },
      { type: "text_delta", delta: "Done." },
    ]);
  });

  it("sends thinking config and max_tokens when thinking is on", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    const p = anthropic({
      model: "claude-haiku-4-5",
      apiKey: API_KEY,
      baseURL: server.url,
      thinking: { budgetTokens: 2000 },
    });
    await collect(p.stream(userRequest("hi"), new AbortController().signal));
    expect(server.requests[0].body).toMatchObject({
      model: "claude-haiku-4-5",
      stream: true,
      max_tokens: 16384,
      thinking: { type: "enabled", budget_tokens: 2000 },
    });
  });

  it("sends adaptive thinking when asked", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    const p = anthropic({
      model: "claude-haiku-4-5",
      apiKey: API_KEY,
      baseURL: server.url,
      thinking: "adaptive",
    });
    await collect(p.stream(userRequest("hi"), new AbortController().signal));
    expect(server.requests[0].body.thinking).toEqual({ type: "adaptive" });
  });

  it("passes malformed tool-call JSON on as an object that names the raw text", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({
        blocks: [{ type: "tool_use", id: "toolu_x", name: "read_file", json: ['{"path": "a.tx'] }],
      }),
    });
    const events = await run();
    expect(events.find((e) => e.type === "toolcall_end")).toEqual({
      type: "toolcall_end",
      id: "toolu_x",
      name: "read_file",
      arguments: { __invalid_json: '{"path": "a.tx' },
    });
    expect(last(events)).toMatchObject({ type: "done", stopReason: "toolUse" });
  });

  it("maps max_tokens to length", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: ["cut"] }], stopReason: "max_tokens" }),
    });
    expect(last(await run())).toMatchObject({ type: "done", stopReason: "length" });
  });
});

describe("anthropic provider: request body", () => {
  const transcript: Message[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image", data: PNG_1x1, mimeType: "image/png" },
      ],
      timestamp: 1,
    },
    assistant([
      { type: "thinking", thinking: "Two files to read.", signature: "sig-1" },
      { type: "thinking", thinking: "", signature: "EmwKredacted", redacted: true },
      { type: "thinking", thinking: "unsigned, from a cut-off stream" },
      { type: "toolCall", id: "toolu_1", name: "read_file", arguments: { path: "a" } },
      { type: "toolCall", id: "toolu_2", name: "read_file", arguments: { path: "b" } },
      { type: "toolCall", id: "toolu_3", name: "list_dir", arguments: { dir: "." } },
    ]),
    {
      role: "toolResult",
      toolCallId: "toolu_2",
      toolName: "read_file",
      content: [{ type: "text", text: "B" }],
      isError: false,
      timestamp: 3,
    },
    {
      role: "toolResult",
      toolCallId: "toolu_1",
      toolName: "read_file",
      content: [
        { type: "text", text: "A" },
        { type: "image", data: PNG_1x1, mimeType: "image/png" },
      ],
      isError: true,
      timestamp: 3,
    },
    // toolu_3 never got a result; a stray result answers nothing
    {
      role: "toolResult",
      toolCallId: "toolu_zzz",
      toolName: "x",
      content: [{ type: "text", text: "?" }],
      isError: false,
      timestamp: 3,
    },
    assistant([], "aborted"),
    assistant([{ type: "text", text: "" }], "error"),
    { role: "user", content: "Go on", timestamp: 4 },
  ];

  it("converts the transcript: results merged in place, images, signed thinking, no empty messages", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    await run({ systemPrompt: "Be terse.", messages: transcript, tools: [readFileSpec, listSpec] });
    const body = server.requests[0].body;
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[0].content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: PNG_1x1 },
    });
    expect(body.messages[1].content).toEqual([
      { type: "thinking", thinking: "Two files to read.", signature: "sig-1" },
      { type: "redacted_thinking", data: "EmwKredacted" },
      { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a" } },
      { type: "tool_use", id: "toolu_2", name: "read_file", input: { path: "b" } },
      { type: "tool_use", id: "toolu_3", name: "list_dir", input: { dir: "." } },
    ]);
    const results = body.messages[2].content;
    expect(results.map((b: { type: string; tool_use_id?: string }) => b.tool_use_id ?? b.type)).toEqual([
      "toolu_2",
      "toolu_1",
      "toolu_3",
      "text",
    ]);
    expect(results[1]).toMatchObject({
      is_error: true,
      content: [
        { type: "text", text: "A" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1x1 } },
      ],
    });
    expect(results[2]).toMatchObject({
      is_error: true,
      content: [{ type: "text", text: "No result was recorded for this tool call." }],
    });
    expect(results[3]).toMatchObject({ type: "text", text: "Go on" });
  });

  it("sends tools with their JSON Schema and at most 4 cache breakpoints: system, last tool, last two user messages", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    await run({ systemPrompt: "Be terse.", messages: transcript, tools: [readFileSpec, listSpec] });
    const body = server.requests[0].body;
    expect(body.tools).toEqual([
      { name: "read_file", description: "Read a file", input_schema: readFileSpec.parameters },
      {
        name: "list_dir",
        description: "List a directory",
        input_schema: listSpec.parameters,
        cache_control: { type: "ephemeral" },
      },
    ]);
    expect(body.system).toEqual([{ type: "text", text: "Be terse.", cache_control: { type: "ephemeral" } }]);
    const marked = JSON.stringify(body).split('"cache_control"').length - 1;
    expect(marked).toBe(4);
    expect(body.messages[0].content.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(body.messages[2].content.at(-1).cache_control).toEqual({ type: "ephemeral" });
    expect(body.messages[1].content.some((b: object) => "cache_control" in b)).toBe(false);
  });

  it("sends no cache markers with cache off", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    const p = anthropic({ model: "claude-haiku-4-5", apiKey: API_KEY, baseURL: server.url, cache: false });
    await collect(
      p.stream(
        { systemPrompt: "x", messages: transcript, tools: [readFileSpec] },
        new AbortController().signal,
      ),
    );
    expect(JSON.stringify(server.requests[0].body)).not.toContain("cache_control");
  });

  it("is billed as cache reads on the next turn: the fixture server models Anthropic's prompt cache", async () => {
    const cacheServer = await startProviderServer();
    try {
      const p = anthropic({ model: "claude-haiku-4-5", apiKey: API_KEY, baseURL: cacheServer.url });
      const reply = () => ({
        type: "sse" as const,
        frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }),
      });
      cacheServer.reply(reply(), reply());
      const first = userRequest("first question");
      const firstUsage = (
        last(await collect(p.stream(first, new AbortController().signal))) as {
          usage: { cacheWrite: number; cacheRead: number };
        }
      ).usage;
      const second = {
        ...first,
        messages: [
          ...first.messages,
          assistant([{ type: "text", text: "ok" }], "stop"),
          { role: "user" as const, content: "second question", timestamp: 3 },
        ],
      };
      const secondUsage = (
        last(await collect(p.stream(second, new AbortController().signal))) as {
          usage: { cacheRead: number; cacheWrite: number };
        }
      ).usage;
      expect(firstUsage.cacheRead).toBe(0);
      expect(firstUsage.cacheWrite).toBeGreaterThan(0);
      expect(secondUsage.cacheRead).toBe(firstUsage.cacheWrite);
      expect(secondUsage.cacheWrite).toBeGreaterThan(0);
    } finally {
      await cacheServer.close();
    }
  });

  it("sends the key only as a request header and keeps it off the provider object", async () => {
    server.reply({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["ok"] }] }) });
    const p = provider();
    await collect(p.stream(userRequest("hi"), new AbortController().signal));
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(Object.keys(p).sort()).toEqual(["id", "maxOutputTokens", "model", "stream"]);
    expect(JSON.stringify(p)).not.toContain(API_KEY);
  });
});

describe("anthropic provider: faults", () => {
  it("429 with retry-after (seconds) → rate_limit with retryAfterMs", async () => {
    server.reply(
      anthropicHttpError(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        { "retry-after": "7" },
      ),
    );
    const events = await run();
    expect(events).toEqual([
      {
        type: "error",
        kind: "rate_limit",
        message: expect.stringContaining("rate limit"),
        retryAfterMs: 7000,
      },
    ]);
  });

  it("429 with retry-after-ms wins over retry-after; an HTTP date works too", async () => {
    server.reply(
      anthropicHttpError(429, "rate_limit_error", "slow down", {
        "retry-after-ms": "1500",
        "retry-after": "9",
      }),
    );
    expect(last(await run())).toMatchObject({ kind: "rate_limit", retryAfterMs: 1500 });
    const date = new Date(Date.now() + 30_000).toUTCString();
    server.reply(anthropicHttpError(429, "rate_limit_error", "slow down", { "retry-after": date }));
    const event = last(await run()) as Extract<ProviderEvent, { type: "error" }>;
    expect(event.kind).toBe("rate_limit");
    expect(event.retryAfterMs).toBeGreaterThan(25_000);
    expect(event.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("529 overloaded_error → overloaded", async () => {
    server.reply(anthropicHttpError(529, "overloaded_error", "Overloaded"));
    expect(await run()).toEqual([{ type: "error", kind: "overloaded", message: "529 Overloaded" }]);
  });

  it("an overloaded_error event after HTTP 200, mid-stream → overloaded after the partial deltas", async () => {
    const frames = anthropicMessage({ blocks: [{ type: "text", text: ["Partial ", "answer"] }] });
    server.reply({
      type: "sse",
      frames: [...frames.slice(0, 4), anthropicErrorFrame("overloaded_error", "Overloaded")],
    });
    const events = await run();
    expect(events[0]).toEqual({ type: "start" });
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(0);
    expect(last(events)).toEqual({ type: "error", kind: "overloaded", message: "Overloaded" });
    expect(events.some((e) => e.type === "done")).toBe(false);
  });

  it("400 prompt is too long → context_overflow; also as an in-stream error", async () => {
    server.reply(
      anthropicHttpError(400, "invalid_request_error", "prompt is too long: 208467 tokens > 200000 maximum"),
    );
    expect(last(await run())).toMatchObject({ type: "error", kind: "context_overflow" });
    server.reply({
      type: "sse",
      frames: [
        anthropicMessage({ blocks: [] })[0],
        anthropicErrorFrame("invalid_request_error", "prompt is too long: 1 tokens > 0 maximum"),
      ],
    });
    expect(last(await run())).toMatchObject({ type: "error", kind: "context_overflow" });
  });

  it("413 request_too_large → context_overflow", async () => {
    server.reply(
      anthropicHttpError(413, "request_too_large", "Request exceeds the maximum allowed number of bytes."),
    );
    expect(last(await run())).toMatchObject({ kind: "context_overflow" });
  });

  it("a 413 from a proxy (an HTML page) or with no body → context_overflow, the status said once", async () => {
    server.reply({
      type: "raw",
      status: 413,
      headers: { "content-type": "text/html" },
      body: "<html>413 Too Large</html>",
    });
    const html = last(await run());
    server.reply({ type: "json", status: 413 });
    const empty = last(await run());
    expect(html).toMatchObject({ kind: "context_overflow", message: "413 <html>413 Too Large</html>" });
    expect(empty).toMatchObject({ kind: "context_overflow", message: "413 status code (no body)" });
  });

  it("other invalid requests → api (not retried)", async () => {
    server.reply(anthropicHttpError(400, "invalid_request_error", "messages.0.content: Field required"));
    expect(last(await run())).toMatchObject({
      kind: "api",
      message: "400 messages.0.content: Field required",
    });
  });

  it("401 → auth, and the key never appears in the message", async () => {
    server.reply(anthropicHttpError(401, "authentication_error", `invalid x-api-key ${API_KEY}`));
    const event = last(await run()) as Extract<ProviderEvent, { type: "error" }>;
    expect(event.kind).toBe("auth");
    expect(event.message).not.toContain(API_KEY);
    expect(event.retryAfterMs).toBeUndefined();
  });

  it("403 → auth; 500/502/504 → network; 503 → overloaded", async () => {
    const cases: [number, string, string][] = [
      [403, "permission_error", "auth"],
      [500, "api_error", "network"],
      [502, "api_error", "network"],
      [504, "api_error", "network"],
      [503, "api_error", "overloaded"],
    ];
    for (const [status, type, kind] of cases) {
      server.reply(anthropicHttpError(status, type, "failure"));
      expect(last(await run()), `HTTP ${status}`).toMatchObject({ type: "error", kind });
    }
  });

  it("a connection reset halfway through a message → network, after the partial deltas", async () => {
    const frames = anthropicMessage({ blocks: [{ type: "text", text: ["one ", "two ", "three"] }] });
    server.reply({ type: "sse", frames, resetAfter: 5 });
    const events = await run();
    expect(events[0]).toEqual({ type: "start" });
    expect(last(events)).toMatchObject({ type: "error", kind: "network" });
  });

  it("a stream that ends cleanly but before message_stop → network", async () => {
    const frames = anthropicMessage({ blocks: [{ type: "text", text: ["one"] }] });
    server.reply({ type: "sse", frames: frames.slice(0, 4) });
    expect(last(await run())).toEqual({
      type: "error",
      kind: "network",
      message: "Stream ended before the response was complete",
    });
  });

  it("a connection closed before any response → network", async () => {
    server.reply({ type: "reset" });
    expect(last(await run())).toMatchObject({ type: "error", kind: "network" });
  });

  it("abort while the stream stalls ends promptly with aborted", async () => {
    const frames = anthropicMessage({ blocks: [{ type: "text", text: ["waiting", "never"] }] });
    server.reply({ type: "sse", frames, stallAfter: 4 });
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    for await (const event of provider().stream(userRequest("hi"), controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events.map((e) => e.type)).toEqual(["start", "text_delta", "error"]);
    expect(last(events)).toEqual({ type: "error", kind: "aborted", message: "Request aborted" });
  });

  it("abort before the response arrives → aborted", async () => {
    server.reply({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: ["x"] }] }),
      stallAfter: 0,
    });
    const controller = new AbortController();
    const pending = collect(provider().stream(userRequest("hi"), controller.signal));
    setTimeout(() => controller.abort(), 30);
    expect(await pending).toEqual([{ type: "error", kind: "aborted", message: "Request aborted" }]);
  });

  it("no API key → auth error without a request", async () => {
    const saved = [process.env.ANTHROPIC_API_KEY, process.env.ANTHROPIC_AUTH_TOKEN];
    delete process.env.ANTHROPIC_API_KEY;
    delete process.env.ANTHROPIC_AUTH_TOKEN;
    try {
      const p = anthropic({ model: "claude-haiku-4-5", baseURL: server.url });
      expect(await collect(p.stream(userRequest("hi"), new AbortController().signal))).toEqual([
        {
          type: "error",
          kind: "auth",
          message: "No Anthropic API key: set ANTHROPIC_API_KEY or pass apiKey",
        },
      ]);
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved[0] !== undefined) process.env.ANTHROPIC_API_KEY = saved[0];
      if (saved[1] !== undefined) process.env.ANTHROPIC_AUTH_TOKEN = saved[1];
    }
  });
});
