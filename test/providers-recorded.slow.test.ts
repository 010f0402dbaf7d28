import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropic, openai } from "../index.js";
import { collect, userRequest } from "./fixtures/provider-harness.js";
import { type ProviderFixtureServer, startProviderServer } from "./fixtures/provider-server.js";

/** Streams written in each API's documented wire format, replayed byte for byte (framing, pings, comments, CRLF). */
const recorded = (name: string) => readFileSync(new URL(`./fixtures/sse/${name}`, import.meta.url), "utf8");

let server: ProviderFixtureServer;
beforeAll(async () => {
  server = await startProviderServer();
});
afterAll(() => server.close());
const signal = () => new AbortController().signal;

describe("recorded streams, replayed byte for byte", () => {
  it("Anthropic: text, a ping, a tool_use whose empty first fragment is skipped, cumulative usage", async () => {
    server.reply({ type: "raw", body: recorded("anthropic-tool-use.sse") });
    const p = anthropic({ model: "claude-haiku-4-5", apiKey: "k-test", baseURL: server.url });
    const events = await collect(p.stream(userRequest("Read the readme"), signal()));
    expect(events).toEqual([
      { type: "start" },
      { type: "text_delta", delta: "Sure, let me" },
      { type: "text_delta", delta: " open it." },
      { type: "toolcall_start", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "read_file" },
      { type: "toolcall_delta", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", delta: '{"path":' },
      { type: "toolcall_delta", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", delta: ' "docs/READ' },
      { type: "toolcall_delta", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", delta: 'ME.md"}' },
      {
        type: "toolcall_end",
        id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
        name: "read_file",
        arguments: { path: "docs/README.md" },
      },
      {
        type: "done",
        stopReason: "toolUse",
        usage: expect.objectContaining({
          input: 472,
          output: 89,
          cacheRead: 2048,
          cacheWrite: 0,
          totalTokens: 2609,
        }),
      },
    ]);
  });

  it("Chat Completions with CRLF framing and SSE comments: two calls interleaved by index", async () => {
    server.reply({ type: "raw", body: recorded("openai-chat-parallel-crlf.sse") });
    const p = openai({ model: "gpt-4.1", apiKey: "k-test", baseURL: server.openaiURL });
    const events = await collect(p.stream(userRequest("Read both"), signal()));
    expect(events.filter((e) => e.type === "toolcall_end")).toEqual([
      {
        type: "toolcall_end",
        id: "call_Wx1Ua0cOqsvJOPTEXAMPLE1",
        name: "read_file",
        arguments: { path: "a.txt" },
      },
      {
        type: "toolcall_end",
        id: "call_Wx1Ua0cOqsvJOPTEXAMPLE2",
        name: "read_file",
        arguments: { path: "b.txt" },
      },
    ]);
    expect(events.at(-1)).toMatchObject({
      type: "done",
      stopReason: "toolUse",
      usage: { input: 82, output: 51 },
    });
  });

  it("Responses: one function call from output_item.added to response.completed", async () => {
    server.reply({ type: "raw", body: recorded("openai-responses-function-call.sse") });
    const p = openai({ model: "gpt-4.1", api: "responses", apiKey: "k-test", baseURL: server.openaiURL });
    const events = await collect(p.stream(userRequest("Read the entry"), signal()));
    expect(events).toEqual([
      { type: "start" },
      { type: "toolcall_start", id: "call_unLAR8MvFNptuiZK6K6HCy5k", name: "read_file" },
      { type: "toolcall_delta", id: "call_unLAR8MvFNptuiZK6K6HCy5k", delta: '{"path":' },
      { type: "toolcall_delta", id: "call_unLAR8MvFNptuiZK6K6HCy5k", delta: '"src/index.ts"}' },
      {
        type: "toolcall_end",
        id: "call_unLAR8MvFNptuiZK6K6HCy5k",
        name: "read_file",
        arguments: { path: "src/index.ts" },
      },
      {
        type: "done",
        stopReason: "toolUse",
        usage: expect.objectContaining({ input: 291, output: 23, totalTokens: 314 }),
      },
    ]);
  });
});
