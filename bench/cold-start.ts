// Cold start (issue 44, item 1): what a fresh process pays before the agent can answer — every
// serverless cold start, every `npx` run, every test worker. Each variant is a new `node` process,
// the variants taken in turn round by round (so a drift of the machine's speed hits all of them),
// and each figure is the median over rounds of its ratio to the floor in the same round:
//
// - floor: importing our own three dependencies (xstate, rxjs, zod) and doing with them what a
//   first prompt does (a schema parsed, an actor started and stopped, a stream followed);
// - `ai`: the AI SDK's bare import, the other reference the issue names;
// - the main entry and the browser entry: `import("agent-machine")` (resolved to dist/, the
//   package's own exports) and one prompt answered by `scripted()`;
// - `--help`: the command as an installed package runs it (dist/cli/main.js), against an empty
//   `node -e 0` (the runtime's own start).
//
// CPU is the child's own process.cpuUsage() at its end (user + system, start-up included): on this
// shared machine it moves far less than wall time, which is shown too (the parent's clock).
// Run: npm run build && node --import tsx bench/cold-start.ts (npm run bench -- cold-start).
// COLD_ROUNDS=n sets the rounds (default 15).
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// COLD_ROOT measures another build (a checkout or an unpacked tarball with its node_modules) the same way.
const root = process.env.COLD_ROOT ?? join(dirname(fileURLToPath(import.meta.url)), "..");
const ROUNDS = Number(process.env.COLD_ROUNDS ?? 15);

/** The child's report: its CPU and its own clock since its start, in ms. */
const REPORT = `process.stdout.write(JSON.stringify({ cpu: (process.cpuUsage().user + process.cpuUsage().system) / 1000, up: performance.now() }));`;

const FIRST_PROMPT = (entry: string) => `
const { createAgent, scripted } = await import(${JSON.stringify(entry)});
const agent = createAgent({ provider: scripted([{ text: "Hello." }]) });
await agent.prompt("Hi");
if (agent.messages.at(-1)?.role !== "assistant") throw new Error("no answer");
agent.stop();
${REPORT}`;

const FLOOR = `
const [{ createActor, setup }, { Subject, filter, map }, z] = await Promise.all([import("xstate"), import("rxjs"), import("zod")]);
const input = z.object({ text: z.string() }).parse({ text: "Hi" });
const machine = setup({}).createMachine({ initial: "idle", states: { idle: { on: { PROMPT: "running" } }, running: { on: { DONE: "idle" } } } });
const actor = createActor(machine).start();
const events = new Subject();
let answer = "";
events.pipe(filter((e) => e.type === "delta"), map((e) => e.text)).subscribe((t) => (answer += t));
actor.send({ type: "PROMPT", input });
events.next({ type: "delta", text: "Hello." });
actor.send({ type: "DONE" });
actor.stop();
if (answer !== "Hello.") throw new Error("no answer");
${REPORT}`;

interface Variant {
  name: string;
  args: string[];
  /** The variant this one is a ratio of. */
  against: string;
}

const module = (code: string) => ["--input-type=module", "-e", code];
const VARIANTS: Variant[] = [
  { name: "floor: xstate + rxjs + zod, a prompt's worth of work", args: module(FLOOR), against: "floor" },
  {
    name: 'import("ai") (the AI SDK, bare)',
    args: module(`await import("ai"); ${REPORT}`),
    against: "floor",
  },
  {
    name: 'import("agent-machine") + one scripted prompt',
    args: module(FIRST_PROMPT("agent-machine")),
    against: "floor",
  },
  {
    name: 'import("agent-machine/browser") + one scripted prompt',
    args: module(FIRST_PROMPT("agent-machine/browser")),
    against: "floor",
  },
  { name: "node -e 0 (the runtime's own start)", args: ["-e", REPORT], against: "node" },
  {
    name: "agent-machine --help (dist/cli/main.js)",
    args: [
      "--import",
      `data:text/javascript,process.on("exit",()=>{${REPORT}})`,
      "dist/cli/main.js",
      "--help",
    ],
    against: "node",
  },
];
const FLOOR_INDEX: Record<string, number> = { floor: 0, node: 4 };

function checkBuild(): void {
  const built = join(root, "dist", "index.js");
  if (!existsSync(built))
    throw new Error("no dist/: run `npm run build` first (the bench imports the package's entries)");
  const age = statSync(join(root, "index.ts")).mtimeMs - statSync(built).mtimeMs;
  if (age > 0) console.warn("warning: dist/ is older than index.ts: `npm run build` to measure the sources");
}

/** One fresh process: its CPU and uptime as it reports them, and its wall time from here. */
function runOnce(variant: Variant): { cpu: number; up: number; wall: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, variant.args, { cwd: root, encoding: "utf8" });
  const wall = performance.now() - started;
  if (result.status !== 0) throw new Error(`${variant.name} failed: ${result.stderr}`);
  const report = JSON.parse(/\{"cpu".*\}$/m.exec(result.stdout)?.[0] ?? "null") as {
    cpu: number;
    up: number;
  } | null;
  if (!report) throw new Error(`${variant.name} printed no report: ${result.stdout.slice(-200)}`);
  return { ...report, wall };
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

checkBuild();
for (const variant of VARIANTS) runOnce(variant); // warm the file cache, not counted
const rounds = Array.from({ length: ROUNDS }, () => VARIANTS.map(runOnce));

console.log(
  `Cold start: ${ROUNDS} rounds, each variant a fresh node ${process.versions.node} process; medians`,
);
const rows = VARIANTS.map((variant, i) => {
  const floor = FLOOR_INDEX[variant.against]!;
  const of = (key: "cpu" | "wall") => median(rounds.map((round) => round[i]![key]));
  const ratio = (key: "cpu" | "wall") => median(rounds.map((round) => round[i]![key] / round[floor]![key]));
  return {
    variant: variant.name,
    "cpu ms": of("cpu").toFixed(0),
    "wall ms": of("wall").toFixed(0),
    [`cpu × ref`]: i === floor ? "1.00" : ratio("cpu").toFixed(2),
    [`wall × ref`]: i === floor ? "1.00" : ratio("wall").toFixed(2),
  };
});
console.table(rows);
console.log(
  "ref: the floor for the first four rows, node -e 0 for the last two. Aims: the entries within 1.2× the floor and 1.5× ai's figure; --help under 100 ms.",
);
