/**
 * Per-event cost of each provider adapter's stream mapping, against the Anthropic provider's.
 *
 * One answer of 20,000 text deltas (10 characters each) and two tool calls, written in each API's
 * own format, measured two ways:
 *
 * - mapping: our mapping function alone, fed the events the SDK would have decoded (Anthropic
 *   `RawMessageStreamEvent`s, Chat Completions chunks, Gemini `GenerateContentResponse`s, Bedrock
 *   `ConverseStreamOutput` members, AI SDK v3 stream parts in a `ReadableStream`);
 * - SDK + mapping: the whole `provider.stream()`, the official SDK parsing the HTTP body from an
 *   in-memory `fetch` (no socket), for the providers whose SDK takes `fetch` (not Bedrock's, whose
 *   client speaks HTTP/2 through its own handler).
 *
 * Figures are CPU µs per provider event (medians of BENCH_RUNS runs, default 5, contenders
 * alternating) and the ratio to Anthropic's in the same process.
 *
 *   npm run bench -- providers
 */
import {
  aiSdk,
  anthropic,
  gemini,
  openai,
  type ProviderEvent,
  type ProviderRequest,
  type Usage,
} from "../index.js";
import { aiSdkStreamEvents } from "../providers/internal/ai-sdk-stream.js";
import { anthropicStreamEvents } from "../providers/internal/anthropic-stream.js";
import { bedrockStreamEvents } from "../providers/internal/bedrock-stream.js";
import { geminiStreamEvents } from "../providers/internal/gemini-stream.js";
import { chatStreamEvents } from "../providers/internal/openai-chat.js";
import { geminiStream } from "../test/fixtures/gemini-wire.js";
import { anthropicMessage, chatStream } from "../test/fixtures/provider-wire.js";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { benchRuns, measure, median } from "./harness.js";

const DELTAS = 20_000;
const texts = Array.from({ length: DELTAS }, (_, i) => `${String(i).padStart(9, "0")} `);
const calls = [
  { id: "call_a", name: "read_file", json: ['{"path"', ':"a.txt"}'] },
  { id: "call_b", name: "read_file", json: ['{"path"', ':"b.txt"}'] },
];
const usage = { input: 1000, output: DELTAS };
const signal = new AbortController().signal;
const finish = (u: Usage | undefined) => u;
const request: ProviderRequest = { messages: [{ role: "user", content: "go", timestamp: 0 }], tools: [] };

// ---------------------------------------------------------------- the wire of each API

const anthropicFrames = anthropicMessage({
  blocks: [
    { type: "text", text: texts },
    ...calls.map((c) => ({ type: "tool_use" as const, id: c.id, name: c.name, json: c.json })),
  ],
  usage,
});
const chatFrames = chatStream({
  text: texts,
  toolCalls: calls.map((c, index) => ({ index, ...c })),
  usage: { prompt: usage.input, completion: usage.output },
});
const geminiEvents = geminiStream({
  chunks: [
    ...texts.map((text) => [{ text }]),
    calls.map((c) => ({ call: { name: c.name, args: JSON.parse(c.json.join("")) } })),
  ],
  usage: { prompt: usage.input, candidates: usage.output },
});
const bedrockEvents = [
  { messageStart: { role: "assistant" } },
  ...texts.map((text) => ({ contentBlockDelta: { contentBlockIndex: 0, delta: { text } } })),
  { contentBlockStop: { contentBlockIndex: 0 } },
  ...calls.flatMap((c, i) => [
    {
      contentBlockStart: { contentBlockIndex: i + 1, start: { toolUse: { toolUseId: c.id, name: c.name } } },
    },
    ...c.json.map((input) => ({
      contentBlockDelta: { contentBlockIndex: i + 1, delta: { toolUse: { input } } },
    })),
    { contentBlockStop: { contentBlockIndex: i + 1 } },
  ]),
  { messageStop: { stopReason: "tool_use" } },
  { metadata: { usage: { inputTokens: usage.input, outputTokens: usage.output } } },
];
const v3Usage = {
  inputTokens: { total: usage.input, noCache: usage.input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: usage.output, text: usage.output, reasoning: 0 },
};
const aiSdkParts = [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  ...texts.map((delta) => ({ type: "text-delta", id: "t", delta })),
  { type: "text-end", id: "t" },
  ...calls.flatMap((c) => [
    { type: "tool-input-start", id: c.id, toolName: c.name },
    ...c.json.map((delta) => ({ type: "tool-input-delta", id: c.id, delta })),
    { type: "tool-input-end", id: c.id },
    { type: "tool-call", toolCallId: c.id, toolName: c.name, input: c.json.join("") },
  ]),
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_use" }, usage: v3Usage },
];

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

function partStream(parts: readonly object[]): ReadableStream<any> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < parts.length) controller.enqueue(parts[i++]);
      else controller.close();
    },
  });
}

/** SSE text as the APIs send it. */
function sse(frames: { event?: string; data: unknown }[]): string {
  return frames
    .map(
      (f) =>
        `${f.event ? `event: ${f.event}\n` : ""}data: ${typeof f.data === "string" ? f.data : JSON.stringify(f.data)}\n\n`,
    )
    .join("");
}

/** A `fetch` that answers every request with this body, in 16 KB chunks as a socket would give them. */
function memoryFetch(body: string, contentType: string): typeof fetch {
  const bytes = new TextEncoder().encode(body);
  return (async () => {
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(offset, (offset += 16_384)));
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": contentType } });
  }) as typeof fetch;
}

// ---------------------------------------------------------------- contenders

interface Contender {
  name: string;
  run: () => AsyncIterable<ProviderEvent>;
}

// Decoded once: the mapping runs see objects, as they get them from the SDK.
const anthropicEvents = anthropicFrames.map((f) => f.data as never);
const chatChunks = chatFrames.filter((f) => f.data !== "[DONE]").map((f) => f.data as never);
const geminiChunks = geminiEvents.map((e) => JSON.parse(e.slice("data: ".length)));

const mapping: Contender[] = [
  {
    name: "anthropic",
    run: () => anthropicStreamEvents(fromArray(anthropicEvents), signal, (u) => u),
  },
  {
    name: "openai chat",
    run: () => chatStreamEvents(fromArray(chatChunks), signal, finish),
  },
  {
    name: "gemini",
    run: () => geminiStreamEvents(fromArray(geminiChunks), signal, finish),
  },
  { name: "bedrock", run: () => bedrockStreamEvents(fromArray(bedrockEvents), signal, finish) },
  { name: "aiSdk (v3 parts)", run: () => aiSdkStreamEvents(partStream(aiSdkParts), signal, finish) },
];

/**
 * A provider run with `globalThis.fetch` swapped for an in-memory one while it streams (some SDKs
 * read it when the client is made, some at each call: the provider is made inside, so both see it).
 */
function viaSdk(
  name: string,
  body: string,
  make: () => { stream: (r: ProviderRequest, s: AbortSignal) => AsyncIterable<ProviderEvent> },
): Contender {
  const fetchImpl = memoryFetch(body, "text/event-stream");
  return {
    name,
    run: () =>
      (async function* () {
        const saved = globalThis.fetch;
        globalThis.fetch = fetchImpl;
        try {
          yield* make().stream(request, new AbortController().signal);
        } finally {
          globalThis.fetch = saved;
        }
      })(),
  };
}

const sdk: Contender[] = [
  viaSdk("anthropic", sse(anthropicFrames), () =>
    anthropic({ model: "claude-haiku-4-5", apiKey: "sk-ant-bench", baseURL: "http://127.0.0.1:9" }),
  ),
  viaSdk("openai chat", sse(chatFrames), () =>
    openai({ model: "gpt-4.1", apiKey: "sk-bench", baseURL: "http://127.0.0.1:9/v1" }),
  ),
  viaSdk("gemini", geminiEvents.join(""), () =>
    gemini({ model: "gemini-2.5-flash", apiKey: "AIza-bench", baseURL: "http://127.0.0.1:9" }),
  ),
  viaSdk("aiSdk (@ai-sdk/openai-compatible)", sse(chatFrames), () =>
    aiSdk(
      createOpenAICompatible({
        name: "bench",
        baseURL: "http://127.0.0.1:9/v1",
        apiKey: "sk-bench",
      }).chatModel("gpt-4.1"),
    ),
  ),
];

async function drain(contender: Contender): Promise<number> {
  let count = 0;
  let last: ProviderEvent | undefined;
  for await (const event of contender.run()) {
    count++;
    last = event;
  }
  if (last?.type !== "done") throw new Error(`${contender.name}: ended with ${JSON.stringify(last)}`);
  if (count < DELTAS) throw new Error(`${contender.name}: only ${count} events`);
  return count;
}

/** Median CPU µs per event of each contender, runs alternating between them. */
async function series(
  contenders: Contender[],
): Promise<{ name: string; events: number; usPerEvent: number }[]> {
  const samples = contenders.map(() => [] as number[]);
  const counts = contenders.map(() => 0);
  for (const contender of contenders) await drain(contender); // warm-up
  const runs = benchRuns();
  for (let run = 0; run < runs; run++) {
    const order = contenders.map((_, i) => (i + run) % contenders.length);
    for (const i of order) {
      let events = 0;
      const sample = await measure(async () => {
        events = await drain(contenders[i]!);
      });
      counts[i] = events;
      samples[i]!.push((sample.cpuMs * 1000) / events);
    }
  }
  return contenders.map((c, i) => ({ name: c.name, events: counts[i]!, usPerEvent: median(samples[i]!) }));
}

function print(title: string, rows: { name: string; events: number; usPerEvent: number }[]) {
  const base = rows[0]!.usPerEvent;
  console.log(`\n${title}`);
  console.log(
    `${"provider".padEnd(36)} ${"events".padStart(7)} ${"µs/event".padStart(9)} ${"vs anthropic".padStart(13)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(36)} ${String(row.events).padStart(7)} ${row.usPerEvent.toFixed(3).padStart(9)} ${(row.usPerEvent / base).toFixed(2).padStart(12)}x`,
    );
  }
}

console.log(
  `Provider stream mapping, ${DELTAS.toLocaleString("en")} text deltas + 2 tool calls, CPU µs per provider event`,
);
print("mapping only (decoded events in, provider events out)", await series(mapping));
print("SDK + mapping (HTTP body from an in-memory fetch)", await series(sdk));
