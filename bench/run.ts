// Runs every bench/*.bench.ts file (or those whose name contains one of the arguments) and prints
// one table. Usage: npm run bench [-- turn deltas] [-- --json]. BENCH_RUNS=n sets the runs per figure.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  type BenchModule,
  type BenchResult,
  benchRuns,
  formatTable,
  gcExposed,
  machineDescription,
} from "./harness.js";
import { piName } from "./pi-adapter.js";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const json = args.includes("--json");
const filters = args.filter((arg) => !arg.startsWith("--"));

const files = readdirSync(here)
  .filter((name) => name.endsWith(".bench.ts"))
  .filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
  .sort();

// Figures that are not comparisons with pi-agent-core: scripts that print their own report.
const reports = [
  "a2a.ts",
  "acp.ts",
  "cli-render.ts",
  "cold-start.ts",
  "compaction.ts",
  "context-window.ts",
  "fallback.ts",
  "frontends.ts",
  "host-memory.ts",
  "mcp-client.ts",
  "mcp-server.ts",
  "nesting.ts",
  "output.ts",
  "provider-cache.ts",
  "providers.ts",
  "telemetry.ts",
].filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)));

if (files.length === 0 && reports.length === 0) {
  console.error(`No bench file matches ${filters.join(", ")}`);
  process.exit(1);
}

// The pi column is the release the running Node supports (pi-adapter.ts): 1.x on Node ≥ 22.19.
console.log(`agent-machine benchmarks vs ${piName} · ${machineDescription()}`);
console.log(
  `${benchRuns()} measured runs per figure (medians) · load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}${gcExposed() ? "" : " · WARNING: no --expose-gc, run through `npm run bench`"}`,
);

const results: BenchResult[] = [];
const failures: string[] = [];
for (const file of files) {
  const started = Date.now();
  process.stdout.write(`running ${file} … `);
  try {
    const module = (await import(pathToFileURL(join(here, file)).href)) as Partial<BenchModule>;
    if (typeof module.run !== "function") throw new Error("exports no run() function");
    const figures = await module.run();
    results.push(...figures);
    console.log(`${((Date.now() - started) / 1000).toFixed(1)} s`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    failures.push(`${file}: ${message}`);
    console.log(`FAILED: ${message}`);
  }
}

console.log();
// Figures are named "(a) …", "(b) …": sorting by name lists them in the issue's order.
const letter = (result: BenchResult) => /^\((\w)\)/.exec(result.name)?.[1] ?? "~";
results.sort((x, y) => letter(x).localeCompare(letter(y)));
console.log(formatTable(results));
if (json) {
  console.log(
    JSON.stringify(
      { machine: machineDescription(), node: process.versions.node, pi: piName, results },
      null,
      2,
    ),
  );
}
if (failures.length) {
  console.error(`\n${failures.length} bench file(s) failed:\n${failures.join("\n")}`);
  process.exitCode = 1;
}

for (const report of reports) {
  console.log(`\n── ${report} ──`);
  const { status } = spawnSync(process.execPath, ["--import", "tsx", join(here, report)], {
    stdio: "inherit",
  });
  if (status !== 0) {
    console.error(`${report} failed (exit status ${status})`);
    process.exitCode = 1;
  }
}
