import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AssistantMessage, bedrock, type Message, type ProviderEvent } from "../index.js";
import {
  bedrockExceptionEvent,
  bedrockHttpError,
  bedrockReply,
  converseStream,
} from "./fixtures/bedrock-wire.js";
import { collect, last, PNG_1x1, readFileSpec, userRequest } from "./fixtures/provider-harness.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";

const ACCESS_KEY_ID = "AKIAFIXTURE000000001";
const SECRET_ACCESS_KEY = "fixtureSecretAccessKey/0123456789abcdefABCD";
const MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
let server: ProviderFixtureServer;
const provider = (extra: Partial<Parameters<typeof bedrock>[0]> = {}) =>
  bedrock({
    model: MODEL,
    region: "us-east-1",
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY },
    baseURL: server.url,
    ...extra,
  });
const run = (request = userRequest("hi"), signal = new AbortController().signal) =>
  collect(provider().stream(request, signal));
type ErrorEvent = Extract<ProviderEvent, { type: "error" }>;

beforeAll(async () => {
  // The SDK's Bedrock runtime client speaks HTTP/2 (h2c against a plain http:// endpoint).
  server = await startProviderServer({ http2: true });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

describe("bedrock provider: streams", () => {
  it("streams text, then done with usage (cache reads and writes) and the Claude price", async () => {
    server.reply(
      bedrockReply(
        converseStream({
          blocks: [{ text: ["Hel", "lo"] }],
          usage: { input: 100, output: 10, cacheRead: 800, cacheWrite: 200 },
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
          input: 100,
          output: 10,
          cacheRead: 800,
          cacheWrite: 200,
          totalTokens: 1110,
        }),
      },
    ]);
    const usage = (last(events) as Extract<ProviderEvent, { type: "done" }>).usage;
    expect(usage?.cost?.total).toBeCloseTo((100 * 3 + 10 * 15 + 800 * 0.3 + 200 * 3.75) / 1e6, 12);
    const request = server.requests[0];
    expect(request.method).toBe("POST");
    expect(request.path).toBe(`/model/${encodeURIComponent(MODEL)}/converse-stream`);
    expect(String(request.headers.authorization)).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${ACCESS_KEY_ID}/\\d{8}/us-east-1/bedrock/aws4_request`),
    );
    expect(JSON.stringify(request.headers)).not.toContain(SECRET_ACCESS_KEY);
    expect(request.body).toEqual({
      messages: [{ role: "user", content: [{ text: "hi" }, { cachePoint: { type: "default" } }] }],
      system: [{ text: "You are terse." }, { cachePoint: { type: "default" } }],
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: "read_file",
              description: "Read a file",
              inputSchema: { json: readFileSpec.parameters },
            },
          },
          { cachePoint: { type: "default" } },
        ],
      },
      inferenceConfig: { maxTokens: 8192 },
    });
  });

  it("streams signed reasoning, redacted reasoning and parallel tool uses", async () => {
    server.reply(
      bedrockReply(
        converseStream({
          blocks: [
            { reasoning: ["Let me ", "look."], signature: "EqQBCkYIBxgCKkDsig" },
            { redacted: Buffer.from("opaque").toString("base64") },
            { toolUse: { id: "tooluse_a", name: "read_file", json: ['{"pa', 'th":"a"}'] } },
            { toolUse: { id: "tooluse_b", name: "read_file", json: ['{"path":"b"}'] } },
          ],
        }),
      ),
    );
    const events = await run();
    expect(events).toEqual([
      { type: "start" },
      { type: "thinking_delta", delta: "Let me " },
      { type: "thinking_delta", delta: "look." },
      { type: "thinking_delta", delta: "", signature: "EqQBCkYIBxgCKkDsig" },
      {
        type: "thinking_delta",
        delta: "",
        redacted: true,
        signature: Buffer.from("opaque").toString("base64"),
      },
      { type: "toolcall_start", id: "tooluse_a", name: "read_file" },
      { type: "toolcall_delta", id: "tooluse_a", delta: '{"pa' },
      { type: "toolcall_delta", id: "tooluse_a", delta: 'th":"a"}' },
      { type: "toolcall_end", id: "tooluse_a", name: "read_file", arguments: { path: "a" } },
      { type: "toolcall_start", id: "tooluse_b", name: "read_file" },
      { type: "toolcall_delta", id: "tooluse_b", delta: '{"path":"b"}' },
      { type: "toolcall_end", id: "tooluse_b", name: "read_file", arguments: { path: "b" } },
      { type: "done", stopReason: "toolUse", usage: expect.any(Object) },
    ]);
  });

  it("maps max_tokens to length; a guardrail stop is a clear api error; thinking asked for with a budget", async () => {
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["cut"] }], stopReason: "max_tokens" })));
    expect(last(await run())).toMatchObject({ type: "done", stopReason: "length" });
    server.reply(
      bedrockReply(converseStream({ blocks: [{ text: ["no"] }], stopReason: "guardrail_intervened" })),
    );
    expect(last(await run())).toEqual({
      type: "error",
      kind: "api",
      message: "Bedrock stopped the response (guardrail_intervened)",
    });
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["ok"] }] })));
    await collect(
      provider({ thinking: { budgetTokens: 4000 }, cache: false }).stream(
        userRequest("hi"),
        new AbortController().signal,
      ),
    );
    expect(server.requests.at(-1)?.body).toMatchObject({
      inferenceConfig: { maxTokens: 16384 },
      additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 4000 } },
      system: [{ text: "You are terse." }],
    });
  });
});

describe("bedrock provider: request body", () => {
  it("sends reasoning back signed, tool uses, tool results (with images, status) merged into one user turn", async () => {
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["ok"] }] })));
    const assistant: AssistantMessage = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Plan.", signature: "c2ln" },
        {
          type: "thinking",
          thinking: "",
          redacted: true,
          signature: Buffer.from("opaque").toString("base64"),
        },
        { type: "thinking", thinking: "unsigned, cut off" },
        { type: "toolCall", id: "tooluse_a", name: "read_file", arguments: { path: "a" } },
        { type: "toolCall", id: "tooluse_b", name: "read_file", arguments: { path: "b" } },
      ],
      stopReason: "toolUse",
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      provider: "bedrock",
      timestamp: 2,
    };
    const messages: Message[] = [
      { role: "user", content: "read", timestamp: 1 },
      assistant,
      {
        role: "toolResult",
        toolCallId: "tooluse_a",
        toolName: "read_file",
        content: [
          { type: "text", text: "A" },
          { type: "image", data: PNG_1x1, mimeType: "image/png" },
        ],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: "and?", timestamp: 4 },
    ];
    await collect(
      provider({ cache: false }).stream({ messages, tools: [readFileSpec] }, new AbortController().signal),
    );
    expect(server.requests[0].body.messages).toEqual([
      { role: "user", content: [{ text: "read" }] },
      {
        role: "assistant",
        content: [
          { reasoningContent: { reasoningText: { text: "Plan.", signature: "c2ln" } } },
          { reasoningContent: { redactedContent: Buffer.from("opaque").toString("base64") } },
          { toolUse: { toolUseId: "tooluse_a", name: "read_file", input: { path: "a" } } },
          { toolUse: { toolUseId: "tooluse_b", name: "read_file", input: { path: "b" } } },
        ],
      },
      {
        role: "user",
        content: [
          {
            toolResult: {
              toolUseId: "tooluse_a",
              content: [{ text: "A" }, { image: { format: "png", source: { bytes: PNG_1x1 } } }],
              status: "success",
            },
          },
          {
            toolResult: {
              toolUseId: "tooluse_b",
              content: [{ text: "No result was recorded for this tool call." }],
              status: "error",
            },
          },
          { text: "and?" },
        ],
      },
    ]);
  });
});

describe("bedrock provider: faults", () => {
  it("429 ThrottlingException → rate_limit; 503 ServiceUnavailableException → overloaded; 500 → network", async () => {
    server.reply(
      bedrockHttpError(429, "ThrottlingException", "Too many requests, please wait before trying again."),
    );
    expect(await run()).toEqual([
      {
        type: "error",
        kind: "rate_limit",
        message: "ThrottlingException: Too many requests, please wait before trying again.",
      },
    ]);
    server.reply(
      bedrockHttpError(503, "ServiceUnavailableException", "Bedrock is unable to process your request."),
    );
    expect(last(await run())).toMatchObject({ kind: "overloaded" });
    server.reply(
      bedrockHttpError(500, "InternalServerException", "The server encountered an internal error."),
    );
    expect(last(await run())).toMatchObject({ kind: "network" });
    expect(server.requests).toHaveLength(3); // the SDK did not retry
  });

  it("a ThrottlingException with retry-after (a gateway's, in seconds or as an HTTP date) → retryAfterMs", async () => {
    const throttled = (retryAfter: string): FixtureReply => {
      const reply = bedrockHttpError(429, "ThrottlingException", "Too many requests") as Extract<
        FixtureReply,
        { type: "raw" }
      >;
      return { ...reply, headers: { ...reply.headers, "retry-after": retryAfter } };
    };
    server.reply(throttled("7"));
    const seconds = last(await run());
    server.reply(throttled(new Date(Date.now() + 30_000).toUTCString()));
    const date = last(await run());
    expect(seconds).toMatchObject({ kind: "rate_limit", retryAfterMs: 7000 });
    expect(date).toMatchObject({ kind: "rate_limit" });
    expect((date as ErrorEvent).retryAfterMs).toBeGreaterThan(25_000);
    expect((date as ErrorEvent).retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("ValidationException → api, or context_overflow when it says the input is too long", async () => {
    server.reply(bedrockHttpError(400, "ValidationException", "messages: roles must alternate"));
    expect(last(await run())).toMatchObject({
      kind: "api",
      message: "ValidationException: messages: roles must alternate",
    });
    server.reply(bedrockHttpError(400, "ValidationException", "Input is too long for requested model."));
    expect(last(await run())).toMatchObject({ kind: "context_overflow" });
    server.reply(
      bedrockHttpError(400, "ValidationException", "prompt is too long: 210000 tokens > 200000 maximum"),
    );
    expect(last(await run())).toMatchObject({ kind: "context_overflow" });
  });

  it("403 with an unknown key → auth, the credentials in no event", async () => {
    server.reply(
      bedrockHttpError(
        403,
        "UnrecognizedClientException",
        `The security token included in the request is invalid (${ACCESS_KEY_ID}).`,
      ),
    );
    const error = last(await run()) as ErrorEvent;
    expect(error.kind).toBe("auth");
    expect(JSON.stringify(error)).not.toContain(ACCESS_KEY_ID);
    expect(JSON.stringify(provider())).not.toContain(SECRET_ACCESS_KEY);
    expect(Object.keys(provider()).sort()).toEqual(["id", "maxOutputTokens", "model", "stream"]);
  });

  it("an exception frame mid-stream → classified after the partial text (throttling, model stream error)", async () => {
    const open = converseStream({ blocks: [{ text: ["par", "tial"] }], open: true });
    server.reply(
      bedrockReply([
        ...open.slice(0, -1),
        bedrockExceptionEvent("throttlingException", "Too many tokens, please wait."),
      ]),
    );
    const throttled = await run();
    expect(throttled.filter((e) => e.type === "text_delta")).toHaveLength(2);
    expect(last(throttled)).toMatchObject({ type: "error", kind: "rate_limit" });

    server.reply(
      bedrockReply([
        ...open.slice(0, -1),
        bedrockExceptionEvent("serviceUnavailableException", "Model is overloaded."),
      ]),
    );
    expect(last(await run())).toMatchObject({ type: "error", kind: "overloaded" });

    server.reply(
      bedrockReply([
        ...open.slice(0, -1),
        bedrockExceptionEvent("modelStreamErrorException", "Model stream error."),
      ]),
    );
    expect(last(await run())).toMatchObject({ type: "error", kind: "network" });
  });

  it("a dropped connection → network; a stream without messageStop → network", async () => {
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["a", "b", "c"] }] }), { resetAfter: 3 }));
    const events = await run();
    expect(events[0]).toEqual({ type: "start" });
    expect(last(events)).toMatchObject({ type: "error", kind: "network" });
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["a"] }], open: true })));
    expect(last(await run())).toMatchObject({ type: "error", kind: "network" });
  });

  it("a malformed frame (bad checksum) → an error after what came before it", async () => {
    const frames = converseStream({ blocks: [{ text: ["a", "b"] }] });
    const broken = Uint8Array.from(frames[2]);
    broken[broken.length - 1] ^= 0xff; // the message CRC no longer matches
    server.reply(bedrockReply([frames[0], frames[1], broken, ...frames.slice(3)]));
    const events = await run();
    expect(events[1]).toEqual({ type: "text_delta", delta: "a" });
    // A corrupt frame is not a transient failure: the same bytes would fail the same way.
    expect(last(events)).toMatchObject({
      type: "error",
      kind: "api",
      message: expect.stringMatching(/checksum/),
    });
  });

  it("abort while the stream stalls ends promptly with aborted", async () => {
    server.reply(bedrockReply(converseStream({ blocks: [{ text: ["a", "b"] }] }), { stallAfter: 2 }));
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
});

describe("bedrock provider: an endpoint that speaks only HTTP/1.1", () => {
  it("says why the SDK's HTTP/2 failed, and streams with the request handler the user passes", async () => {
    const http1 = await startProviderServer();
    try {
      const atHttp1 = (extra: Partial<Parameters<typeof bedrock>[0]> = {}) =>
        bedrock({
          model: MODEL,
          region: "us-east-1",
          credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY },
          baseURL: http1.url,
          ...extra,
        });
      const failed = last(await collect(atHttp1().stream(userRequest("hi"), new AbortController().signal)));
      expect(failed).toMatchObject({ type: "error", kind: "api" });
      expect((failed as ErrorEvent).message).toBe(
        `Protocol error (ERR_HTTP2_ERROR) from ${http1.url}: the AWS SDK's default handler speaks HTTP/2 and the endpoint did not; for an endpoint that speaks only HTTP/1.1, pass bedrock({ requestHandler: new NodeHttpHandler() }) (from @smithy/node-http-handler)`,
      );

      http1.reply(bedrockReply(converseStream({ blocks: [{ text: ["over ", "HTTP/1.1"] }] })));
      const events = await collect(
        atHttp1({ requestHandler: new NodeHttpHandler() }).stream(
          userRequest("hi"),
          new AbortController().signal,
        ),
      );
      expect(events.filter((e) => e.type === "text_delta")).toEqual([
        { type: "text_delta", delta: "over " },
        { type: "text_delta", delta: "HTTP/1.1" },
      ]);
      expect(last(events)).toMatchObject({ type: "done", stopReason: "stop" });
    } finally {
      await http1.close();
    }
  });

  it("refuses a requestHandler that is not one", () => {
    expect(() => bedrock({ model: MODEL, requestHandler: "http1" })).toThrow(
      /^bedrock: requestHandler must be an AWS SDK request handler/,
    );
  });
});
