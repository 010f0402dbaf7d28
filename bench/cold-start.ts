// Cold start (issue 44, item 1): what a fresh process pays before the agent can answer — every
// serverless cold start, every `npx` run, every test worker. Each variant is a new `node` process,
// the variants taken in turn round by round (so a drift of the machine's speed hits all of them),
// and each figure is the median over rounds of its ratio to the floor in the same round:
//
// - floor: importing our own three dependencies (xstate, rxjs, zod) and doing with them what a
//   first prompt does (a schema parsed, an actor started and stopped, a stream followed);
// - `ai`: the AI SDK's bare import, the other reference the issue names;
// - the main entry and the browser entry: `import("agent-machine")` (resolved through the
//   package's own exports) and one prompt answered by `scripted()`;
// - `--help`: the command, against an empty `node -e 0` (the runtime's own start).
//
// By default the package is this checkout's dist/ (`npm run build` first), the command
// dist/cli/main.js. COLD_PACKED=1 measures the package as an app gets it instead, as the issue
// asks: `npm pack` of a copy of this checkout (its `prepare` builds it), installed offline into a
// fresh app outside the tree with `ai` beside it, the command run through the installed bin. The
// app is kept (its path is printed); COLD_ROOT=<that path> measures it again without packing.
// COLD_ROOT=<dir> measures another build (a checkout, or an app with the package installed) the
// same way; COLD_VS=<dir> adds that build's entries and command to the same rounds, with the
// per-round ratio of this build to that one (the steadiest before/after figure on a noisy machine).
//
// CPU is the child's own process.cpuUsage() at its end (user + system, start-up included): on this
// shared machine it moves far less than wall time, which is shown too (the parent's clock).
// Run: npm run build && node --import tsx bench/cold-start.ts (npm run bench -- cold-start).
// COLD_ROUNDS=n sets the rounds (default 15).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { appLockFile, mustRun, packCheckout } from "../test/package-install-pack.js";

const checkout = join(dirname(fileURLToPath(import.meta.url)), "..");
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
  /** Where the child runs: the build whose `agent-machine` it imports. */
  cwd: string;
  /** The variant this one is a ratio of. */
  against: string;
}

/** A build to measure: a checkout (its dist/) or an app with the package installed. */
interface Build {
  root: string;
  /** The command's script, from `root`. */
  command: string;
}

const module = (code: string) => ["--input-type=module", "-e", code];

function buildAt(root: string): Build {
  const installed = join(root, "node_modules", "agent-machine", "package.json");
  if (existsSync(installed) && !existsSync(join(root, "dist", "index.js"))) {
    return { root, command: join("node_modules", "agent-machine", "bin", "agent-machine.js") };
  }
  const built = join(root, "dist", "index.js");
  if (!existsSync(built))
    throw new Error(`no ${built}: run \`npm run build\` first (the bench imports the package's entries)`);
  const sources = join(root, "index.ts");
  if (existsSync(sources) && statSync(sources).mtimeMs > statSync(built).mtimeMs)
    console.warn(`warning: ${root}/dist is older than index.ts: \`npm run build\` to measure the sources`);
  return { root, command: join("dist", "cli", "main.js") };
}

/**
 * COLD_PACKED: the tarball of this checkout, installed offline into a fresh app (with zod, its peer),
 * and `ai` linked in beside it from this checkout (its own dependencies stay where they are).
 */
async function packedApp(): Promise<string> {
  const work = mkdtempSync(join(tmpdir(), "agent-machine-cold-"));
  const packed = await packCheckout(work);
  const app = join(work, "app");
  mkdirSync(app);
  const tarball = `file:../${packed.filename}`;
  const dependencies = { "agent-machine": tarball, zod: "*" };
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "app", private: true, type: "module", dependencies }),
  );
  writeFileSync(join(app, "package-lock.json"), JSON.stringify(appLockFile(tarball, dependencies)));
  await mustRun("npm", ["ci", "--offline", "--no-audit", "--no-fund"], app);
  symlinkSync(join(checkout, "node_modules", "ai"), join(app, "node_modules", "ai"), "dir");
  console.log(`packed and installed in ${app} (COLD_ROOT=${app} measures it again)`);
  return app;
}

function variants(build: Build, label = ""): Variant[] {
  const { root: cwd } = build;
  return [
    {
      name: `${label}import("agent-machine") + one scripted prompt`,
      args: module(FIRST_PROMPT("agent-machine")),
      cwd,
      against: "floor",
    },
    {
      name: `${label}import("agent-machine/browser") + one scripted prompt`,
      args: module(FIRST_PROMPT("agent-machine/browser")),
      cwd,
      against: "floor",
    },
    {
      name: `${label}agent-machine --help (${build.command})`,
      args: ["--import", `data:text/javascript,process.on("exit",()=>{${REPORT}})`, build.command, "--help"],
      cwd,
      against: "node",
    },
  ];
}

/** One fresh process: its CPU and uptime as it reports them, and its wall time from here. */
function runOnce(variant: Variant): { cpu: number; up: number; wall: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, variant.args, { cwd: variant.cwd, encoding: "utf8" });
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

const root = process.env.COLD_PACKED === "1" ? await packedApp() : (process.env.COLD_ROOT ?? checkout);
const build = buildAt(root);
const other = process.env.COLD_VS ? buildAt(process.env.COLD_VS) : undefined;
const ours = variants(build);
const theirs = other ? variants(other, "vs: ") : [];
const VARIANTS: Variant[] = [
  {
    name: "floor: xstate + rxjs + zod, a prompt's worth of work",
    args: module(FLOOR),
    cwd: root,
    against: "floor",
  },
  {
    name: 'import("ai") (the AI SDK, bare)',
    args: module(`await import("ai"); ${REPORT}`),
    cwd: root,
    against: "floor",
  },
  ...ours.slice(0, 2),
  ...theirs.slice(0, 2),
  { name: "node -e 0 (the runtime's own start)", args: ["-e", REPORT], cwd: root, against: "node" },
  ours[2]!,
  ...theirs.slice(2),
];
const index = (name: string) => VARIANTS.findIndex((variant) => variant.name === name);
const FLOOR_INDEX: Record<string, number> = { floor: 0, node: index("node -e 0 (the runtime's own start)") };

for (const variant of VARIANTS) runOnce(variant); // warm the file cache, not counted
const rounds = Array.from({ length: ROUNDS }, () => VARIANTS.map(runOnce));

console.log(
  `Cold start: ${ROUNDS} rounds, each variant a fresh node ${process.versions.node} process; medians. Package: ${root}`,
);
const ratioOf = (i: number, j: number, key: "cpu" | "wall") =>
  median(rounds.map((round) => round[i]![key] / round[j]![key]));
const rows = VARIANTS.map((variant, i) => {
  const floor = FLOOR_INDEX[variant.against]!;
  const of = (key: "cpu" | "wall") => median(rounds.map((round) => round[i]![key]));
  return {
    variant: variant.name,
    "cpu ms": of("cpu").toFixed(0),
    "wall ms": of("wall").toFixed(0),
    [`cpu × ref`]: i === floor ? "1.00" : ratioOf(i, floor, "cpu").toFixed(2),
    [`wall × ref`]: i === floor ? "1.00" : ratioOf(i, floor, "wall").toFixed(2),
  };
});
console.table(rows);
const ai = index('import("ai") (the AI SDK, bare)');
console.log(
  `× ai (cpu): main entry ${ratioOf(index(ours[0]!.name), ai, "cpu").toFixed(2)}, browser entry ${ratioOf(index(ours[1]!.name), ai, "cpu").toFixed(2)}`,
);
if (other) {
  const vs = ours.map(
    (variant, k) =>
      `${variant.name}: ${ratioOf(index(variant.name), index(theirs[k]!.name), "cpu").toFixed(2)}`,
  );
  console.log(`this build ÷ ${other.root} (cpu, per round): ${vs.join("; ")}`);
  console.log(
    `× ai (cpu), ${other.root}: main entry ${ratioOf(index(theirs[0]!.name), ai, "cpu").toFixed(2)}, browser entry ${ratioOf(index(theirs[1]!.name), ai, "cpu").toFixed(2)}`,
  );
}
console.log(
  "ref: the floor for the entries, node -e 0 for the command. Aims: the entries within 1.2× the floor and 1.5× ai's figure; --help under 100 ms.",
);
