// Durable sessions on Restate (agent-machine/restate) against the same agent in process: the cost
// of journaling a turn, many sessions at once, and how soon a fresh server completes its first run.
// Needs the restate-server binary (@restatedev/restate-server-linux-x64, a devDependency); without
// it the figures are skipped with a note, never failed.
import type { LoggerTransport } from "@restatedev/restate-sdk";
import { z } from "zod";
import { createAgent, type AgentOptions, defineTool, type ScriptedStep, scripted } from "../index.js";
import {
  createAgentServices,
  createSessionClient,
  findRestateServerBinary,
  registerDeployment,
  type RestateServer,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { runFloor, serveFloors } from "./durable-floors.js";
import { type BenchResult, benchRuns, median } from "./harness.js";

/** Turns of one measured run: the model asks for one instant tool each turn, then answers. */
const TURNS = 20;
const CONCURRENT_SESSIONS = 100;
const TURNS_PER_SESSION = 5;
/** Turns the service runs between the fresh and the warm measurement (200 runs). */
const WARM_TURNS = 4_000;

const quiet: LoggerTransport = (params, message, ...rest) => {
  if (params.level === "error" && !params.replaying) console.error("[restate]", message, ...rest);
};

/** `turns` model calls: one instant tool call each, then a short answer (steps from what the model was sent). */
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

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** Per-turn times of interleaved runs: durable, the same agent in process, and the two floors. */
interface OneSession {
  runs: number;
  durable: number;
  local: number;
  same: number;
  minimal: number;
  /** Each run's durable time over the minimal journal's in the same iteration. */
  paired: number[];
}

async function measureOneSession(
  client: ReturnType<typeof createSessionClient>,
  ingress: string,
  prefix: string,
): Promise<OneSession> {
  const durableRuns: number[] = [];
  const localRuns: number[] = [];
  const sameRuns: number[] = [];
  const minimalRuns: number[] = [];
  // Pairs cancel a machine that drifts between iterations (other work on the same cores).
  const paired: number[] = [];
  const runs = benchRuns();
  for (let i = -1; i < runs; i++) {
    const durable = await timed(async () => {
      const result = await client.prompt(`${prefix}-${i}`, "go");
      if (result.messages.length !== 2 * TURNS)
        throw new Error(`durable run: ${result.messages.length} messages`);
    });
    const local = await timed(async () => {
      const agent = createAgent(benchAgent(TURNS));
      await agent.prompt("go");
      if (agent.messages.length !== 2 * TURNS)
        throw new Error(`local run: ${agent.messages.length} messages`);
    });
    const same = await timed(() => runFloor(ingress, "FloorSameJournal", `${prefix}-${i}`, TURNS));
    const minimal = await timed(() => runFloor(ingress, "FloorMinimalJournal", `${prefix}-${i}`, TURNS));
    if (i >= 0) {
      durableRuns.push(durable / TURNS);
      localRuns.push(local / TURNS);
      sameRuns.push(same / TURNS);
      minimalRuns.push(minimal / TURNS);
      paired.push(durable / minimal);
    }
  }
  return {
    runs,
    durable: median(durableRuns),
    local: median(localRuns),
    same: median(sameRuns),
    minimal: median(minimalRuns),
    paired,
  };
}

function oneSessionResults(m: OneSession, when: string): BenchResult[] {
  const { runs } = m;
  return [
    {
      name: `(r) durable: ${TURNS} one-tool turns, one session, ${when}`,
      unit: "ms/turn",
      ours: m.durable,
      runs,
      note: `wall; ${(m.durable / m.minimal).toFixed(2)}× the minimal journal (paired: median ${median(
        m.paired,
      ).toFixed(2)}×, ${Math.min(...m.paired).toFixed(2)}–${Math.max(...m.paired).toFixed(2)}), ${(
        m.durable / m.same
      ).toFixed(2)}× the bare object with the inbox call`,
    },
    {
      name: `(r) floor: bare Restate object, 2 ctx.run + inbox call + 1 write per turn, ${when}`,
      unit: "ms/turn",
      ours: m.same,
      runs,
      note: "the journal a durable turn made before the inbox doorbell",
    },
    {
      name: `(r) floor: bare Restate object, 2 ctx.run + 1 write per turn (minimal journal), ${when}`,
      unit: "ms/turn",
      ours: m.minimal,
      runs,
      note: "what any durable turn costs: a model step, a tool step, the transcript",
    },
    {
      name: `(r) same agent in process, ${TURNS} one-tool turns, ${when}`,
      unit: "ms/turn",
      ours: m.local,
      runs,
    },
    {
      name: `(r) durable overhead per turn, ${when}`,
      unit: "ms/turn",
      ours: m.durable - m.local,
      runs,
      note: `durable ${m.durable.toFixed(2)} − in process ${m.local.toFixed(3)}`,
    },
  ];
}

export async function run(): Promise<BenchResult[]> {
  if (!findRestateServerBinary()) {
    console.log("skipped (no restate-server binary: install @restatedev/restate-server-linux-x64) … ");
    return [];
  }
  const results: BenchResult[] = [];
  let restate: RestateServer | undefined;
  const servers: { close(): Promise<void> }[] = [];
  try {
    // (r) server start to first completed run: a fresh server, the services registered, one run.
    const started = performance.now();
    restate = await startRestateServer();
    const serverReady = performance.now() - started;
    const services = createAgentServices({
      agent: (id) => benchAgent(id.startsWith("many") ? TURNS_PER_SESSION : TURNS),
    });
    const server = await serveAgents({ services, logger: quiet });
    servers.push(server);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
    const floors = await serveFloors();
    servers.push(floors);
    await registerDeployment({ adminUrl: restate.adminUrl, uri: floors.url });
    const ingress = restate.ingressUrl;
    const client = createSessionClient({ url: ingress });
    const first = await client.prompt("first", "go");
    const toFirstRun = performance.now() - started;
    if (first.reason !== "stop") throw new Error(`the first run ended with ${first.reason}`);
    results.push({
      name: "(r) durable: server start to first completed run",
      unit: "ms",
      ours: toFirstRun,
      runs: 1,
      note: `server serving after ${serverReady.toFixed(0)} ms; then register, one ${TURNS}-turn run`,
    });

    // (r) one session, one-tool turns: durable against the same agent in process, and against bare
    // Restate objects doing the same journal and the minimal one (the floors), interleaved. Measured
    // twice: in the fresh process, and again once the service has run WARM_TURNS turns (the agent's
    // code is far bigger than a floor's, and V8 is still optimizing it in the first thousand turns).
    const fresh = await measureOneSession(client, ingress, "fresh");
    results.push(...oneSessionResults(fresh, "fresh process"));
    for (let i = 0; i < WARM_TURNS / TURNS; i++) await client.prompt(`warm-up-${i}`, "go");
    const warm = await measureOneSession(client, ingress, "warm");
    results.push(...oneSessionResults(warm, `after ${WARM_TURNS.toLocaleString("en-US")} turns`));

    // (r) many sessions at once, each a run of a few turns, against the bare objects (interleaved).
    const walls: number[] = [];
    const sameWalls: number[] = [];
    const minimalWalls: number[] = [];
    const many = (run: (n: number) => Promise<unknown>) =>
      timed(() => Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, n) => run(n))));
    for (let i = -1; i < Math.min(benchRuns(), 3); i++) {
      const wall = await timed(async () => {
        const all = await Promise.all(
          Array.from({ length: CONCURRENT_SESSIONS }, (_, n) => client.prompt(`many-${i}-${n}`, "go")),
        );
        const bad = all.find((r) => r.reason !== "stop" || r.messages.length !== 2 * TURNS_PER_SESSION);
        if (bad)
          throw new Error(`a concurrent run ended with ${bad.reason}, ${bad.messages.length} messages`);
      });
      const same = await many((n) =>
        runFloor(ingress, "FloorSameJournal", `many-${i}-${n}`, TURNS_PER_SESSION),
      );
      const minimal = await many((n) =>
        runFloor(ingress, "FloorMinimalJournal", `many-${i}-${n}`, TURNS_PER_SESSION),
      );
      if (i >= 0) {
        walls.push(wall);
        sameWalls.push(same);
        minimalWalls.push(minimal);
      }
    }
    const rate = (ms: number) => (CONCURRENT_SESSIONS / ms) * 1000;
    const wall = median(walls);
    const sameWall = median(sameWalls);
    const minimalWall = median(minimalWalls);
    results.push(
      {
        name: `(r) durable: ${CONCURRENT_SESSIONS} concurrent sessions × ${TURNS_PER_SESSION} turns`,
        unit: "ms",
        ours: wall,
        runs: walls.length,
        note: `wall; ${rate(wall).toFixed(1)} sessions/s, ${(
          (CONCURRENT_SESSIONS * TURNS_PER_SESSION * 1000) /
          wall
        ).toFixed(0)} turns/s; ${(rate(wall) / rate(sameWall)).toFixed(2)}× the bare object's rate`,
      },
      {
        name: `(r) floor: bare object (same journal), ${CONCURRENT_SESSIONS} concurrent × ${TURNS_PER_SESSION} turns`,
        unit: "ms",
        ours: sameWall,
        runs: sameWalls.length,
        note: `wall; ${rate(sameWall).toFixed(1)} sessions/s`,
      },
      {
        name: `(r) floor: bare object (minimal journal), ${CONCURRENT_SESSIONS} concurrent × ${TURNS_PER_SESSION} turns`,
        unit: "ms",
        ours: minimalWall,
        runs: minimalWalls.length,
        note: `wall; ${rate(minimalWall).toFixed(1)} sessions/s`,
      },
    );
    return results;
  } finally {
    for (const server of servers) await server.close();
    await restate?.stop();
  }
}
