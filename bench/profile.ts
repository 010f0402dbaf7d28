// A CPU profile of one agent-machine workload, after one warm-up run (module loading and JIT
// warm-up stay out of it):
//   node --expose-gc --import tsx bench/profile.ts turns [2000]    2,000 one-tool turns
//   node --expose-gc --import tsx bench/profile.ts fanout [1500]   one turn of 1,500 parallel 50 ms calls
//   node --expose-gc --import tsx bench/profile.ts floor [2000]    the same turns, the design's shape in bare XState
// It writes bench/profiles/<workload>-<n>.cpuprofile (open it in Chrome DevTools) and prints the
// functions with the most self time (bench/profile-summary.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runFanOut } from "./parallel-tools.bench.js";
import { summarizeProfile } from "./profile-summary.js";
import { runDesignFloor, runOurs as runTurns } from "./turn-overhead.bench.js";

const [workload = "turns", size] = process.argv.slice(2);
const n = size === undefined ? (workload === "fanout" ? 1_500 : 2_000) : Number(size);
const workloads: Record<string, () => Promise<{ cpuMs: number }>> = {
  turns: () => runTurns(n),
  fanout: () => runFanOut(n),
  floor: () => runDesignFloor(n),
};
const work = workloads[workload];
if (!work) throw new Error(`Unknown workload ${workload}: turns, fanout or floor`);

await work();
(globalThis as { gc?: () => void }).gc?.();
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 });
await session.post("Profiler.start");
const started = performance.now();
const sample = await work();
const elapsed = performance.now() - started;
const { profile } = await session.post("Profiler.stop");
session.disconnect();

const dir = join(dirname(fileURLToPath(import.meta.url)), "profiles");
mkdirSync(dir, { recursive: true });
const file = join(dir, `${workload}-${n}.cpuprofile`);
writeFileSync(file, JSON.stringify(profile));
console.log(`${workload} ${n}: ${elapsed.toFixed(0)} ms wall, ${sample.cpuMs.toFixed(0)} ms CPU · ${file}`);
console.log(summarizeProfile(profile, 25));
