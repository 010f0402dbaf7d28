/**
 * What a typed result costs over a text answer, per provider, on the same script: two tool turns,
 * then the answer (in text, or as the output schema's object), through each provider's real wire
 * format against the fixture server. Model calls are counted; tokens are estimated as JSON
 * characters / 4 (the request bodies the server received, and the answer's characters), since the
 * point is the difference the schema makes, not a provider's tokenizer. A last line per provider adds
 * one invalid answer the model repairs.
 *
 *   npm run bench -- output     # or: npx tsx bench/output.ts
 */
import { z } from "zod";
import { anthropic, createAgent, defineTool, openai, openaiCompatible, type Provider } from "../index.js";
import { estimateTokens, type FixtureReply, startProviderServer } from "../test/fixtures/provider-server.js";
import { anthropicMessage, chatStream, responsesStream } from "../test/fixtures/provider-wire.js";

const Triage = z.object({
  severity: z.enum(["low", "high"]),
  summary: z.string(),
  labels: z.array(z.string()),
});
const TEXT_ANSWER = "Severity high. The build is red since the last merge; labels: ci, regression.";
const OBJECT_ANSWER = JSON.stringify({
  severity: "high",
  summary: "The build is red since the last merge",
  labels: ["ci", "regression"],
});

interface Wire {
  name: string;
  provider: (url: { url: string; openaiURL: string }) => Provider;
  toolCall: (id: string, json: string) => FixtureReply;
  text: (text: string) => FixtureReply;
  /** The typed answer as this provider sends it (text, or the output tool's call). */
  object: (json: string) => FixtureReply;
}

const KEY = "sk-bench-0123456789abcdef";
const wires: Wire[] = [
  {
    name: "anthropic (native)",
    provider: (s) => anthropic({ model: "claude-haiku-4-5", apiKey: KEY, baseURL: s.url }),
    toolCall: (id, json) => ({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "tool_use", id, name: "lookup", json: [json] }] }),
    }),
    text: (text) => ({ type: "sse", frames: anthropicMessage({ blocks: [{ type: "text", text: [text] }] }) }),
    object: (json) => ({
      type: "sse",
      frames: anthropicMessage({ blocks: [{ type: "text", text: [json] }] }),
    }),
  },
  {
    name: "openai chat (native)",
    provider: (s) => openai({ model: "gpt-4.1", apiKey: KEY, baseURL: s.openaiURL }),
    toolCall: (id, json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id, name: "lookup", json: [json] }] }),
    }),
    text: (text) => ({ type: "sse", frames: chatStream({ text: [text] }) }),
    object: (json) => ({ type: "sse", frames: chatStream({ text: [json] }) }),
  },
  {
    name: "openai responses (native)",
    provider: (s) => openai({ model: "gpt-4.1", apiKey: KEY, baseURL: s.openaiURL, api: "responses" }),
    toolCall: (id, json) => ({
      type: "sse",
      frames: responsesStream({
        functionCalls: [{ id: `fc_${id}`, callId: id, name: "lookup", json: [json] }],
      }),
    }),
    text: (text) => ({ type: "sse", frames: responsesStream({ text: [text] }) }),
    object: (json) => ({ type: "sse", frames: responsesStream({ text: [json] }) }),
  },
  {
    name: "openai-compatible (output tool)",
    provider: (s) => openaiCompatible({ model: "qwen3:8b", baseURL: s.openaiURL }),
    toolCall: (id, json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id, name: "lookup", json: [json] }] }),
    }),
    text: (text) => ({ type: "sse", frames: chatStream({ text: [text] }) }),
    object: (json) => ({
      type: "sse",
      frames: chatStream({ toolCalls: [{ index: 0, id: "call_out", name: "final_answer", json: [json] }] }),
    }),
  },
];

const lookup = defineTool({
  name: "lookup",
  description: "Looks an issue up by id",
  parameters: z.object({ id: z.string() }),
  execute: ({ id }) => `issue ${id}: the build is red since the last merge`,
});

const server = await startProviderServer();

interface Figures {
  calls: number;
  input: number;
}

async function measure(wire: Wire, answers: FixtureReply[], typed: boolean): Promise<Figures> {
  server.requests.length = 0;
  server.reply(wire.toolCall("call_1", '{"id":"1"}'), wire.toolCall("call_2", '{"id":"2"}'), ...answers);
  const agent = createAgent({
    provider: wire.provider(server),
    systemPrompt: "You triage CI failures.",
    tools: [lookup],
    ...(typed && { output: Triage }),
  });
  const outcome = await agent.prompt("Triage issues 1 and 2");
  if (outcome.reason !== "stop" || (typed && outcome.output === undefined)) {
    throw new Error(`${wire.name}: the run ended with ${outcome.reason} ${outcome.errorMessage ?? ""}`);
  }
  agent.stop();
  const input = server.requests.reduce((sum, request) => {
    const { model: _m, stream: _s, stream_options: _o, ...body } = request.body as Record<string, unknown>;
    return sum + estimateTokens(body);
  }, 0);
  return { calls: server.requests.length, input };
}

const rows: string[][] = [["provider", "answer", "model calls", "input tokens (est.)", "Δ input", "Δ calls"]];
for (const wire of wires) {
  const text = await measure(wire, [wire.text(TEXT_ANSWER)], false);
  const typed = await measure(wire, [wire.object(OBJECT_ANSWER)], true);
  const repaired = await measure(
    wire,
    [wire.object('{"severity":"urgent"}'), wire.object(OBJECT_ANSWER)],
    true,
  );
  const delta = (f: Figures) =>
    `${f.input - text.input >= 0 ? "+" : ""}${f.input - text.input} (${(((f.input - text.input) / text.input) * 100).toFixed(0)} %)`;
  rows.push([wire.name, "text", String(text.calls), String(text.input), "", ""]);
  rows.push([
    "",
    "typed",
    String(typed.calls),
    String(typed.input),
    delta(typed),
    `+${typed.calls - text.calls}`,
  ]);
  rows.push([
    "",
    "typed, 1 repair",
    String(repaired.calls),
    String(repaired.input),
    delta(repaired),
    `+${repaired.calls - text.calls}`,
  ]);
}
await server.close();

const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join("  "));
console.log(
  "\nSame script each time: two lookup tool turns, then the answer. Input tokens: every request body the " +
    "server received (messages, tools, schema), JSON characters / 4.",
);
