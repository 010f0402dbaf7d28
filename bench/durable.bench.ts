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
    // Restate objects doing the same journal and the minimal one (the floors), interleaved.
    const durableRuns: number[] = [];
    const localRuns: number[] = [];
    const sameRuns: number[] = [];
    const minimalRuns: number[] = [];
    // Each run's durable time over the minimal journal's in the same iteration: pairs cancel a
    // machine that drifts between iterations (other work on the same cores).
    const pairedRatios: number[] = [];
    const runs = benchRuns();
    for (let i = -1; i < runs; i++) {
      const durable = await timed(async () => {
        const result = await client.prompt(`turns-${i}`, "go");
        if (result.messages.length !== 2 * TURNS)
          throw new Error(`durable run: ${result.messages.length} messages`);
      });
      const local = await timed(async () => {
        const agent = createAgent(benchAgent(TURNS));
        await agent.prompt("go");
        if (agent.messages.length !== 2 * TURNS)
          throw new Error(`local run: ${agent.messages.length} messages`);
      });
      const same = await timed(() => runFloor(ingress, "FloorSameJournal", `turns-${i}`, TURNS));
      const minimal = await timed(() => runFloor(ingress, "FloorMinimalJournal", `turns-${i}`, TURNS));
      if (i >= 0) {
        durableRuns.push(durable / TURNS);
        localRuns.push(local / TURNS);
        sameRuns.push(same / TURNS);
        minimalRuns.push(minimal / TURNS);
        pairedRatios.push(durable / minimal);
      }
    }
    const durablePerTurn = median(durableRuns);
    const localPerTurn = median(localRuns);
    const samePerTurn = median(sameRuns);
    const minimalPerTurn = median(minimalRuns);
    results.push(
      {
        name: `(r) durable: ${TURNS} one-tool turns, one session`,
        unit: "ms/turn",
        ours: durablePerTurn,
        runs,
        note: `wall; ${(durablePerTurn / minimalPerTurn).toFixed(2)}× the minimal journal (paired: median ${median(
          pairedRatios,
        ).toFixed(2)}×, ${Math.min(...pairedRatios).toFixed(2)}–${Math.max(...pairedRatios).toFixed(2)}), ${(
          durablePerTurn / samePerTurn
        ).toFixed(2)}× the bare object with the inbox call`,
      },
      {
        name: `(r) floor: bare Restate object, 2 ctx.run + inbox call + 1 write per turn`,
        unit: "ms/turn",
        ours: samePerTurn,
        runs,
        note: "the journal a durable turn made before the inbox doorbell",
      },
      {
        name: `(r) floor: bare Restate object, 2 ctx.run + 1 write per turn (minimal journal)`,
        unit: "ms/turn",
        ours: minimalPerTurn,
        runs,
        note: "what any durable turn costs: a model step, a tool step, the transcript",
      },
      {
        name: `(r) same agent in process, ${TURNS} one-tool turns`,
        unit: "ms/turn",
        ours: localPerTurn,
        runs,
      },
      {
        name: "(r) durable overhead per turn",
        unit: "ms/turn",
        ours: durablePerTurn - localPerTurn,
        runs,
        note: `durable ${durablePerTurn.toFixed(2)} − in process ${localPerTurn.toFixed(3)}`,
      },
    );

    // (r) many sessions at once, each a run of a few turns, against the bare objects (interleaved).
    const walls: number[] = [];
    const sameWalls: number[] = [];
    const minimalWalls: number[] = [];
    const many = (run: (n: number) => Promise<unknown>) =>
      timed(() => Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, (_, n) => run(n))));
    for (let i = -1; i < Math.min(runs, 3); i++) {
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
