// Typed results over each provider's real wire format (the fixture server replays the APIs'
// documented streams through the official SDKs): the structured-output request each one sends,
// and the agent's handling of the answer (tool turns first, repairs, filters, aborts).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import * as z from "zod";
import {
  type AgentEvent,
  type AgentMessage,
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
  type RecordedRequest,
  startProviderServer,
} from "./fixtures/provider-server.js";
import { anthropicMessage, chatStream, responsesStream } from "./fixtures/provider-wire.js";

const Triage = z.object({ severity: z.enum(["low", "high"]), summary: z.string() });
const TRIAGE_SCHEMA = {
  type: "object",
  properties: {
    severity: { type: "string", enum: ["low", "high"] },
    summary: { type: "string" },
  },
  required: ["severity", "summary"],
  additionalProperties: false,
};

/** How one API carries a typed result on the wire. */
interface OutputWire {
  name: string;
  provider: (server: ProviderFixtureServer) => Provider;
  toolCall: (id: string, name: string, json: string) => FixtureReply;
  /** The final answer, streamed in `chunks`, as the API sends structured output. */
  answer: (chunks: string[]) => FixtureReply;
  /** The request asks for the schema the way this API does. */
  expectSchemaRequest: (request: RecordedRequest) => void;
  /** What the next request shows of an answer the model gave (the transcript sent back). */
  sentAnswers: (request: RecordedRequest) => string[];
}

const KEY = "sk-test-0123456789abcdef0123";

const wires: OutputWire[] = [
  {
    name: "anthropic (native output_config.format)",
    provider: (server) => anthropic({ model: "claude-haiku-4-5", apiKey: KEY, baseURL: server.url }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "tool_use", id, name, json: [json] }] }),
    }),
    answer: (chunks) => ({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: chunks }] }),
    }),
    expectSchemaRequest: ({ body }) => {
      expect(body.output_config).toEqual({ format: { type: "json_schema", schema: TRIAGE_SCHEMA } });
      expect(body.tool_choice).toBeUndefined();
    },
    sentAnswers: ({ body }) =>
      body.messages
        .filter((m: { role: string }) => m.role === "assistant")
        .flatMap((m: { content: { type: string; text?: string }[] }) =>
          m.content.filter((b) => b.type === "text").map((b) => b.text!),
        ),
  },
  {
    name: "openai chat (native response_format)",
    provider: (server) => openai({ model: "gpt-4.1", apiKey: KEY, baseURL: server.openaiURL }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id, name, json: [json] }] }),
    }),
    answer: (chunks) => ({ type: "sse", frames: chatStream({ text: chunks }) }),
    expectSchemaRequest: ({ body }) => {
      expect(body.response_format).toEqual({
        type: "json_schema",
        json_schema: { name: "final_answer", schema: TRIAGE_SCHEMA, strict: true },
      });
      expect(body.tool_choice).toBeUndefined();
    },
    sentAnswers: ({ body }) =>
      body.messages
        .filter((m: { role: string; content: unknown }) => m.role === "assistant" && m.content)
        .map((m: { content: string }) => m.content),
  },
  {
    name: "openai responses (native text.format)",
    provider: (server) =>
      openai({ model: "gpt-4.1", apiKey: KEY, baseURL: server.openaiURL, api: "responses" }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: responsesStream({ functionCalls: [{ id: `fc_${id}`, callId: id, name, json: [json] }] }),
    }),
    answer: (chunks) => ({ type: "sse", frames: responsesStream({ text: chunks }) }),
    expectSchemaRequest: ({ body }) => {
      expect(body.text).toEqual({
        format: { type: "json_schema", name: "final_answer", schema: TRIAGE_SCHEMA, strict: true },
      });
      expect(body.tool_choice).toBeUndefined();
    },
    sentAnswers: ({ body }) =>
      body.input
        .filter((item: { role?: string }) => item.role === "assistant")
        .map((item: { content: string }) => item.content),
  },
  {
    name: "openai-compatible (output tool, tool_choice required)",
    provider: (server) => openaiCompatible({ model: "qwen3:8b", baseURL: server.openaiURL }),
    toolCall: (id, name, json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id, name, json: [json] }] }),
    }),
    // The model finishes by calling the output tool, its arguments streamed in fragments.
    answer: (chunks) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id: "call_out", name: "final_answer", json: chunks }] }),
    }),
    expectSchemaRequest: ({ body }) => {
      expect(body.response_format).toBeUndefined();
      expect(body.tool_choice).toBe("required");
      expect(body.tools.at(-1)).toEqual({
        type: "function",
        function: { name: "final_answer", description: expect.any(String), parameters: TRIAGE_SCHEMA },
      });
    },
    // The output tool's call comes back into the transcript as the answer's text.
    sentAnswers: ({ body }) =>
      body.messages
        .filter((m: { role: string; content: unknown }) => m.role === "assistant" && m.content)
        .map((m: { content: string }) => m.content),
  },
];

const lookup = defineTool({
  name: "lookup",
  description: "Looks an issue up",
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => `issue ${id}: the build is red`,
});

let server: ProviderFixtureServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
});

function record(agent: { events$: { subscribe(next: (event: AgentEvent) => void): unknown } }): AgentEvent[] {
  const events: AgentEvent[] = [];
  agent.events$.subscribe((event) => events.push(event));
  return events;
}

/** Every tool call in the transcript is answered exactly once. */
function expectCallsAnswered(messages: readonly AgentMessage[]): void {
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : [],
  );
  const results = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
  expect(results.sort()).toEqual(calls.sort());
}

describe.each(wires)("output schema over $name", (wire) => {
  it("asks for the schema on every call and returns the object after two tool turns", async () => {
    server.reply(
      wire.toolCall("call_1", "lookup", '{"id":"1"}'),
      wire.toolCall("call_2", "lookup", '{"id":"2"}'),
      wire.answer(['{"severity":"hi', 'gh","summary":"red ', 'build"}']),
    );
    const agent = createAgent({ provider: wire.provider(server), tools: [lookup], output: Triage });
    const events = record(agent);
    const outcome = await agent.prompt("Triage issues 1 and 2");
    expect(outcome.reason).toBe("stop");
    expect(outcome.output).toEqual({ severity: "high", summary: "red build" });
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) wire.expectSchemaRequest(request);
    // The partial object streamed as it came.
    const partials = events
      .filter((e) => e.type === "output_delta")
      .map((e) => (e as { partial: unknown }).partial);
    expect(partials).toContainEqual({ severity: "hi" });
    expect(partials.at(-1)).toEqual({ severity: "high", summary: "red build" });
    expectCallsAnswered(agent.messages);
  });

  it("sends invalid JSON back with the parse error, then takes the repair", async () => {
    server.reply(wire.answer(['{"severity":"high",']), wire.answer(['{"severity":"low","summary":"fine"}']));
    const agent = createAgent({ provider: wire.provider(server), output: Triage });
    const events = record(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.output).toEqual({ severity: "low", summary: "fine" });
    expect(events.filter((e) => e.type === "output_invalid")).toEqual([
      expect.objectContaining({ raw: '{"severity":"high",', attempt: 1, action: "retry" }),
    ]);
    const second = server.requests[1];
    expect(wire.sentAnswers(second)).toEqual(['{"severity":"high",']);
    expect(JSON.stringify(second.body)).toMatch(/not accepted\. The answer is not valid JSON/);
    wire.expectSchemaRequest(second);
  });

  it("sends a schema failure back naming the field, then takes the repair", async () => {
    server.reply(
      wire.answer(['{"severity":"urgent","summary":"x"}']),
      wire.answer(['{"severity":"high","summary":"x"}']),
    );
    const agent = createAgent({ provider: wire.provider(server), output: Triage });
    const outcome = await agent.prompt("Triage");
    expect(outcome.output).toEqual({ severity: "high", summary: "x" });
    expect(JSON.stringify(server.requests[1].body)).toMatch(/does not match the schema.*severity/);
  });

  it("ends with an error carrying the last raw answer when the repairs are used up", async () => {
    server.reply(wire.answer(['{"severity":']), wire.answer(['{"severity":"none","summary":"x"}']));
    const agent = createAgent({ provider: wire.provider(server), output: { schema: Triage, maxRepairs: 1 } });
    const events = record(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.reason).toBe("error");
    expect(outcome.output).toBeUndefined();
    expect(outcome.rawOutput).toBe('{"severity":"none","summary":"x"}');
    expect(outcome.errorMessage).toMatch(
      /^No valid output after 2 attempts: The answer does not match the schema/,
    );
    expect(
      events.filter((e) => e.type === "output_invalid").map((e) => (e as { action: string }).action),
    ).toEqual(["retry", "fail"]);
    expect(server.requests).toHaveLength(2);
  });

  it("stops at once when aborted while the object streams, with no output", async () => {
    const reply = wire.answer(['{"severity":"high","sum', 'mary":"never ends"}']) as Extract<
      FixtureReply,
      { type: "sse" }
    >;
    const stallAfter = reply.frames.findIndex((f) => JSON.stringify(f.data).includes("sum")) + 1;
    expect(stallAfter).toBeGreaterThan(0);
    server.reply({ ...reply, stallAfter });
    const agent = createAgent({ provider: wire.provider(server), output: Triage });
    let partial: unknown;
    agent.events$.subscribe((e) => {
      if (e.type === "output_delta" && partial === undefined) {
        partial = e.partial;
        agent.abort();
      }
    });
    const outcome = await agent.prompt("Triage");
    expect(partial).toEqual({ severity: "high" });
    expect(outcome.reason).toBe("aborted");
    expect(outcome).not.toHaveProperty("output");
    expect(agent.state).toBe("idle");
    expect(server.requests).toHaveLength(1);
  });

  it("sends an output filter's reject back, then takes the corrected answer", async () => {
    server.reply(
      wire.answer(['{"severity":"high","summary":"call 555-0100"}']),
      wire.answer(['{"severity":"high","summary":"call the on-call phone"}']),
    );
    const noPhoneNumbers = ({ output }: { output?: unknown }) =>
      /\d{3}-\d{4}/.test((output as { summary: string }).summary)
        ? { reject: "the summary contains a phone number" }
        : { pass: true as const };
    const agent = createAgent({
      provider: wire.provider(server),
      output: Triage,
      outputFilters: [noPhoneNumbers],
    });
    const events = record(agent);
    const outcome = await agent.prompt("Triage");
    expect(outcome.reason).toBe("stop");
    expect(outcome.output).toEqual({ severity: "high", summary: "call the on-call phone" });
    expect(events.filter((e) => e.type === "output_filter")).toEqual([
      {
        type: "output_filter",
        filter: "noPhoneNumbers",
        verdict: "reject",
        reason: "the summary contains a phone number",
        action: "retry",
      },
      { type: "output_filter", filter: "noPhoneNumbers", verdict: "pass" },
    ]);
    expect(JSON.stringify(server.requests[1].body)).toMatch(/rejected: the summary contains a phone number/);
  });
});
