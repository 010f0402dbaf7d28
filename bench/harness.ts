import { availableParallelism, cpus } from "node:os";
import { performance } from "node:perf_hooks";

/**
 * One figure of a benchmark, as `bench/run.ts` prints it. Every `bench/*.bench.ts` file exports
 * `async function run(): Promise<BenchResult[]>`. Lower is better for every figure.
 *
 * @example
 * ```ts
 * const result: BenchResult = {
 *   name: "(a) turn overhead, 2,000 one-tool turns",
 *   unit: "µs/turn",
 *   ours: 95.2,
 *   pi: 41.7,
 *   runs: 5,
 * };
 * ```
 */
export interface BenchResult {
  /** What was measured, on which workload. */
  name: string;
  /** Unit of `ours` and `pi`, e.g. `"µs/turn"`, `"ms"`, `"KB/agent"`. */
  unit: string;
  /** Median for agent-machine. */
  ours: number;
  /** Median for pi-agent-core on the same workload, when the figure is a comparison. */
  pi?: number;
  /** Number of measured runs behind each median (warm-up runs excluded). */
  runs: number;
  /** Anything a reader needs to interpret the figure (a floor, a growth factor, a caveat). */
  note?: string;
}

/** The shape every bench file exports. */
export type BenchModule = { run(): Promise<BenchResult[]> };

/**
 * The median of some samples (the mean of the two middle ones for an even count).
 *
 * @example
 * ```ts
 * median([5, 1, 3]); // 3
 * ```
 */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error("median of no samples");
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * ours / pi, or undefined when there is nothing to compare with.
 *
 * @example
 * ```ts
 * ratio(2, 4); // 0.5
 * ```
 */
export function ratio(ours: number, pi: number | undefined): number | undefined {
  return pi === undefined || pi === 0 ? undefined : ours / pi;
}

/** How many measured runs each benchmark makes; `BENCH_RUNS` overrides the default of 5. */
export function benchRuns(): number {
  const fromEnv = Number(process.env.BENCH_RUNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : 5;
}

/** Runs a full garbage collection when node was started with `--expose-gc`; a no-op otherwise. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/** True when `global.gc()` is available (node `--expose-gc`). */
export function gcExposed(): boolean {
  return typeof (globalThis as { gc?: unknown }).gc === "function";
}

/** Wall-clock and CPU time of one run. CPU time (user + system, all threads) is what the run cost the machine; on a busy machine it is steadier than wall time. */
export interface Sample {
  wallMs: number;
  cpuMs: number;
}

/**
 * Wall and CPU time one async workload takes. No forced garbage collection before it: a full
 * `gc()` shrinks the young generation, and the run after it pays tens of milliseconds of extra
 * scavenges (measured: 10,000 deltas took 3x longer per delta right after a `gc()`). Each run
 * pays for its own garbage and some of the previous run's; alternating the contenders keeps that fair.
 *
 * @example
 * ```ts
 * const { wallMs, cpuMs } = await measure(() => agent.prompt("go"));
 * ```
 */
export async function measure(work: () => Promise<unknown>): Promise<Sample> {
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  await work();
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuStart);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Medians of the wall and CPU times of some samples. */
export function medianSample(samples: readonly Sample[]): Sample {
  return { wallMs: median(samples.map((s) => s.wallMs)), cpuMs: median(samples.map((s) => s.cpuMs)) };
}

/** The two contenders of a side-by-side benchmark: each call is one measured run. */
export interface Contenders<T> {
  ours: () => Promise<T>;
  pi: () => Promise<T>;
}

/**
 * Runs both contenders `warmup` times unmeasured, then `runs` times alternating which goes first
 * (so drift in the machine's state favours neither), and returns the samples of each.
 *
 * @example
 * ```ts
 * const { ours, pi } = await sideBySide({ ours: runOurs, pi: runPi });
 * console.log(medianSample(ours), medianSample(pi));
 * ```
 */
export async function sideBySide<T>(
  contenders: Contenders<T>,
  runs = benchRuns(),
  warmup = 1,
): Promise<{ ours: T[]; pi: T[] }> {
  for (let i = 0; i < warmup; i++) {
    await contenders.ours();
    await contenders.pi();
  }
  const ours: T[] = [];
  const pi: T[] = [];
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) {
      ours.push(await contenders.ours());
      pi.push(await contenders.pi());
    } else {
      pi.push(await contenders.pi());
      ours.push(await contenders.ours());
    }
  }
  return { ours, pi };
}

/**
 * {@link sideBySide} for any number of contenders: each runs `warmup` times unmeasured, then `runs`
 * rounds, the order rotating every round (each contender goes first in turn), so neither the
 * machine's drift nor the garbage one leaves for the next favours anyone.
 *
 * @example
 * ```ts
 * const samples = await rotating({ ours: runOurs, pi: runPi, floor: runFloor });
 * console.log(medianSample(samples.floor));
 * ```
 */
export async function rotating<K extends string, T>(
  contenders: Record<K, () => Promise<T>>,
  runs = benchRuns(),
  warmup = 1,
): Promise<Record<K, T[]>> {
  const names = Object.keys(contenders) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as T[]])) as Record<K, T[]>;
  for (let i = 0; i < warmup; i++) for (const name of names) await contenders[name]();
  for (let round = 0; round < runs; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length]!;
      samples[name].push(await contenders[name]());
    }
  }
  return samples;
}

/**
 * Prints µs per turn (wall and CPU) of each contender's rounds, with its ratio to pi-agent-core's.
 *
 * @example
 * ```ts
 * printPerTurn(await rotating({ "pi-agent-core": runPi, ours: runOurs }, benchRuns(), 2), TURNS);
 * ```
 */
export function printPerTurn(samples: Record<string, readonly Sample[]>, turns: number): void {
  const pi = medianSample(samples["pi-agent-core"] ?? []);
  const width = Math.max(...Object.keys(samples).map((name) => name.length)) + 2;
  console.log(`µs per turn, medians of ${benchRuns()} rounds (2 warm-up rounds), ${turns} one-tool turns`);
  for (const [name, runs] of Object.entries(samples)) {
    const { wallMs, cpuMs } = medianSample(runs);
    const perTurn = (ms: number) => ((ms * 1000) / turns).toFixed(1).padStart(6);
    console.log(
      `${name.padEnd(width)} wall ${perTurn(wallMs)} (${(wallMs / pi.wallMs).toFixed(2)}x pi)   CPU ${perTurn(cpuMs)} (${(cpuMs / pi.cpuMs).toFixed(2)}x pi)`,
    );
  }
}

/**
 * The machine the figures come from: node version, CPU model, number of CPUs.
 *
 * @example
 * ```ts
 * console.log(machineDescription()); // "node v20.20.2 · AMD EPYC · 2 CPUs"
 * ```
 */
export function machineDescription(): string {
  const model = cpus()[0]?.model?.trim() || "unknown CPU";
  return `node ${process.version} · ${model} · ${availableParallelism()} CPUs · ${process.platform}/${process.arch}`;
}

/** Formats a figure with three significant digits (and no exponent for large values). */
export function formatNumber(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return "—";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/**
 * A plain-text table of results: one row per figure with both medians and the ratio ours/pi.
 *
 * @example
 * ```ts
 * console.log(formatTable(results));
 * ```
 */
export function formatTable(results: readonly BenchResult[]): string {
  const header = ["benchmark", "unit", "ours", "pi", "ours/pi", "runs", "note"];
  const rows = results.map((r) => [
    r.name,
    r.unit,
    formatNumber(r.ours),
    formatNumber(r.pi),
    r.pi === undefined ? "—" : `${formatNumber(ratio(r.ours, r.pi))}x`,
    String(r.runs),
    r.note ?? "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i >= 2 && i <= 5 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join(" | ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("-|-"), ...rows.map(line)].join("\n");
}
