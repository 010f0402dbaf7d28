// Figure (b) of this checkout against another checkout of agent-machine, in one process and the
// same rotating rounds (with pi-agent-core), so a change is measured against what it changes
// rather than against a busy machine:
//   mkdir /tmp/before && git archive <commit> | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/
//   node --expose-gc --import tsx bench/fanout-versus.ts /tmp/before [calls]   (BENCH_RUNS=n rounds)
// Prints each contender's median CPU and wall time, and the medians of the per-round ratios (a
// round's contenders run back to back, so their ratio is steadier than the medians' ratio).
import { resolve } from "node:path";
import { benchRuns, median, rotating, type Sample } from "./harness.js";
import { runFanOut, runPiFanOut } from "./parallel-tools.bench.js";

const [other, size] = process.argv.slice(2);
if (!other) throw new Error("Usage: bench/fanout-versus.ts <path to another agent-machine checkout> [calls]");
const calls = size === undefined ? 3_000 : Number(size);
const theirs = (await import(resolve(other, "bench/parallel-tools.bench.ts"))) as {
  runFanOut: (calls: number) => Promise<Sample>;
};

const samples = await rotating(
  {
    pi: () => runPiFanOut(calls),
    before: () => theirs.runFanOut(calls),
    after: () => runFanOut(calls),
  },
  benchRuns(),
  2,
);
const rounds = samples.pi.length;
const perRound = (a: Sample[], b: Sample[], key: keyof Sample) =>
  median(Array.from({ length: rounds }, (_, i) => a[i]![key] / b[i]![key]));
console.log(`${calls} parallel 50 ms calls, ${rounds} rounds (2 warm-up), other = ${other}`);
for (const name of ["pi", "before", "after"] as const) {
  const cpu = median(samples[name].map((s) => s.cpuMs));
  const wall = median(samples[name].map((s) => s.wallMs));
  console.log(
    `${name.padEnd(7)} CPU ${cpu.toFixed(0).padStart(5)} ms (${((cpu * 1000) / calls).toFixed(1)} µs/call)  wall ${wall.toFixed(0).padStart(5)} ms`,
  );
}
console.log(
  `per-round CPU: before/pi ${perRound(samples.before, samples.pi, "cpuMs").toFixed(2)}x  after/pi ${perRound(samples.after, samples.pi, "cpuMs").toFixed(2)}x  after/before ${perRound(samples.after, samples.before, "cpuMs").toFixed(2)}x`,
);
console.log(
  `per-round wall: before/pi ${perRound(samples.before, samples.pi, "wallMs").toFixed(2)}x  after/pi ${perRound(samples.after, samples.pi, "wallMs").toFixed(2)}x  after/before ${perRound(samples.after, samples.before, "wallMs").toFixed(2)}x`,
);
