// An A2A call's overhead over the same prompt in process: a fresh agent per task on a lean scripted
// model answers one prompt, (1) by `agent.prompt` directly, (2) as an A2A SendMessage through
// `createA2aHandler` on localhost (`serveNode`), driven by the official SDK's client, (3) as the
// same with SendStreamingMessage read to its end. Medians and p90s, and the overhead at the median.
// Run: node --import tsx bench/a2a.ts (npm run bench -- a2a). A2A_CALLS=n sets the calls.
import { Role } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { createA2aHandler } from "../a2a.js";
import { serveNode } from "../http.js";
import { createAgent } from "../index.js";
import { httpFloor } from "./http-floor.js";
import { leanScripted } from "./lean-scripted.js";

const CALLS = Number(process.env.A2A_CALLS ?? 300);
const WARMUP = 30;
const create = () => createAgent({ provider: leanScripted([{ text: "the answer" }]) });

async function timed(run: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const started = performance.now();
    await run();
    if (i >= WARMUP) samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}
const at = (s: number[], q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;

const direct = await timed(async () => {
  const agent = create();
  await agent.prompt("go");
  agent.stop();
});

// Each message opens a new context, so each task gets a fresh agent, as in the direct case.
const handler = createA2aHandler({
  card: { name: "bench", description: "Answers" },
  agent: create,
  authorize: "none-local-only",
});
const server = await serveNode(handler);
const client = await new ClientFactory().createFromUrl(server.url);
const request = () => ({
  tenant: "",
  message: {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [
      {
        content: { $case: "text" as const, value: "go" },
        metadata: undefined,
        filename: "",
        mediaType: "text/plain",
      },
    ],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});
const send = await timed(() => client.sendMessage(request()));
const stream = await timed(async () => {
  for await (const _event of client.sendMessageStream(request()));
});
await handler.close();
await server.close();

const floor = await httpFloor(CALLS);
const line = (name: string, s: number[]) =>
  `${name}: median ${at(s, 0.5).toFixed(2)} ms · p90 ${at(s, 0.9).toFixed(2)} ms` +
  (s === direct
    ? ""
    : ` · overhead at the median ${(at(s, 0.5) - at(direct, 0.5)).toFixed(2)} ms` +
      ` (${(at(s, 0.5) / at(floor, 0.5)).toFixed(1)}× the HTTP floor)`);
console.log(`One prompt, ${CALLS} calls each:`);
console.log(
  `  floor: one fetch POST to a localhost JSON handler: median ${at(floor, 0.5).toFixed(2)} ms · p90 ${at(floor, 0.9).toFixed(2)} ms`,
);
console.log(line("  in process (agent.prompt)", direct));
console.log(line("  A2A SendMessage, JSON-RPC on localhost", send));
console.log(line("  A2A SendStreamingMessage, SSE on localhost", stream));
