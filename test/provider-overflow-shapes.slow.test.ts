// Context overflow in wordings the vendors really send, over their wires: each must reach
// compaction (the window learned from the sizes it states) and the turn must then succeed, not end
// the run as a plain error. Anthropic (and Claude on Bedrock) count the output cap in: a prompt that
// fits the window alone is refused when it and `max_tokens` do not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentEvent,
  type AgentMessage,
  anthropic,
  bedrock,
  createAgent,
  emptyUsage,
  openai,
  openaiCompatible,
  type Provider,
} from "../index.js";
import { bedrockHttpError, bedrockReply, converseStream } from "./fixtures/bedrock-wire.js";
import {
  type FixtureReply,
  type ProviderFixtureServer,
  startProviderServer,
} from "./fixtures/provider-server.js";
import {
  anthropicHttpError,
  anthropicMessage,
  chatStream,
  openaiHttpError,
} from "./fixtures/provider-wire.js";

const CLAUDE_TEXT =
  "input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again";

interface Shape {
  name: string;
  http2?: boolean;
  provider: (server: ProviderFixtureServer) => Provider;
  overflow: FixtureReply;
  answer: FixtureReply;
  /** The input's room the error states. */
  providerMaximum: number;
}

const shapes: Shape[] = [
  {
    name: "anthropic: input + max_tokens over the limit",
    provider: (s) => anthropic({ model: "claude-sonnet-4-6", apiKey: "sk-ant-test-0001", baseURL: s.url }),
    overflow: anthropicHttpError(400, "invalid_request_error", CLAUDE_TEXT),
    answer: { type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: ["Fits now."] }] }) },
    providerMaximum: 200_000 - 21_333,
  },
  {
    name: "bedrock (Claude): the same, as a ValidationException",
    http2: true,
    provider: (s) =>
      bedrock({
        model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        region: "us-east-1",
        credentials: { accessKeyId: "AKIAFIXTURE000000001", secretAccessKey: "fixtureSecret/0123456789" },
        baseURL: s.url,
      }),
    overflow: bedrockHttpError(
      400,
      "ValidationException",
      `The model returned the following errors: ${CLAUDE_TEXT}`,
    ),
    answer: bedrockReply(converseStream({ blocks: [{ text: ["Fits now."] }] })),
    providerMaximum: 200_000 - 21_333,
  },
  {
    name: "openai: a 429 for one request over the tokens-per-minute limit (waiting never helps)",
    provider: (s) => openai({ model: "gpt-4o", apiKey: "sk-test-0001", baseURL: s.openaiURL }),
    overflow: openaiHttpError(
      429,
      "Request too large for gpt-4o in organization org-fixture on tokens per min (TPM): Limit 30000, Requested 50000. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
      "rate_limit_exceeded",
      "tokens",
    ),
    answer: { type: "sse", frames: chatStream({ text: ["Fits now."] }) },
    providerMaximum: 30_000,
  },
  {
    name: "openaiCompatible (xAI): maximum prompt length",
    provider: (s) => openaiCompatible({ baseURL: s.openaiURL, model: "grok-4", apiKey: "xai-test-0001" }),
    overflow: openaiHttpError(
      400,
      "This model's maximum prompt length is 131072 but the request contains 200000 tokens.",
      null,
      "invalid_request_error",
    ),
    answer: { type: "sse", frames: chatStream({ text: ["Fits now."] }) },
    providerMaximum: 131_072,
  },
];

/** Four earlier exchanges, each with a long tool result: something compaction can shrink. */
function history(): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (let i = 0; i < 4; i++) {
    const id = `old_${i}`;
    messages.push(
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
  return messages;
}

describe.each(shapes)("context overflow: $name", (shape) => {
  let server: ProviderFixtureServer;
  beforeAll(async () => {
    server = await startProviderServer({ http2: shape.http2 });
  });
  afterAll(() => server.close());

  it("compacts to the window the error states and the turn succeeds", async () => {
    server.reply(shape.overflow, shape.answer);
    const agent = createAgent({
      provider: shape.provider(server),
      messages: history(),
      // The window looks big enough to us; only the provider's refusal triggers compaction.
      context: { maxContextTokens: 1_000_000 },
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    const events: AgentEvent[] = [];
    agent.events$.subscribe((e) => events.push(e));
    await agent.prompt("And now?");

    expect(events.find((e) => e.type === "context_window_learned")).toMatchObject({
      providerMaximum: shape.providerMaximum,
    });
    expect(events.some((e) => e.type === "compaction")).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(agent.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "stop",
      content: [{ type: "text", text: "Fits now." }],
    });
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(server.requests[1]!.body).length).toBeLessThan(
      JSON.stringify(server.requests[0]!.body).length,
    );
  });
});
