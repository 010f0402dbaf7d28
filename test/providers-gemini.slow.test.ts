import { OAuth2Client } from "google-auth-library";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AssistantMessage, gemini, type Message, type ProviderEvent } from "../index.js";
import {
  geminiErrorEvent,
  geminiEvent,
  geminiHttpError,
  geminiReply,
  geminiStream,
  retryInfo,
} from "./fixtures/gemini-wire.js";
import { collect, last, listSpec, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";

const API_KEY = "AIzaSyFixture0123456789abcdefghijklmnop";
let server: ProviderFixtureServer;
const provider = (extra: Partial<Parameters<typeof gemini>[0]> = {}) =>
  gemini({ model: "gemini-2.5-flash", apiKey: API_KEY, baseURL: server.url, ...extra });
const run = (request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(provider().stream(request, signal));
type ErrorEvent = Extract<ProviderEvent, { type: "error" }>;

beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("gemini provider: streams", () => {
  it("streams text, then done with usage (cached tokens split out) and cost", async () => {
    server.reply(
      geminiReply(
        geminiStream({
          chunks: [[{ text: "Hel" }], [{ text: "lo" }]],
          usage: { prompt: 1000, candidates: 10, thoughts: 5, cached: 800 },
        }),
      ),
    );
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
          output: 15,
          cacheRead: 800,
          cacheWrite: 0,
          totalTokens: 1015,
        }),
      },
    ]);
    const usage = (last(events) as Extract<ProviderEvent, { type: "done" }>).usage;
    expect(usage?.cost?.total).toBeCloseTo((200 * 0.3 + 15 * 2.5 + 800 * 0.03) / 1e6, 12);
    const request = server.requests[0];
    expect(request.path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent");
    expect(request.query).toBe("alt=sse");
    expect(request.headers["x-goog-api-key"]).toBe(API_KEY);
    expect(request.body).toEqual({
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      systemInstruction: { role: "user", parts: [{ text: "You are terse." }] },
      tools: [
        {
          functionDeclarations: [
            { name: "read_file", description: "Read a file", parametersJsonSchema: readFileSpec.parameters },
          ],
        },
      ],
      generationConfig: {},
    });
  });

  it("streams thought summaries as thinking, and parallel function calls as complete tool calls", async () => {
    server.reply(
      geminiReply(
        geminiStream({
          chunks: [
            [{ thought: "**Planning** I should read a and list ." }],
            [
              { call: { name: "read_file", args: { path: "a" } }, signature: "c2lnLWZpcnN0LWNhbGw=" },
              { call: { name: "list_dir", args: { dir: "." } } },
            ],
          ],
        }),
      ),
    );
    const events = await run();
    const [first, second] = events.filter((e) => e.type === "toolcall_start") as { id: string }[];
    expect(first.id).not.toBe(second.id);
    expect(events).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "**Planning** I should read a and list ." },
      { type: "toolcall_start", id: first.id, name: "read_file" },
      { type: "toolcall_delta", id: first.id, delta: '{"path":"a"}' },
      { type: "toolcall_end", id: first.id, name: "read_file", arguments: { path: "a" } },
      { type: "thinking_delta", delta: "", signature: "c2lnLWZpcnN0LWNhbGw=" },
      { type: "toolcall_start", id: second.id, name: "list_dir" },
      { type: "toolcall_delta", id: second.id, delta: '{"dir":"."}' },
      { type: "toolcall_end", id: second.id, name: "list_dir", arguments: { dir: "." } },
      { type: "done", stopReason: "toolUse", usage: expect.any(Object) },
    ]);
  });

  it("keeps the ids the API gives its calls (Vertex AI, newer models)", async () => {
    server.reply(
      geminiReply(geminiStream({ chunks: [[{ call: { id: "fc_7", name: "read_file", args: {} } }]] })),
    );
    expect((await run()).find((e) => e.type === "toolcall_end")).toEqual({
      type: "toolcall_end",
      id: "fc_7",
      name: "read_file",
      arguments: {},
    });
  });

  it("asks for thought summaries and a budget, a token cap and a context cache when configured", async () => {
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "ok" }]] })));
    await collect(
      provider({
        thinking: { budgetTokens: 2048 },
        maxTokens: 4000,
        cachedContent: "cachedContents/abc123",
      }).stream(userRequest("hi", { toolChoice: "none" }), new AbortController().signal),
    );
    const body = server.requests[0].body;
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 4000,
      thinkingConfig: { includeThoughts: true, thinkingBudget: 2048 },
    });
    expect(body.cachedContent).toBe("cachedContents/abc123");
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "NONE" } });
  });

  it("maps MAX_TOKENS to length; SAFETY and a blocked prompt end as a clear api error", async () => {
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "cut" }]], finishReason: "MAX_TOKENS" })));
    expect(last(await run())).toMatchObject({ type: "done", stopReason: "length" });

    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "Here is" }]], finishReason: "SAFETY" })));
    const safety = await run();
    expect(safety.filter((e) => e.type === "text_delta")).toHaveLength(1);
    expect(last(safety)).toEqual({
      type: "error",
      kind: "api",
      message: "Gemini blocked the response (SAFETY)",
    });

    server.reply(
      geminiReply([
        geminiEvent({
          promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
          usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
          modelVersion: "gemini-2.5-flash",
        }),
      ]),
    );
    expect(last(await run())).toEqual({
      type: "error",
      kind: "api",
      message: "Gemini blocked the prompt (PROHIBITED_CONTENT)",
    });
  });
});

describe("gemini provider: request body", () => {
  const assistant = (content: AssistantMessage["content"], provider = "gemini"): AssistantMessage => ({
    role: "assistant",
    content,
    stopReason: "toolUse",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    provider,
    model: "gemini-2.5-flash",
    timestamp: 2,
  });

  it("sends thought signatures back on the parts they came with, parallel results in one turn, images inline", async () => {
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "ok" }]] })));
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
        { type: "thinking", thinking: "Plan." },
        { type: "toolCall", id: "gemini_call_1", name: "read_file", arguments: { path: "a" } },
        { type: "thinking", thinking: "", signature: "U0lHLTE=" },
        { type: "toolCall", id: "gemini_call_2", name: "list_dir", arguments: { dir: "." } },
      ]),
      {
        role: "toolResult",
        toolCallId: "gemini_call_1",
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
        toolCallId: "gemini_call_2",
        toolName: "list_dir",
        content: [{ type: "text", text: "no such dir" }],
        isError: true,
        timestamp: 3,
      },
      assistant(
        [
          { type: "text", text: "Done." },
          { type: "thinking", thinking: "", signature: "U0lHLTI=" },
        ],
        "gemini",
      ),
      { role: "user", content: "next", timestamp: 4 },
    ];
    await run({ messages: transcript, tools: [readFileSpec, listSpec] });
    expect(server.requests[0].body.contents).toEqual([
      { role: "user", parts: [{ text: "Look" }, { inlineData: { mimeType: "image/png", data: PNG_1x1 } }] },
      {
        role: "model",
        parts: [
          { thought: true, text: "Plan." },
          { functionCall: { name: "read_file", args: { path: "a" } }, thoughtSignature: "U0lHLTE=" },
          { functionCall: { name: "list_dir", args: { dir: "." } } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "read_file", response: { output: "A" } } },
          { functionResponse: { name: "list_dir", response: { error: "no such dir" } } },
          { inlineData: { mimeType: "image/png", data: PNG_1x1 } },
        ],
      },
      { role: "model", parts: [{ text: "Done.", thoughtSignature: "U0lHLTI=" }] },
      { role: "user", parts: [{ text: "next" }] },
    ]);
  });

  it("round-trips a streamed signature: the next request carries it on the first call", async () => {
    server.reply(
      geminiReply(
        geminiStream({
          chunks: [[{ call: { name: "read_file", args: { path: "a" } }, signature: "R0VNLVNJRw==" }]],
        }),
      ),
    );
    const events = await run();
    // What the agent's message builder makes of these events, in order.
    const content: AssistantMessage["content"] = [];
    for (const e of events) {
      if (e.type === "toolcall_end")
        content.push({ type: "toolCall", id: e.id, name: e.name, arguments: e.arguments });
      if (e.type === "thinking_delta")
        content.push({ type: "thinking", thinking: e.delta, signature: e.signature });
    }
    const call = content[0] as { id: string };
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "ok" }]] })));
    await run({
      messages: [
        { role: "user", content: "read a", timestamp: 1 },
        assistant(content),
        {
          role: "toolResult",
          toolCallId: call.id,
          toolName: "read_file",
          content: [{ type: "text", text: "A" }],
          isError: false,
          timestamp: 3,
        },
      ],
      tools: [readFileSpec],
    });
    expect(server.requests[1].body.contents[1]).toEqual({
      role: "model",
      parts: [{ functionCall: { name: "read_file", args: { path: "a" } }, thoughtSignature: "R0VNLVNJRw==" }],
    });
  });

  it("drops thinking and signatures that came from another provider", async () => {
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "ok" }]] })));
    await run({
      messages: [
        { role: "user", content: "q", timestamp: 1 },
        assistant(
          [
            { type: "thinking", thinking: "claude thoughts", signature: "anthropic-sig" },
            { type: "text", text: "A." },
          ],
          "anthropic",
        ),
        { role: "user", content: "next", timestamp: 3 },
      ],
      tools: [],
    });
    expect(server.requests[0].body.contents[1]).toEqual({ role: "model", parts: [{ text: "A." }] });
    expect(server.requests[0].body.tools).toBeUndefined();
  });
});

describe("gemini provider: faults", () => {
  it("429 RESOURCE_EXHAUSTED → rate_limit with the RetryInfo delay", async () => {
    server.reply(
      geminiHttpError(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
        [
          {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            violations: [
              { quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests" },
            ],
          },
          retryInfo("22.5s"),
        ],
      ),
    );
    expect(await run()).toEqual([
      {
        type: "error",
        kind: "rate_limit",
        message:
          "429 RESOURCE_EXHAUSTED You exceeded your current quota, please check your plan and billing details.",
        retryAfterMs: 22500,
      },
    ]);
  });

  it("a 429 or 503 without RetryInfo takes the response's retry-after (seconds or an HTTP date)", async () => {
    const withHeader = (code: number, status: string, retryAfter: string): FixtureReply => {
      const reply = geminiHttpError(code, status, "Resource exhausted. Please try again later.") as Extract<
        FixtureReply,
        { type: "raw" }
      >;
      return { ...reply, headers: { ...reply.headers, "retry-after": retryAfter } };
    };
    server.reply(withHeader(429, "RESOURCE_EXHAUSTED", "7"));
    const seconds = last(await run());
    server.reply(withHeader(503, "UNAVAILABLE", new Date(Date.now() + 30_000).toUTCString()));
    const date = last(await run()) as Extract<ProviderEvent, { type: "error" }>;
    expect(seconds).toMatchObject({ kind: "rate_limit", retryAfterMs: 7000 });
    expect(date.kind).toBe("overloaded");
    expect(date.retryAfterMs).toBeGreaterThan(25_000);
    expect(date.retryAfterMs).toBeLessThanOrEqual(30_000);
    // A RetryInfo still wins over the header.
    server.reply({
      ...(geminiHttpError(429, "RESOURCE_EXHAUSTED", "quota", [retryInfo("2s")]) as Extract<
        FixtureReply,
        { type: "raw" }
      >),
      headers: { "content-type": "application/json; charset=UTF-8", "retry-after": "60" },
    });
    expect(last(await run())).toMatchObject({ retryAfterMs: 2000 });
  });

  it("503 UNAVAILABLE → overloaded; an overload mid-stream → overloaded after the partial text", async () => {
    server.reply(geminiHttpError(503, "UNAVAILABLE", "The model is overloaded. Please try again later."));
    expect(last(await run())).toMatchObject({ type: "error", kind: "overloaded" });

    const events = geminiStream({ chunks: [[{ text: "par" }], [{ text: "tial" }]], open: true });
    server.reply(
      geminiReply([
        ...events,
        geminiErrorEvent(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
      ]),
    );
    const midStream = await run();
    expect(midStream.filter((e) => e.type === "text_delta")).toHaveLength(2);
    expect(last(midStream)).toMatchObject({ type: "error", kind: "overloaded" });
  });

  it("400 with the input-token wording → context_overflow", async () => {
    server.reply(
      geminiHttpError(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1250000) exceeds the maximum number of tokens allowed (1048576).",
      ),
    );
    expect(last(await run())).toMatchObject({ type: "error", kind: "context_overflow" });
  });

  it("an invalid key → auth, and the key appears in no event", async () => {
    server.reply(
      geminiHttpError(
        400,
        "INVALID_ARGUMENT",
        `API key not valid. Please pass a valid API key. (${API_KEY})`,
        [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "API_KEY_INVALID",
            domain: "googleapis.com",
          },
        ],
      ),
    );
    const error = last(await run()) as ErrorEvent;
    expect(error.kind).toBe("auth");
    expect(JSON.stringify(error)).not.toContain(API_KEY);
    expect(JSON.stringify(provider())).not.toContain(API_KEY);
    expect(Object.keys(provider()).sort()).toEqual(["id", "model", "stream"]);
  });

  it("500 INTERNAL → network; 400 INVALID_ARGUMENT → api", async () => {
    server.reply(geminiHttpError(500, "INTERNAL", "An internal error has occurred."));
    expect(last(await run())).toMatchObject({ kind: "network" });
    server.reply(geminiHttpError(400, "INVALID_ARGUMENT", "Invalid JSON payload received."));
    expect(last(await run())).toMatchObject({ kind: "api" });
  });

  it("a dropped connection → network; a stream without finishReason → network, never resumed", async () => {
    server.reply(
      geminiReply(geminiStream({ chunks: [[{ text: "a" }], [{ text: "b" }], [{ text: "c" }]] }), {
        resetAfter: 2,
      }),
    );
    const events = await run();
    expect(events[0]).toEqual({ type: "start" });
    expect(last(events)).toMatchObject({ type: "error", kind: "network" });
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "a" }]], open: true })));
    expect(last(await run())).toMatchObject({ type: "error", kind: "network" });
    expect(server.requests).toHaveLength(2);
  });

  it("a malformed chunk → api error after what came before it", async () => {
    server.reply(
      geminiReply([
        ...geminiStream({ chunks: [[{ text: "a" }]], open: true }),
        'data: {"candidates": [{\r\n\r\n',
      ]),
    );
    const events = await run();
    expect(events[1]).toEqual({ type: "text_delta", delta: "a" });
    expect(last(events)).toMatchObject({ type: "error", kind: "api" });
  });

  it("abort while the stream stalls ends promptly with aborted", async () => {
    server.reply(
      geminiReply(geminiStream({ chunks: [[{ text: "a" }], [{ text: "b" }]] }), { stallAfter: 1 }),
    );
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

  it("no API key → auth error without a request", async () => {
    const saved = { g: process.env.GEMINI_API_KEY, k: process.env.GOOGLE_API_KEY };
    delete process.env.GEMINI_API_KEY;
    delete process.env.GOOGLE_API_KEY;
    try {
      const p = gemini({ model: "gemini-2.5-flash", baseURL: server.url });
      expect(await collect(p.stream(userRequest("hi"), new AbortController().signal))).toEqual([
        {
          type: "error",
          kind: "auth",
          message: "No Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass apiKey",
        },
      ]);
      expect(server.requests).toHaveLength(0);
    } finally {
      if (saved.g !== undefined) process.env.GEMINI_API_KEY = saved.g;
      if (saved.k !== undefined) process.env.GOOGLE_API_KEY = saved.k;
    }
  });
});

describe("gemini provider on Vertex AI", () => {
  it("streams from the Vertex AI path of the project and location, without an API key", async () => {
    server.reply(geminiReply(geminiStream({ chunks: [[{ text: "hi" }]] })));
    // Vertex AI authenticates with Google Cloud credentials: an access token that is still valid
    // stands in for Application Default Credentials (no token exchange over the network).
    const authClient = new OAuth2Client();
    authClient.setCredentials({ access_token: "ya29.fixture-token", expiry_date: Date.now() + 3_600_000 });
    const vertex = gemini({
      model: "gemini-2.5-flash",
      vertex: { project: "my-project", location: "us-central1", googleAuthOptions: { authClient } },
      baseURL: server.url,
    });
    expect(vertex.id).toBe("gemini-vertex");
    const events = await collect(vertex.stream(userRequest("hi"), new AbortController().signal));
    expect(events.map((e) => e.type)).toEqual(["start", "text_delta", "done"]);
    expect(server.requests[0].path).toBe(
      "/v1beta1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent",
    );
    expect(server.requests[0].headers.authorization).toBe("Bearer ya29.fixture-token");
    expect(server.requests[0].headers["x-goog-api-key"]).toBeUndefined();
  });
});
