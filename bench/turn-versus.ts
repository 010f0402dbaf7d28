// Figure (a) of this checkout against another checkout of agent-machine, in one process and the
// same rotating rounds (with pi-agent-core and the floor), so a change is measured against what it
// changes rather than against a busy machine:
//   git worktree add --detach /tmp/before <commit> && ln -s "$PWD/node_modules" /tmp/before/
//   node --expose-gc --import tsx bench/turn-versus.ts /tmp/before      (BENCH_RUNS=n for more rounds)
// The other checkout shares this one's node_modules (the symlink), so both run the same XState.
import { resolve } from "node:path";
import { benchRuns, printPerTurn, rotating, type Sample } from "./harness.js";
import { runDesignFloor, runOurs, runPi, TURNS } from "./turn-overhead.bench.js";

const [other] = process.argv.slice(2);
if (!other) throw new Error("Usage: bench/turn-versus.ts <path to another agent-machine checkout>");
const theirs = (await import(resolve(other, "bench/turn-overhead.bench.ts"))) as {
  runOurs: (turns?: number) => Promise<Sample>;
};

const samples = await rotating(
  {
    "pi-agent-core": () => runPi(),
    [`other (${other})`]: () => theirs.runOurs(),
    "this checkout": () => runOurs(),
    "floor (bare XState)": () => runDesignFloor(),
  },
  benchRuns(),
  2,
);
printPerTurn(samples, TURNS);
