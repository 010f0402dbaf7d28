// What each part of a durable run's journal costs, with no agent-machine code (issue 44, item 3):
// `npx tsx bench/durable-journal-parts.ts` (ROUNDS=5 by default). Bare Restate virtual objects, all
// served from this process, each doing 100 concurrent sessions × 5 one-tool turns a round, the
// variants interleaved round by round after one warm-up round each; sessions/s as a ratio of the
// minimal journal's in the same run, and CPU per session of this process and of the Restate server.
//  - minimal: two ctx.run and one state write a turn (bench/durable-floors.ts's minimal journal);
//  - + opening drain: the same, and one call to another object as the run starts;
//  - same journal: what a run journals today (bench/durable-floors.ts's "same journal");
//  - without its drain / with tiny slots: that journal less its opening call / with 10-byte slots;
//  - same journal + doorbell race: and each of a turn's two waits raced with a pending awakeable,
//    as the service's pump races every wait of a run with the run's doorbell (durable/restate-pump.ts).
// The last is the floor of a durable run: what it journals and waits on, with nothing run on top.
import { readFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import * as restate from "@restatedev/restate-sdk";
import type { ObjectContext } from "@restatedev/restate-sdk";
import { ensurePromiseWithResolvers } from "../durable/polyfill.js";
import { findRestateServerBinary, registerDeployment, startRestateServer } from "../restate.js";
import { modelAnswer, slotPayload, toolAnswer } from "./durable-floors.js";

const CONCURRENT = 100;
const TURNS = 5;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
if (!findRestateServerBinary()) {
  console.log("durable journal parts: skipped (no restate-server binary)");
  process.exit(0);
}

interface Part {
  label: string;
  /** The run's start and end as a run makes them: record and transcript read, record written. */
  record: boolean;
  /** One call to the inbox object as the run starts (a second invocation). */
  drain: boolean;
  /** What a slot written before each wait holds; "none" writes one state key a turn instead. */
  slots: "full" | "tiny" | "none";
  /** Each wait raced with a pending awakeable. */
  race: boolean;
}

const parts: Record<string, Part> = {
  PartsMinimal: { label: "minimal journal", record: false, drain: false, slots: "none", race: false },
  PartsMinimalDrain: {
    label: "minimal + opening drain",
    record: false,
    drain: true,
    slots: "none",
    race: false,
  },
  PartsSame: { label: "same journal", record: true, drain: true, slots: "full", race: false },
  PartsSameNoDrain: {
    label: "same journal, no drain",
    record: true,
    drain: false,
    slots: "full",
    race: false,
  },
  PartsSameTiny: { label: "same journal, tiny slots", record: true, drain: true, slots: "tiny", race: false },
  PartsSameRace: {
    label: "same journal + doorbell race",
    record: true,
    drain: true,
    slots: "full",
    race: true,
  },
};

const inbox = restate.object({
  name: "PartsInbox",
  handlers: {
    drain: async (ctx: ObjectContext): Promise<unknown[]> => {
      const queue = (await ctx.get<unknown[]>("steering")) ?? [];
      if (queue.length) ctx.clear("steering");
      return queue;
    },
  },
});

function partObject(name: string, part: Part) {
  return restate.object({
    name,
    handlers: {
      run: async (ctx: ObjectContext, turns: number): Promise<number> => {
        if (part.record) {
          await ctx.get("run");
          await ctx.get("m/0");
          ctx.set("run", { state: "running", runId: "inv_floor", turn: 0, slotted: true });
        }
        if (part.drain) await ctx.objectClient(inbox, ctx.key).drain();
        const bell = part.race ? ctx.awakeable<unknown>().promise : undefined;
        const wait = <T>(step: restate.RestatePromise<T>) =>
          bell ? restate.RestatePromise.race([step, bell]) : step;
        const slot = (k: number, turn: number, beforeTool: boolean) => {
          if (part.slots !== "none")
            ctx.set(`s/${k}`, part.slots === "full" ? slotPayload(turn, beforeTool) : { turn });
        };
        let k = 0;
        for (let turn = 0; turn < turns; turn++) {
          slot(k++, turn, false);
          await wait(ctx.run(`model:${turn}`, async () => modelAnswer(turn)));
          slot(k++, turn, true);
          await wait(ctx.run(`tool:c${turn}`, async () => toolAnswer(turn)));
          if (part.slots === "none") ctx.set(`m/${turn}`, { turn });
        }
        if (part.record) {
          ctx.set(
            "m/0",
            Array.from({ length: 2 * turns + 1 }, (_, turn) => modelAnswer(turn)),
          );
          ctx.set("run", { state: "idle", runId: "inv_floor", count: 2 * turns + 1, slotCount: k });
        }
        return turns;
      },
    },
  });
}

ensurePromiseWithResolvers();
const handler = restate.createEndpointHandler({
  services: [inbox, ...Object.entries(parts).map(([name, part]) => partObject(name, part))],
  logger: () => {},
});
const server = http2.createServer(handler);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const restateServer = await startRestateServer();
await registerDeployment({
  adminUrl: restateServer.adminUrl,
  uri: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
});

/** The Restate server's CPU ms so far (user + system, from /proc; 0 where there is none). */
function serverCpuMs(): number {
  try {
    const fields = readFileSync(`/proc/${restateServer.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

async function runOnce(name: string, key: string): Promise<void> {
  const response = await fetch(`${restateServer.ingressUrl}/${name}/${key}/run`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(TURNS),
  });
  const text = await response.text();
  if (!response.ok || Number(text) !== TURNS) throw new Error(`${name} answered ${response.status}: ${text}`);
}

async function round(name: string, tag: string) {
  const start = performance.now();
  const cpu = process.cpuUsage();
  const server = serverCpuMs();
  await Promise.all(Array.from({ length: CONCURRENT }, (_, n) => runOnce(name, `${tag}-${n}`)));
  const used = process.cpuUsage(cpu);
  return {
    wall: performance.now() - start,
    cpu: (used.user + used.system) / 1000 / CONCURRENT,
    server: (serverCpuMs() - server) / CONCURRENT,
  };
}

const batch = Date.now();
for (const name of Object.keys(parts)) await round(name, `${batch}-warm`);
const results = new Map<string, { wall: number[]; cpu: number[]; server: number[] }>();
for (let i = 0; i < ROUNDS; i++) {
  for (const name of Object.keys(parts)) {
    const m = await round(name, `${batch}-${i}`);
    const kept = results.get(name) ?? { wall: [], cpu: [], server: [] };
    kept.wall.push(m.wall);
    kept.cpu.push(m.cpu);
    kept.server.push(m.server);
    results.set(name, kept);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
// On a machine the server and the service share, sessions/s is bounded by their CPU together.
const cpuBoth = (name: string) => median(results.get(name)!.cpu) + median(results.get(name)!.server);
const rate = (name: string) => (CONCURRENT / median(results.get(name)!.wall)) * 1000;
console.log(
  `${CONCURRENT} concurrent sessions × ${TURNS} one-tool turns, bare objects, medians of ${ROUNDS} rounds:`,
);
for (const [name, part] of Object.entries(parts)) {
  const r = results.get(name)!;
  console.log(
    `  ${part.label.padEnd(30)} ${rate(name).toFixed(0).padStart(5)} sessions/s, ` +
      `${(rate(name) / rate("PartsMinimal")).toFixed(2)}× minimal; CPU a session: ` +
      `service ${median(r.cpu).toFixed(2)} ms, server ${median(r.server).toFixed(2)} ms, ` +
      `both ${(cpuBoth(name) / cpuBoth("PartsMinimal")).toFixed(2)}× minimal's`,
  );
}
server.close();
await restateServer.stop();
process.exit(0);
