import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AgentMessage,
  type AssistantMessage,
  anthropic,
  createAgent,
  defineTool,
  emptyUsage,
  openai,
  openaiCompatible,
  type Provider,
} from "../index.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";
import {
  anthropicErrorFrame,
  anthropicHttpError,
  anthropicMessage,
  chatStream,
  openaiHttpError,
  responsesStream,
} from "./fixtures/provider-wire.js";

/** How to speak one API through the fixture server. */
interface ApiCase {
  name: string;
  provider: (server: ProviderFixtureServer) => Provider;
  text: (chunks: string[]) => FixtureReply;
  toolCall: (id: string, name: string, json: string[]) => FixtureReply;
  /** An overload arriving after HTTP 200, once `partial` was streamed. */
  overloadMidStream: (partial: string) => FixtureReply;
  rateLimited: FixtureReply;
  overflow: FixtureReply;
  unauthorized: FixtureReply;
  apiKey: string;
  /** The tool result for `callId` as it appears in a later request body. */
  toolResultIn: (body: any, callId: string) => unknown;
}

const cases: ApiCase[] = [
  {
    name: "anthropic",
    apiKey: "sk-ant-test-key-000",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-test-key-000", baseURL: s.url }),
    unauthorized: anthropicHttpError(401, "authentication_error", "invalid x-api-key sk-ant-test-key-000"),
    text: (text) => ({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text }] }) }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: anthropicMessage({
        blocks: [
          { type: "text", text: ["Let me look."] },
          { type: "tool_use", id, name, json },
        ],
      }),
    }),
    overloadMidStream: (partial) => {
      const frames = anthropicMessage({ blocks: [{ type: "text", text: [partial, "never sent"] }] });
      return {
        type: "sse",
        frames: [...frames.slice(0, 4), anthropicErrorFrame("overloaded_error", "Overloaded")],
      };
    },
    rateLimited: anthropicHttpError(429, "rate_limit_error", "Rate limited", { "retry-after-ms": "1" }),
    overflow: anthropicHttpError(
      400,
      "invalid_request_error",
      "prompt is too long: 250000 tokens > 200000 maximum",
    ),
    toolResultIn: (body, callId) =>
      body.messages
        .flatMap((m: any) => m.content)
        .find((b: any) => b.type === "tool_result" && b.tool_use_id === callId),
  },
  {
    name: "openai chat",
    apiKey: "sk-test-key-000000",
    provider: (s) => openai({ model: "gpt-4.1", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
    unauthorized: openaiHttpError(401, "Incorrect API key provided: sk-test-key-000000.", "invalid_api_key"),
    text: (text) => ({ type: "sse", frames: chatStream({ text }) }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: chatStream({ text: ["Let me look."], toolCalls: [{ index: 0, id, name, json }] }),
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
    overflow: openaiHttpError(
      400,
      "This model's maximum context length is 128000 tokens.",
      "context_length_exceeded",
    ),
    toolResultIn: (body, callId) =>
      body.messages.find((m: any) => m.role === "tool" && m.tool_call_id === callId),
  },
  {
    name: "openai responses",
    apiKey: "sk-test-key-000000",
    provider: (s) =>
      openai({ model: "gpt-4.1", api: "responses", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
    unauthorized: openaiHttpError(401, "Incorrect API key provided: sk-test-key-000000.", "invalid_api_key"),
    text: (text) => ({ type: "sse", frames: responsesStream({ text }) }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: responsesStream({
        text: ["Let me look."],
        functionCalls: [{ id: `fc_${id}`, callId: id, name, json }],
      }),
    }),
    overloadMidStream: (partial) => {
      const frames = responsesStream({ text: [partial, "never sent"] });
      return {
        type: "sse",
        frames: [
          ...frames.slice(0, 5),
          {
            event: "error",
            data: {
              type: "error",
              code: "server_is_overloaded",
              message: "Overloaded",
              param: null,
              sequence_number: 5,
            },
          },
        ],
      };
    },
    rateLimited: openaiHttpError(429, "Rate limit reached", "rate_limit_exceeded", "requests", {
      "retry-after": "0",
    }),
    overflow: openaiHttpError(
      400,
      "Your input exceeds the context window of this model.",
      "context_length_exceeded",
    ),
    toolResultIn: (body, callId) =>
      body.input.find((i: any) => i.type === "function_call_output" && i.call_id === callId),
  },
  {
    name: "openai-compatible (llama.cpp)",
    apiKey: "local-secret-token-123",
    provider: (s) =>
      openaiCompatible({ baseURL: s.openaiURL, model: "qwen3-8b", apiKey: "local-secret-token-123" }),
    unauthorized: openaiHttpError(401, "Invalid token local-secret-token-123", null, "authentication_error"),
    text: (text) => ({ type: "sse", frames: chatStream({ text }) }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id, name, json }] }),
    }),
    overloadMidStream: (partial) => ({
      type: "sse",
      frames: chatStream({ text: [partial, "never sent"] }),
      resetAfter: 2,
    }),
    rateLimited: {
      type: "json",
      status: 503,
      body: { error: { code: 503, message: "Loading model", type: "unavailable_error" } },
    },
    overflow: openaiHttpError(
      400,
      "the request exceeds the available context size, try increasing it",
      null,
      "exceed_context_size_error",
    ),
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

let server: ProviderFixtureServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

function agentFor(api: ApiCase) {
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

const assistants = (messages: readonly { role: string }[]) =>
  messages.filter((m): m is AssistantMessage => m.role === "assistant");

describe.each(cases)("a whole agent run against $name", (api) => {
  it("runs several turns with a tool; the tool result reaches the next request in place", async () => {
    server.reply(
      api.toolCall("call_1", "read_file", ['{"path":', '"a.txt"}']),
      api.toolCall("call_2", "read_file", ['{"path":"b.txt"}']),
      api.text(["Both files ", "say hello."]),
    );
    const { agent, events } = agentFor(api);
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
    expect(assistants(agent.messages)[2].content).toEqual([{ type: "text", text: "Both files say hello." }]);
    expect(
      events.filter((e) => e.type === "tool_execution_end").map((e) => (e as { isError: boolean }).isError),
    ).toEqual([false, false]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(server.requests).toHaveLength(3);
    expect(JSON.stringify(api.toolResultIn(server.requests[1].body, "call_1"))).toContain(
      "contents of a.txt: hello",
    );
    expect(JSON.stringify(api.toolResultIn(server.requests[2].body, "call_2"))).toContain(
      "contents of b.txt: hello",
    );
  });

  it("retries a rate limit and a mid-stream failure; no half message reaches the transcript", async () => {
    server.reply(api.rateLimited, api.overloadMidStream("Half an ans"), api.text(["Whole answer."]));
    const { agent, events } = agentFor(api);
    await agent.prompt("Hi");

    const retries = events.filter((e) => e.type === "retry");
    expect(retries.map((e) => (e as { attempt: number }).attempt)).toEqual([1, 2]);
    expect(assistants(agent.messages)).toHaveLength(1);
    expect(assistants(agent.messages)[0]).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "Whole answer." }],
    });
    // Shown live while it streamed, never kept.
    expect(events.some((e) => e.type === "message_update" && e.delta === "Half an ans")).toBe(true);
    expect(JSON.stringify(agent.messages)).not.toContain("Half an ans");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(server.requests).toHaveLength(3);
  });

  it("malformed tool-call JSON fails the call's validation and the model sees why", async () => {
    server.reply(api.toolCall("call_bad", "read_file", ['{"path": "a.t']), api.text(["Sorry."]));
    const { agent } = agentFor(api);
    await agent.prompt("Read a.txt");
    const result = agent.messages.find((m) => m.role === "toolResult");
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result)).toContain('Validation failed for tool \\"read_file\\"');
    expect(server.requests).toHaveLength(2);
  });

  it("a context overflow that nothing can shrink ends the run at once with the provider's error", async () => {
    // Nothing to compact (one message): no second, futile request is made.
    server.reply(api.overflow);
    const { agent, events } = agentFor(api);
    await agent.prompt("A very long prompt");
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.type).toBe("agent_end");
    expect(end.reason).toBe("error");
    const last = assistants(agent.messages).at(-1);
    expect(last?.stopReason).toBe("error");
    expect(last?.errorMessage).toMatch(/context|too long/i);
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(server.requests).toHaveLength(1);
    expect(server.pending()).toBe(0);
  });

  it("a 401 ends the run at once, and the key appears in no event, message or snapshot", async () => {
    server.reply(api.unauthorized);
    const { agent, events } = agentFor(api);
    await agent.prompt("Hi");
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "error" });
    expect(assistants(agent.messages).at(-1)?.stopReason).toBe("error");
    expect(server.requests).toHaveLength(1);
    const seen = JSON.stringify([events, agent.messages, agent.getPersistedSnapshot()]);
    expect(seen).not.toContain(api.apiKey);
  });

  it("abort while the model's stream stalls ends the run promptly as aborted", async () => {
    const stalled = api.text(["Thinking about it", "never sent"]);
    server.reply({
      ...(stalled as Extract<FixtureReply, { type: "sse" }>),
      stallAfter: 3,
      resetAfter: undefined,
    });
    const { agent, events } = agentFor(api);
    agent.events$.subscribe((e) => {
      // The assistant's message starts at the provider's first streamed event.
      if (e.type === "message_start" && e.message.role === "assistant") agent.abort();
    });
    await agent.prompt("Hi");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    expect(assistants(agent.messages).at(-1)?.stopReason).toBe("aborted");
  });

  it("a stream the server holds open after its first delta is abandoned and retried through the SDK", async () => {
    const stalled = api.text(["Half an ans", "never sent"]) as Extract<FixtureReply, { type: "sse" }>;
    // Everything up to the frame that carries the first delta, then silence on an open connection.
    const stallAfter = stalled.frames.findIndex((f) => JSON.stringify(f.data).includes("Half an ans")) + 1;
    expect(stallAfter).toBeGreaterThan(0);
    server.reply({ ...stalled, stallAfter, resetAfter: undefined }, api.text(["The whole answer."]));
    const agent = createAgent({
      provider: api.provider(server),
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      stallTimeout: { idleMs: 300 },
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => events.push(e));
    await agent.prompt("Hi");
    expect(server.requests).toHaveLength(2);
    expect(events.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.error)).toEqual([
      "The model stream stalled: no event for 300 ms after the last one (stallTimeout.idleMs)",
    ]);
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(assistants(agent.messages)[0]).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "The whole answer." }],
    });
    // Shown live while it streamed, never kept.
    expect(events.some((e) => e.type === "message_update" && e.delta === "Half an ans")).toBe(true);
    expect(JSON.stringify(agent.messages)).not.toContain("Half an ans");
  });

  it("at the turn cap, the answer request still lists the tools but forbids calling them", async () => {
    server.reply(
      api.toolCall("call_1", "read_file", ['{"path":"a.txt"}']),
      api.text(["Here is what I found."]),
    );
    const agent = createAgent({ provider: api.provider(server), tools: [readFile], limits: { maxTurns: 1 } });
    await agent.prompt("Read a.txt");
    expect(server.requests).toHaveLength(2);
    const [work, answer] = server.requests.map((r) => r.body);
    expect(work.tool_choice).toBeUndefined();
    expect(answer.tools).toHaveLength(1);
    expect(answer.tool_choice).toEqual(api.name === "anthropic" ? { type: "none" } : "none");
    expect(assistants(agent.messages).at(-1)).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "Here is what I found." }],
    });
  });

  it("a 5 MB tool result reaches the next request cut to its budget", async () => {
    const huge = "0123456789".repeat(500_000);
    const dump = defineTool({
      name: "dump",
      description: "Dumps 5 MB",
      parameters: z.object({}),
      execute: () => huge,
    });
    server.reply(api.toolCall("call_dump", "dump", ["{}"]), api.text(["Seen it."]));
    const agent = createAgent({ provider: api.provider(server), tools: [dump] });
    await agent.prompt("Dump it");
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((r) => JSON.stringify(r.body).length);
    // What the next request grew by: the cut result (50,000 characters) and the call, not 5 MB.
    expect(second! - first!).toBeLessThan(52_000);
    expect(second! - first!).toBeGreaterThan(49_000);
    const result = agent.messages.find((m) => m.role === "toolResult")!;
    expect((result.details as { fullOutput: string }).fullOutput).toBe(huge);
  });

  it("with compaction configured, an overflow compacts the context and the turn succeeds", async () => {
    server.reply(api.overflow, api.text(["Fits now."]));
    const history: AgentMessage[] = [];
    for (let i = 0; i < 4; i++) {
      const id = `old_${i}`;
      history.push(
        { role: "user", content: `Read file ${i}`, timestamp: 1 },
        {
          role: "assistant",
          content: [{ type: "toolCall", id, name: "read_file", arguments: { path: `f${i}.txt` } }],
          stopReason: "toolUse",
          usage: emptyUsage(),
          timestamp: 1,
        },
        {
          role: "toolResult",
          toolCallId: id,
          toolName: "read_file",
          content: [
            { type: "text", text: Array.from({ length: 400 }, (_, n) => `f${i} line ${n}`).join("\n") },
          ],
          isError: false,
          timestamp: 1,
        },
        {
          role: "assistant",
          content: [{ type: "text", text: `File ${i} read.` }],
          stopReason: "stop",
          usage: emptyUsage(),
          timestamp: 1,
        },
      );
    }
    const agent = createAgent({
      provider: api.provider(server),
      tools: [readFile],
      messages: history,
      // The window looks big enough to us; only the provider's overflow triggers compaction.
      context: { maxContextTokens: 1_000_000 },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => events.push(e));
    await agent.prompt("And now?");

    expect(events.some((e) => e.type === "compaction")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(assistants(agent.messages).at(-1)).toMatchObject({
      stopReason: "stop",
      content: [{ type: "text", text: "Fits now." }],
    });
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1].body).length).toBeLessThan(
      JSON.stringify(server.requests[0].body).length,
    );
  });
});
