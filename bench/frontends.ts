// The session host's figures (issue 24 §5), printed as a report by `npm run bench -- frontends`:
// (1) what the protocol encoders cost per event against subscribing to events$ alone;
// (2) the time from the provider's first text delta to the client's first text chunk on localhost;
// (3) 1,000 concurrent open streams: heap, events per second, none lost;
// (4) a durable thread on Restate: wall per turn through the host against the durable client alone.
import { performance } from "node:perf_hooks";
import { createAgent, type Provider, type ProviderEvent, type ScriptedStep } from "../index.js";
import {
  agUiEncoder,
  aiSdkStream,
  createSessionHost,
  type ResponseContext,
  serveNode,
  type StreamEncoder,
} from "../http.js";
import { stepUsage } from "./bench-tools.js";
import { benchRuns, collectGarbage, machineDescription, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

const runs = benchRuns();
console.log(
  `session host (agent-machine/http) · ${machineDescription()} · ${runs} runs per figure (medians)`,
);

// --- (1) encoder cost per event ---------------------------------------------------------------

const DELTAS = 20_000;
const encodeSteps = (): ScriptedStep[] => [
  {
    thinking: "Let me think about it. ".repeat(50),
    text: "Checking. ",
    toolCalls: [{ name: "noop", arguments: { n: 1 } }],
    usage: stepUsage,
    chunkSize: 8,
  },
  { text: "0123456789".repeat(DELTAS), chunkSize: 10, usage: stepUsage },
];

/** CPU µs of one run, its events consumed by `consume` (or just counted). */
async function runOnce(
  consume: ((encoder: StreamEncoder) => void) | "count",
  makeEncoder?: () => StreamEncoder,
) {
  const agent = createAgent({
    provider: leanScripted(encodeSteps()),
    tools: [{ name: "noop", description: "x", parameters: { type: "object" }, execute: () => "ok" } as never],
    eventReplay: false,
  });
  let events = 0;
  let bytes = 0;
  const encoder = makeEncoder?.();
  const context: ResponseContext = { kind: "run", threadId: "t", runId: undefined, messages: [] };
  if (encoder) bytes += encoder.open(context).length;
  agent.events$.subscribe((event) => {
    events++;
    if (encoder) bytes += encoder.event(event, events - 1).length;
  });
  collectGarbage();
  const cpu = process.cpuUsage();
  const outcome = await agent.prompt("go");
  const used = process.cpuUsage(cpu);
  if (encoder)
    bytes += encoder.close({
      kind: "end",
      event: { type: "agent_end", messages: outcome.messages, reason: outcome.reason, usage: outcome.usage },
      messages: [],
    }).length;
  agent.stop();
  void consume;
  return { cpuMicros: used.user + used.system, events, bytes };
}

const encoders: Record<string, (() => StreamEncoder) | undefined> = {
  "events$ alone": undefined,
  "AI SDK v7": aiSdkStream(),
  "AI SDK v6": aiSdkStream({ target: 6 }),
  "AG-UI 1.0": () => agUiEncoder({ runId: "bench-run" }),
};
await runOnce("count");
const cpu: Record<string, number[]> = {};
let eventCount = 0;
const bytesOf: Record<string, number> = {};
for (let i = 0; i < runs; i++) {
  for (const [name, make] of Object.entries(encoders)) {
    const result = await runOnce("count", make);
    (cpu[name] ??= []).push(result.cpuMicros);
    eventCount = result.events;
    bytesOf[name] = result.bytes;
  }
}
const base = median(cpu["events$ alone"]);
console.log(
  `\n(1) encoder cost per event: one run of ${eventCount.toLocaleString("en")} events (text deltas of 10 chars, thinking, a tool call), CPU time of the whole run`,
);
console.log(
  "encoder       run CPU ms   per event µs   encoder's own µs/event   vs events$ alone   bytes written",
);
for (const [name, samples] of Object.entries(cpu)) {
  const ms = median(samples) / 1000;
  const perEvent = median(samples) / eventCount;
  const own = (median(samples) - base) / eventCount;
  console.log(
    `${name.padEnd(13)} ${ms.toFixed(1).padStart(10)}   ${perEvent.toFixed(2).padStart(12)}   ${(name === "events$ alone" ? "—" : own.toFixed(2)).padStart(22)}   ${(median(samples) / base).toFixed(2).padStart(15)}x   ${(bytesOf[name] ?? 0).toLocaleString("en").padStart(13)}`,
  );
}

// --- (2) provider's first delta → client's first text chunk ------------------------------------

/** A provider that notes when it hands out its first text delta. */
function timedProvider(stamps: { firstDelta?: number }): Provider {
  return {
    id: "timed",
    model: "timed",
    async *stream(): AsyncIterable<ProviderEvent> {
      const inner = leanScripted([
        { text: "Hello from the model, streaming a few words.", chunkSize: 8, usage: stepUsage },
      ]);
      for await (const event of inner.stream(
        { systemPrompt: "", tools: [], messages: [] },
        new AbortController().signal,
      )) {
        if (event.type === "text_delta" && stamps.firstDelta === undefined)
          stamps.firstDelta = performance.now();
        yield event;
      }
    },
  };
}

{
  const stamps: { firstDelta?: number } = {};
  const host = createSessionHost({
    agent: () => ({ provider: timedProvider(stamps) }),
    basePath: "/api",
    authorize: "none-local-only",
  });
  const server = await serveNode(host.handle);
  const latencies: number[] = [];
  const total = Math.max(30, runs * 10);
  for (let i = 0; i < total + 3; i++) {
    stamps.firstDelta = undefined;
    const response = await fetch(`${server.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: `latency-${i}`,
        messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "hi" }] }],
      }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let firstChunk: number | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (firstChunk === undefined && text.includes('"type":"text-delta"')) firstChunk = performance.now();
    }
    if (i >= 3 && firstChunk !== undefined && stamps.firstDelta !== undefined)
      latencies.push(firstChunk - stamps.firstDelta);
  }
  await host.close();
  await server.close();
  latencies.sort((a, b) => a - b);
  console.log(
    `\n(2) provider's first text delta → the client's first text-delta chunk, AI SDK stream over HTTP on 127.0.0.1 (fetch), ${latencies.length} requests: median ${median(latencies).toFixed(2)} ms, p90 ${latencies[Math.floor(latencies.length * 0.9)].toFixed(2)} ms, min ${latencies[0].toFixed(2)} ms`,
  );
}

// --- (3) 1,000 concurrent open streams --------------------------------------------------------

{
  const STREAMS = 1000;
  const WORDS = 20;
  const DELAY_MS = 400;
  const expected = Array.from({ length: WORDS }, (_, i) => `w${i} `).join("");
  const host = createSessionHost({
    agent: () => ({
      provider: leanScripted([{ text: expected, chunkSize: 4, delayMs: DELAY_MS, usage: stepUsage }]),
    }),
    basePath: "/api",
    authorize: "none-local-only",
  });
  const server = await serveNode(host.handle);
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  let peakHeap = heapBefore;
  let open = 0;
  let peakOpen = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 20);
  const started = performance.now();
  let chunks = 0;
  const results = await Promise.all(
    Array.from({ length: STREAMS }, async (_, i) => {
      // Connections arrive over half a second (100 every 50 ms), not in one burst past the listen backlog.
      await new Promise((resolve) => setTimeout(resolve, Math.floor(i / 100) * 50));
      const response = await fetch(`${server.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id: `many-${i}`,
          messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "hi" }] }],
        }),
      });
      open++;
      peakOpen = Math.max(peakOpen, open);
      const body = await response.text();
      open--;
      const frames = body.split("\n\n").filter((f) => f.startsWith("data: {"));
      chunks += frames.length;
      const parsed = frames.map(
        (f) => JSON.parse(f.slice(6)) as { type: string; delta?: string; finishReason?: string },
      );
      const text = parsed
        .filter((c) => c.type === "text-delta")
        .map((c) => c.delta)
        .join("");
      return text === expected && parsed.at(-1)?.finishReason === "stop";
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const complete = results.filter(Boolean).length;
  await host.close();
  await server.close();
  console.log(
    `\n(3) ${STREAMS.toLocaleString("en")} concurrent chat streams (one process: host and clients), ${WORDS} words each in deltas ${DELAY_MS} ms apart (each stream ~${(((expected.length / 4) * DELAY_MS) / 1000).toFixed(0)} s), connecting over 0.5 s: ${peakOpen} open at once, ${complete}/${STREAMS} complete and exact (none lost), ${chunks.toLocaleString("en")} chunks in ${seconds.toFixed(2)} s = ${Math.round(chunks / seconds).toLocaleString("en")} chunks/s; peak heap +${((peakHeap - heapBefore) / 1024 / 1024).toFixed(1)} MB (${((peakHeap - heapBefore) / STREAMS / 1024).toFixed(1)} KB per open stream, clients' buffers included)`,
  );
  if (complete !== STREAMS) process.exitCode = 1;
}

// --- (4) a durable thread: per-turn cost through the host against the durable client alone ---

{
  const { findRestateServerBinary } = await import("../restate.js");
  if (!findRestateServerBinary()) {
    console.log("\n(4) durable threads: skipped (no restate-server binary)");
  } else {
    await durableFigure();
  }
}

async function durableFigure(): Promise<void> {
  const { z } = await import("zod");
  const { defineTool, scripted } = await import("../index.js");
  const { createAgentServices, createSessionClient, registerDeployment, serveAgents, startRestateServer } =
    await import("../restate.js");
  const TURNS = 10;
  const noop = defineTool({
    name: "noop",
    description: "Does nothing",
    parameters: z.object({ turn: z.number() }),
    readOnly: true,
    execute: ({ turn }) => `ok ${turn}`,
  });
  // One instant tool call per turn, then an answer: the step is counted from what the model was sent.
  const provider = scripted(
    (request): ScriptedStep => {
      const step = request.messages.filter((m) => m.role === "assistant").length % TURNS;
      return step < TURNS - 1
        ? { toolCalls: [{ id: `c${step}`, name: "noop", arguments: { turn: step } }] }
        : { text: "done" };
    },
    { record: false },
  );
  const restate = await startRestateServer();
  const services = createAgentServices({ agent: { provider, tools: [noop] } });
  const endpoint = await serveAgents({
    services,
    logger: (params, message, ...rest) => {
      if (params.level === "error" && !params.replaying) console.error("[restate]", message, ...rest);
    },
  });
  try {
    await registerDeployment({ adminUrl: restate.adminUrl, uri: endpoint.url });
    const client = createSessionClient({ url: restate.ingressUrl });
    const hosts = await Promise.all(
      [100, 20].map(async (pollIntervalMs) => {
        const host = createSessionHost({
          durable: { url: restate.ingressUrl, pollIntervalMs },
          basePath: "/api",
          authorize: "none-local-only",
        });
        return { pollIntervalMs, host, server: await serveNode(host.handle) };
      }),
    );
    const timed = async (work: () => Promise<unknown>) => {
      const start = performance.now();
      await work();
      return performance.now() - start;
    };
    const alone: number[] = [];
    const through = hosts.map(() => [] as number[]);
    for (let i = -1; i < runs; i++) {
      const direct = await timed(async () => {
        const result = await client.prompt(`direct-${i}`, "go");
        if (result.messages.length !== 2 * TURNS) throw new Error(`${result.messages.length} messages`);
      });
      if (i >= 0) alone.push(direct / TURNS);
      for (const [n, { server }] of hosts.entries()) {
        const viaHost = await timed(async () => {
          const response = await fetch(`${server.url}/api/chat`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              id: `host-${n}-${i}`,
              messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "go" }] }],
            }),
          });
          const body = await response.text();
          if (!body.includes('"finishReason":"stop"')) throw new Error("the host's run did not finish");
        });
        if (i >= 0) through[n].push(viaHost / TURNS);
      }
    }
    const base = median(alone);
    console.log(
      `\n(4) a durable thread (Restate on 127.0.0.1), ${TURNS} one-tool turns per run, wall per turn: the durable client alone (prompt → result) ${base.toFixed(2)} ms; ` +
        hosts
          .map(
            ({ pollIntervalMs }, n) =>
              `through the host (POST /chat → finish), polling every ${pollIntervalMs} ms: ${median(through[n]).toFixed(2)} ms (${(median(through[n]) / base).toFixed(2)}x)`,
          )
          .join("; "),
    );
    for (const { host, server } of hosts) {
      await host.close();
      await server.close();
    }
  } finally {
    await endpoint.close();
    await restate.stop();
  }
}
