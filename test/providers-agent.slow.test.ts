import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AssistantMessage,
  anthropic,
  createAgent,
  defineTool,
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
  /** The tool result for `callId` as it appears in a later request body. */
  toolResultIn: (body: any, callId: string) => unknown;
}

const cases: ApiCase[] = [
  {
    name: "anthropic",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-test-key-000", baseURL: s.url }),
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
    provider: (s) => openai({ model: "gpt-4.1", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
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
    provider: (s) =>
      openai({ model: "gpt-4.1", api: "responses", apiKey: "sk-test-key-000000", baseURL: s.openaiURL }),
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
    provider: (s) => openaiCompatible({ baseURL: s.openaiURL, model: "qwen3-8b" }),
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

  it("a context overflow is retried once, then ends the run with the provider's error", async () => {
    server.reply(api.overflow, api.overflow);
    const { agent, events } = agentFor(api);
    await agent.prompt("A very long prompt");
    const end = events.at(-1) as Extract<AgentEvent, { type: "agent_end" }>;
    expect(end.type).toBe("agent_end");
    expect(end.reason).toBe("error");
    const last = assistants(agent.messages).at(-1);
    expect(last?.stopReason).toBe("error");
    expect(last?.errorMessage).toMatch(/context|too long/i);
    expect(events.some((e) => e.type === "retry")).toBe(false);
    expect(server.requests).toHaveLength(2);
  });
});
