// What each part of the design costs per turn in bare XState, measured in one process beside
// agent-machine and pi-agent-core on the same 2,000 one-tool turns (the workload of figure (a)).
//   node --expose-gc --import tsx bench/turn-floors.ts      (BENCH_RUNS=n for more rounds)
import { benchRuns, printPerTurn, rotating } from "./harness.js";
import { runDesignFloor, runOurs, runPi, TURNS } from "./turn-overhead.bench.js";

const samples = await rotating(
  {
    "pi-agent-core": () => runPi(),
    "agent-machine": () => runOurs(),
    "bare XState: promise actor per call": () =>
      runDesignFloor(TURNS, { call: "promise", restingChecks: false }),
    "… machine actor per call": () => runDesignFloor(TURNS, { call: "machine", restingChecks: false }),
    "… machine actor per call, resting checks": () =>
      runDesignFloor(TURNS, { call: "machine", restingChecks: true }),
  },
  benchRuns(),
  2,
);
printPerTurn(samples, TURNS);
