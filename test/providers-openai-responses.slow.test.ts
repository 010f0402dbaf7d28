import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AssistantMessage, type Message, openai, type ProviderEvent } from "../index.js";
import { collect, last, listSpec, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";
import { openaiHttpError, responsesErrorFrame, responsesStream } from "./fixtures/provider-wire.js";

const API_KEY = "sk-proj-responses0123456789";
let server: ProviderFixtureServer;
const provider = (extra: Partial<Parameters<typeof openai>[0]> = {}) =>
  openai({ model: "gpt-4.1", api: "responses", apiKey: API_KEY, baseURL: server.openaiURL, ...extra });
const run = (request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(provider().stream(request, signal));

beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("openai responses provider: streams", () => {
  it("streams text and ends with done and usage (cached tokens split out)", async () => {
    server.reply({
      type: "sse",
      frames: responsesStream({ text: ["Hel", "lo"], usage: { input: 500, output: 9, cached: 400 } }),
    });
    const events = await run();
    expect(events).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "Hel" },
      { type: "text_delta", delta: "lo" },
      {
        type: "done",
        stopReason: "stop",
        usage: expect.objectContaining({ input: 100, output: 9, cacheRead: 400, totalTokens: 509 }),
      },
    ]);
    expect(server.requests[0].path).toBe("/v1/responses");
    expect(server.requests[0].body).toMatchObject({
      model: "gpt-4.1",
      stream: true,
      store: false,
      instructions: "You are terse.",
    });
  });

  it("streams parallel function calls keyed by item, completed at output_item.done", async () => {
    server.reply({
      type: "sse",
      frames: responsesStream({
        text: ["Checking."],
        functionCalls: [
          { id: "fc_1", callId: "call_1", name: "read_file", json: ['{"path":', '"a"}'] },
          { id: "fc_2", callId: "call_2", name: "list_dir", json: ['{"dir":"."}'] },
        ],
      }),
    });
    const events = await run();
    expect(events.filter((e) => e.type.startsWith("toolcall"))).toEqual([
      { type: "toolcall_start", id: "call_1", name: "read_file" },
      { type: "toolcall_delta", id: "call_1", delta: '{"path":' },
      { type: "toolcall_delta", id: "call_1", delta: '"a"}' },
      { type: "toolcall_end", id: "call_1", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_start", id: "call_2", name: "list_dir" },
      { type: "toolcall_delta", id: "call_2", delta: '{"dir":"."}' },
      { type: "toolcall_end", id: "call_2", name: "list_dir", arguments: { dir: "." } },
    ]);
    expect(last(events)).toMatchObject({ type: "done", stopReason: "toolUse" });
  });

  it("streams reasoning summaries as thinking and keeps the reasoning item as signature when reasoning is on", async () => {
    server.reply({
      type: "sse",
      frames: responsesStream({
        reasoning: { id: "rs_1", summary: ["Plan: read."], encrypted: "gAAAAenc" },
        text: ["ok"],
      }),
    });
    const events = await collect(
      provider({ reasoningEffort: "low" }).stream(userRequest("hi"), new AbortController().signal),
    );
    expect(events.slice(0, 3)).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Plan: read." },
      {
        type: "thinking_delta",
        delta: "",
        signature: expect.stringContaining('"encrypted_content":"gAAAAenc"'),
      },
    ]);
    expect(server.requests[0].body).toMatchObject({
      reasoning: { effort: "low", summary: "auto" },
      include: ["reasoning.encrypted_content"],
    });
  });

  it("maps an incomplete response (max_output_tokens) to length; malformed arguments to __invalid_json", async () => {
    server.reply({ type: "sse", frames: responsesStream({ text: ["cut"], status: "incomplete" }) });
    expect(last(await run())).toMatchObject({ type: "done", stopReason: "length" });
    server.reply({
      type: "sse",
      frames: responsesStream({
        functionCalls: [{ id: "fc_9", callId: "call_9", name: "read_file", json: ['{"path":'] }],
      }),
    });
    expect((await run()).find((e) => e.type === "toolcall_end")).toMatchObject({
      arguments: { __invalid_json: '{"path":' },
    });
  });
});

describe("openai responses provider: content filter", () => {
  it("an incomplete response cut off by the content filter is an api error, as in Chat Completions", async () => {
    const frames = responsesStream({ text: ["Here is how to"], status: "incomplete" });
    const end = frames.at(-1)!.data as { response: { incomplete_details: { reason: string } } };
    end.response.incomplete_details.reason = "content_filter";
    server.reply({ type: "sse", frames });
    const events = await run();
    expect(events.some((e) => e.type === "text_delta")).toBe(true); // what came before is kept
    expect(last(events)).toEqual({
      type: "error",
      kind: "api",
      message: "The response was cut off by the provider's content filter",
    });
  });
});

describe("openai responses provider: request body", () => {
  const signature = JSON.stringify({
    id: "rs_1",
    type: "reasoning",
    summary: [],
    encrypted_content: "gAAAAenc",
  });
  const assistant: AssistantMessage = {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Plan", signature },
      { type: "text", text: "Reading." },
      { type: "toolCall", id: "call_1", name: "read_file", arguments: { path: "a" } },
    ],
    stopReason: "toolUse",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    timestamp: 2,
  };
  const transcript: Message[] = [
    {
      role: "user",
      content: [
        { type: "text", text: "Look" },
        { type: "image", data: PNG_1x1, mimeType: "image/jpeg" },
      ],
      timestamp: 1,
    },
    assistant,
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
  ];

  it("sends input items: user content, function_call, function_call_output with images, tools as functions", async () => {
    server.reply({ type: "sse", frames: responsesStream({ text: ["ok"] }) });
    await run({ systemPrompt: "sys", messages: transcript, tools: [readFileSpec, listSpec] });
    const body = server.requests[0].body;
    expect(body.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: "Look" },
          { type: "input_image", image_url: `data:image/jpeg;base64,${PNG_1x1}`, detail: "auto" },
        ],
      },
      { role: "assistant", content: "Reading." },
      { type: "function_call", call_id: "call_1", name: "read_file", arguments: '{"path":"a"}' },
      {
        type: "function_call_output",
        call_id: "call_1",
        output: [
          { type: "input_text", text: "A" },
          { type: "input_image", image_url: `data:image/png;base64,${PNG_1x1}`, detail: "auto" },
        ],
      },
    ]);
    expect(body.tools).toEqual([
      {
        type: "function",
        name: "read_file",
        description: "Read a file",
        parameters: readFileSpec.parameters,
        strict: false,
      },
      {
        type: "function",
        name: "list_dir",
        description: "List a directory",
        parameters: listSpec.parameters,
        strict: false,
      },
    ]);
  });

  it("round-trips the reasoning item only with reasoning on", async () => {
    server.reply({ type: "sse", frames: responsesStream({ text: ["ok"] }) });
    await collect(
      provider({ reasoningEffort: "medium" }).stream(
        { messages: transcript, tools: [] },
        new AbortController().signal,
      ),
    );
    expect(server.requests[0].body.input[1]).toEqual(JSON.parse(signature));
  });
});

describe("openai responses provider: faults", () => {
  it("429 with retry-after-ms → rate_limit; 400 context overflow → context_overflow", async () => {
    server.reply(
      openaiHttpError(429, "Rate limit reached", "rate_limit_exceeded", "requests", {
        "retry-after-ms": "250",
      }),
    );
    expect(last(await run())).toMatchObject({ kind: "rate_limit", retryAfterMs: 250 });
    server.reply(
      openaiHttpError(
        400,
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "context_length_exceeded",
      ),
    );
    expect(last(await run())).toMatchObject({ kind: "context_overflow" });
  });

  it("an error event mid-stream → classified by its code", async () => {
    const frames = responsesStream({ text: ["a", "b"] });
    const cases: [string, string, string][] = [
      ["server_is_overloaded", "overloaded", "Overloaded"],
      ["rate_limit_exceeded", "rate_limit", "Slow down"],
      ["context_length_exceeded", "context_overflow", "Your input exceeds the context window of this model."],
      ["server_error", "network", "The server had an error"],
    ];
    for (const [code, kind, message] of cases) {
      server.reply({ type: "sse", frames: [...frames.slice(0, 5), responsesErrorFrame(code, message)] });
      const events = await run();
      expect(events[0]).toEqual({ type: "start" });
      expect(last(events), code).toEqual({ type: "error", kind, message });
    }
  });

  it("response.failed → error from its code", async () => {
    const frames = responsesStream({ text: ["a"] });
    server.reply({
      type: "sse",
      frames: [
        ...frames.slice(0, 2),
        {
          event: "response.failed",
          data: {
            type: "response.failed",
            sequence_number: 3,
            response: {
              id: "resp_1",
              status: "failed",
              output: [],
              error: { code: "server_error", message: "Something broke" },
            },
          },
        },
      ],
    });
    expect(last(await run())).toEqual({ type: "error", kind: "network", message: "Something broke" });
  });

  it("connection reset halfway → network; 401 → auth; abort on a stalled stream → aborted", async () => {
    server.reply({ type: "sse", frames: responsesStream({ text: ["a", "b", "c"] }), resetAfter: 6 });
    expect(last(await run())).toMatchObject({ kind: "network" });
    server.reply(openaiHttpError(401, "Incorrect API key provided", "invalid_api_key"));
    expect(last(await run())).toMatchObject({ kind: "auth" });
    server.reply({ type: "sse", frames: responsesStream({ text: ["a", "b"] }), stallAfter: 5 });
    const controller = new AbortController();
    const events: ProviderEvent[] = [];
    for await (const event of provider().stream(userRequest("hi"), controller.signal)) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events.map((e) => e.type)).toEqual(["start", "text_delta", "error"]);
    expect(last(events)).toMatchObject({ kind: "aborted" });
  });
});
