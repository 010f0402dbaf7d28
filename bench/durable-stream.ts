// Durable threads streaming through the session host (issue 37 item 3), a report printed by
// `npx tsx bench/durable-stream.ts` (BENCH_RUNS=n sets the runs per figure, default 21):
// (F3) the provider's first text delta → the HTTP client's first text chunk on a durable thread,
//      localhost, median and p90: with the serving process's live channel, and without (the
//      committed events from Restate only, polled every 100 ms);
// (T)  a durable turn through the host (POST /chat → finish) against the durable client alone
//      (prompt → result), ten one-tool turns per run, polling every 100 ms, with and without the
//      live channel.
// Restate, the service, the host and the client all run on 127.0.0.1 (service, host and client in
// this process, so one clock times the provider and the client).
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { createSessionHost, serveNode } from "../http.js";
import { defineTool, type ScriptedStep, scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  findRestateServerBinary,
  registerDeployment,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { machineDescription, median } from "./harness.js";

const runs = Number(process.env.BENCH_RUNS ?? 21);
const TURNS = 10;
if (!findRestateServerBinary()) {
  console.log("durable streaming: skipped (no restate-server binary)");
  process.exit(0);
}
console.log(`durable threads through the session host · ${machineDescription()} · ${runs} runs per figure`);

const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  parameters: z.object({ turn: z.number() }),
  readOnly: true,
  execute: ({ turn }) => `ok ${turn}`,
});
/** When the provider handed over the first text delta of each session's answer. */
const firstDelta = new Map<string, number>();
// "stream": a tool call, then an answer in 40 deltas 10 ms apart. "turns": ten one-tool turns.
const provider = scripted(
  (request): ScriptedStep => {
    const first = request.messages.find((m) => m.role === "user");
    const kind = typeof first?.content === "string" ? first.content : "";
    const step = request.messages.filter((m) => m.role === "assistant").length;
    if (kind === "stream") {
      return step === 0
        ? { toolCalls: [{ id: "s0", name: "noop", arguments: { turn: 0 } }] }
        : { text: "word ".repeat(40), chunkSize: 5, delayMs: 10 };
    }
    return step < TURNS - 1
      ? { toolCalls: [{ id: `c${step}`, name: "noop", arguments: { turn: step } }] }
      : { text: "done" };
  },
  { record: false },
);

const restate = await startRestateServer();
const services = createAgentServices({ agent: { provider, tools: [noop] } });
// The agent publishes each provider delta as it arrives: its first text delta is the provider's.
services.events$.subscribe(({ sessionId, event }) => {
  if (event.type === "message_update" && event.kind === "text_delta" && !firstDelta.has(sessionId)) {
    firstDelta.set(sessionId, performance.now());
  }
});
const endpoint = await serveAgents({
  services,
  logger: (params, message, ...rest) => {
    if (params.level === "error" && !params.replaying) console.error("[restate]", message, ...rest);
  },
});
await registerDeployment({ adminUrl: restate.adminUrl, uri: endpoint.url });
const client = createSessionClient({ url: restate.ingressUrl });
const hosts = await Promise.all(
  [
    { name: "live channel", live: [endpoint.liveUrl!] },
    { name: "committed events only", live: [] },
  ].map(async ({ name, live }) => {
    const host = createSessionHost({
      durable: { url: restate.ingressUrl, pollIntervalMs: 100, live },
      authorize: "none-local-only",
    });
    return { name, host, server: await serveNode(host.handle) };
  }),
);

/** POSTs a chat turn; resolves with when the first text chunk arrived and when the stream ended. */
async function chat(url: string, id: string, text: string): Promise<{ firstText?: number; end: number }> {
  const response = await fetch(`${url}/chat`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, messages: [{ id: "u", role: "user", parts: [{ type: "text", text }] }] }),
  });
  let firstText: number | undefined;
  let body = "";
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const part = decoder.decode(chunk, { stream: true });
    if (firstText === undefined && part.includes('"type":"text-delta"')) firstText = performance.now();
    body += part;
  }
  if (!body.includes('"finishReason":"stop"'))
    throw new Error(`the run of ${id} did not finish: ${body.slice(-300)}`);
  return { ...(firstText !== undefined && { firstText }), end: performance.now() };
}

const percentile = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};
const batch = Date.now();
const f3 = hosts.map(() => [] as number[]);
const through = hosts.map(() => [] as number[]);
const alone: number[] = [];
for (let i = -2; i < runs; i++) {
  for (const [n, { server }] of hosts.entries()) {
    const id = `f3-${batch}-${n}-${i}`;
    const { firstText } = await chat(server.url, id, "stream");
    if (i >= 0) f3[n]!.push(firstText! - firstDelta.get(id)!);
  }
  const start = performance.now();
  const result = await client.prompt(`alone-${batch}-${i}`, "turns");
  if (result.messages.length !== 2 * TURNS) throw new Error(`${result.messages.length} messages`);
  if (i >= 0) alone.push((performance.now() - start) / TURNS);
  for (const [n, { server }] of hosts.entries()) {
    const started = performance.now();
    const { end } = await chat(server.url, `turns-${batch}-${n}-${i}`, "turns");
    if (i >= 0) through[n]!.push((end - started) / TURNS);
  }
}
for (const [n, { name }] of hosts.entries()) {
  console.log(
    `(F3) ${name}: provider's first delta → client's first text chunk: median ${median(f3[n]!).toFixed(1)} ms, p90 ${percentile(f3[n]!, 0.9).toFixed(1)} ms`,
  );
}
const base = median(alone);
console.log(`(T) durable client alone (prompt → result): ${base.toFixed(2)} ms per turn`);
for (const [n, { name }] of hosts.entries()) {
  const m = median(through[n]!);
  console.log(
    `(T) through the host, ${name}, polling every 100 ms: ${m.toFixed(2)} ms per turn (${(m / base).toFixed(2)}x)`,
  );
}
for (const { host, server } of hosts) {
  await host.close();
  await server.close();
}
await endpoint.close();
await restate.stop();
process.exit(0);
