// The service's CPU per durable turn against the bare Restate object's (issues 37 and 44):
// `WARMUP=100 BENCH_RUNS=40 npx tsx bench/durable-cpu.ts`. The agent and the floors
// (bench/durable-floors.ts: bare virtual objects doing a turn's journal) are served from this process
// and driven by clients here; Restate runs in its own process, so `process.cpuUsage()` around a run
// is the service's CPU (and the client's few calls).
//  1. sessions/s in a fresh service: one warm-up round of CONCURRENT × TURNS_PER_SESSION turns
//     (500), then ROUNDS rounds, each interleaved with the same round on the two floors;
//  2. CPU per turn: WARMUP runs first (V8 optimises the agent over its first thousand turns), then
//     RUNS runs of TURNS one-tool turns (default 10; a larger TURNS splits a run's fixed cost from its
//     cost per turn), each followed by a floor run of as many turns.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { type AgentOptions, defineTool, type ScriptedStep, scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  findRestateServerBinary,
  registerDeployment,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { type FloorName, runFloor, serveFloors } from "./durable-floors.js";

const TURNS = Number(process.env.TURNS ?? 10);
const CONCURRENT = 100;
const TURNS_PER_SESSION = 5;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
if (!findRestateServerBinary()) {
  console.log("durable CPU: skipped (no restate-server binary)");
  process.exit(0);
}

/** `turns` model calls: one instant tool call each, then a short answer. */
function benchAgent(turns: number): AgentOptions {
  const noop = defineTool({
    name: "noop",
    description: "Does nothing",
    parameters: z.object({ turn: z.number() }),
    readOnly: true,
    execute: ({ turn }) => `ok ${turn}`,
  });
  const provider = scripted(
    (request): ScriptedStep => {
      const step = request.messages.filter((m) => m.role === "assistant").length;
      return step < turns - 1
        ? { toolCalls: [{ id: `c${step}`, name: "noop", arguments: { turn: step } }] }
        : { text: "done" };
    },
    { record: false },
  );
  return { provider, tools: [noop] };
}

const restate = await startRestateServer();
// Built once: a function that built the agent's tools per session would be measured with it.
const agents = { many: benchAgent(TURNS_PER_SESSION), one: benchAgent(TURNS) };
const services = createAgentServices({ agent: (id) => (id.startsWith("many") ? agents.many : agents.one) });
const endpoint = await serveAgents({
  services,
  logger: (params, message, ...rest) => {
    if (params.level === "error" && !params.replaying) console.error("[restate]", message, ...rest);
  },
});
await registerDeployment({ adminUrl: restate.adminUrl, uri: endpoint.url });
const floors = await serveFloors();
await registerDeployment({ adminUrl: restate.adminUrl, uri: floors.url });
const client = createSessionClient({ url: restate.ingressUrl });
const batch = Date.now();

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const cpuMs = (used: NodeJS.CpuUsage) => (used.user + used.system) / 1000;

/** The Restate server's CPU ms so far (user + system, from /proc; 0 where there is none). */
function serverCpuMs(): number {
  try {
    const fields = readFileSync(`/proc/${restate.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return 0;
  }
}

/** Wall ms, this process's CPU ms and the Restate server's CPU ms of `work`. */
async function measure(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number; server: number }> {
  const cpu = process.cpuUsage();
  const server = serverCpuMs();
  const start = performance.now();
  await work();
  return {
    wall: performance.now() - start,
    cpu: cpuMs(process.cpuUsage(cpu)),
    server: serverCpuMs() - server,
  };
}

/** Starts V8's CPU profiler in this process; `stop` writes bench/profiles/<name>.cpuprofile. */
async function startProfile(): Promise<{ stop(name: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  await session.post("Profiler.start");
  return {
    async stop(name) {
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      const dir = join(dirname(fileURLToPath(import.meta.url)), "profiles");
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${name}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      console.log(`profile: ${file}`);
    },
  };
}

async function durableRound(round: string): Promise<void> {
  const all = await Promise.all(
    Array.from({ length: CONCURRENT }, (_, n) => client.prompt(`many-${batch}-${round}-${n}`, "go")),
  );
  const bad = all.find((r) => r.reason !== "stop" || r.messages.length !== 2 * TURNS_PER_SESSION);
  if (bad) throw new Error(`a concurrent run ended with ${bad.reason}, ${bad.messages.length} messages`);
}
const floorRound = (floor: FloorName, round: string) =>
  Promise.all(
    Array.from({ length: CONCURRENT }, (_, n) =>
      runFloor(restate.ingressUrl, floor, `many-${batch}-${round}-${n}`, TURNS_PER_SESSION),
    ),
  );

// 1. Sessions/s in a fresh service, after one warm-up round (of each).
await durableRound("warm");
await floorRound("FloorSameJournal", "warm");
await floorRound("FloorMinimalJournal", "warm");
const rounds = { durable: [] as number[], same: [] as number[], minimal: [] as number[] };
// CPU per session of each round: this process's (the service, and the clients) and the server's.
const roundCpu = { durable: [] as number[], same: [] as number[], minimal: [] as number[] };
const roundServer = { durable: [] as number[], same: [] as number[], minimal: [] as number[] };
const keep = (kind: keyof typeof rounds, m: { wall: number; cpu: number; server: number }) => {
  rounds[kind].push(m.wall);
  roundCpu[kind].push(m.cpu / CONCURRENT);
  roundServer[kind].push(m.server / CONCURRENT);
};
// PROFILE=rounds: CPU profiles of the first measured durable round (bench/profiles/durable-round.cpuprofile)
// and of the same-journal floor's round after it (same-journal-round.cpuprofile), to compare.
const profileRound = process.env.PROFILE === "rounds" ? await startProfile() : undefined;
for (let i = 0; i < ROUNDS; i++) {
  keep("durable", await measure(() => durableRound(`${i}`)));
  if (i === 0 && profileRound) await profileRound.stop("durable-round");
  const profileSame = i === 0 && profileRound ? await startProfile() : undefined;
  keep("same", await measure(() => floorRound("FloorSameJournal", `${i}`)));
  if (profileSame) await profileSame.stop("same-journal-round");
  keep("minimal", await measure(() => floorRound("FloorMinimalJournal", `${i}`)));
}
const rate = (walls: number[]) => (CONCURRENT / median(walls)) * 1000;
const rates = { durable: rate(rounds.durable), same: rate(rounds.same), minimal: rate(rounds.minimal) };
console.log(
  `sessions/s, ${CONCURRENT} concurrent × ${TURNS_PER_SESSION} turns in a fresh service after one warm-up round (median of ${ROUNDS}): ` +
    `durable ${rates.durable.toFixed(1)}, bare object (same journal) ${rates.same.toFixed(1)}, ` +
    `bare object (minimal journal) ${rates.minimal.toFixed(1)}; durable ${(rates.durable / rates.same).toFixed(2)}× the same journal's, ` +
    `${(rates.durable / rates.minimal).toFixed(2)}× the minimal's`,
);
console.log(
  `CPU per session in those rounds (medians), this process / the Restate server: ` +
    (["durable", "same", "minimal"] as const)
      .map((k) => `${k} ${median(roundCpu[k]).toFixed(2)} / ${median(roundServer[k]).toFixed(2)} ms`)
      .join(", "),
);

// 2. CPU per turn, warm.
for (let i = 0; i < WARMUP; i++) {
  await client.prompt(`warm-${batch}-${i}`, "go");
  await runFloor(restate.ingressUrl, "FloorSameJournal", `warm-${batch}-${i}`, TURNS);
  await runFloor(restate.ingressUrl, "FloorMinimalJournal", `warm-${batch}-${i}`, TURNS);
}
const perTurn = { durable: [] as number[], same: [] as number[], minimal: [] as number[] };
// PROFILE=1 (with node --cpu-prof): the measured durable runs alone (no floors), between two marks.
const profile = process.env.PROFILE === "1";
if (profile) console.log(`profile from ${process.hrtime.bigint() / 1000n}`);
for (let i = 0; i < RUNS; i++) {
  const { cpu } = await measure(async () => {
    const result = await client.prompt(`cpu-${batch}-${i}`, "go");
    if (result.messages.length !== 2 * TURNS) throw new Error(`${result.messages.length} messages`);
  });
  perTurn.durable.push(cpu / TURNS);
  if (profile) continue;
  const same = await measure(() =>
    runFloor(restate.ingressUrl, "FloorSameJournal", `cpu-${batch}-${i}`, TURNS),
  );
  perTurn.same.push(same.cpu / TURNS);
  const minimal = await measure(() =>
    runFloor(restate.ingressUrl, "FloorMinimalJournal", `cpu-${batch}-${i}`, TURNS),
  );
  perTurn.minimal.push(minimal.cpu / TURNS);
}
if (profile) console.log(`profile to ${process.hrtime.bigint() / 1000n}`);
const spread = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
  return `median ${at(0.5).toFixed(2)} ms, p10 ${at(0.1).toFixed(2)} ms, p90 ${at(0.9).toFixed(2)} ms`;
};
console.log(
  `service CPU per durable turn (user + system, ${RUNS} runs of ${TURNS} one-tool turns after ${WARMUP} warm-up runs): ${spread(perTurn.durable)}`,
);
if (!profile) console.log(`bare object (same journal), CPU per turn: ${spread(perTurn.same)}`);
if (!profile) console.log(`bare object (minimal journal), CPU per turn: ${spread(perTurn.minimal)}`);
if (!profile)
  console.log(
    `durable CPU per turn: ${(median(perTurn.durable) / median(perTurn.same)).toFixed(2)}× the same journal's, ` +
      `${(median(perTurn.durable) / median(perTurn.minimal)).toFixed(2)}× the minimal's`,
  );
await endpoint.close();
await floors.close();
await restate.stop();
process.exit(0);
