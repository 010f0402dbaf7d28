// The service's CPU per durable turn (issue 37): `npx tsx bench/durable-cpu.ts`. The agent is served
// from this process and driven by the session client here; Restate runs in its own process, so
// `process.cpuUsage()` around a batch of runs is the service's CPU (and the client's few calls).
// WARMUP runs first (V8 optimises the agent over its first thousand turns), then RUNS measured.
import { z } from "zod";
import { defineTool, type ScriptedStep, scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  findRestateServerBinary,
  registerDeployment,
  serveAgents,
  startRestateServer,
} from "../restate.js";

const TURNS = 10;
const WARMUP = Number(process.env.WARMUP ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
if (!findRestateServerBinary()) {
  console.log("durable CPU: skipped (no restate-server binary)");
  process.exit(0);
}
const noop = defineTool({
  name: "noop",
  description: "Does nothing",
  parameters: z.object({ turn: z.number() }),
  readOnly: true,
  execute: ({ turn }) => `ok ${turn}`,
});
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
await registerDeployment({ adminUrl: restate.adminUrl, uri: endpoint.url });
const client = createSessionClient({ url: restate.ingressUrl });
const batch = Date.now();
for (let i = 0; i < WARMUP; i++) await client.prompt(`warm-${batch}-${i}`, "go");
const perTurn: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const before = process.cpuUsage();
  const result = await client.prompt(`cpu-${batch}-${i}`, "go");
  const used = process.cpuUsage(before);
  if (result.messages.length !== 2 * TURNS) throw new Error(`${result.messages.length} messages`);
  perTurn.push((used.user + used.system) / 1000 / TURNS);
}
perTurn.sort((a, b) => a - b);
const at = (p: number) => perTurn[Math.min(perTurn.length - 1, Math.floor(p * perTurn.length))]!;
console.log(
  `service CPU per durable turn (user + system, ${RUNS} runs of ${TURNS} one-tool turns after ${WARMUP} warm-up runs): median ${at(0.5).toFixed(2)} ms, p10 ${at(0.1).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms`,
);
await endpoint.close();
await restate.stop();
process.exit(0);
