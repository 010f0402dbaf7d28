// What one level of nesting costs per turn (issue 39): the same 1,000 one-tool turns run by one
// agent, by a child agent behind a sub-agent tool (the parent makes one call and answers), and by an
// agent inside an app's own XState machine (fromAgent). CPU per turn, and the heap held at the same
// point of the work in each: when the last model call starts, every agent of the run still live (a
// full collection first; the probe's own time is left out of the CPU figure).
// Run: node --expose-gc --import tsx bench/nesting.ts (npm run bench -- nesting).
import { createActor, setup, toPromise } from "xstate";
import { createAgent, fromAgent, type ScriptedStep, subAgentTool } from "../index.js";
import { noopTool, stepUsage } from "./bench-tools.js";
import { benchRuns, collectGarbage, gcExposed, measure, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

const TURNS = 1_000;

/** Heap measured at the last model call of the current run, and the CPU time the probe took. */
let probe = { heapBytes: 0, cpuMs: 0 };

/** The child's (or the lone agent's) script: `TURNS - 1` tool turns, then an answer. */
function work() {
  return leanScripted((_request, call): ScriptedStep => {
    if (call < TURNS - 1)
      return { toolCalls: [{ name: "noop", arguments: { turn: call } }], usage: stepUsage };
    const cpu = process.cpuUsage();
    probe = { heapBytes: heapNow(), cpuMs: 0 };
    const spent = process.cpuUsage(cpu);
    probe.cpuMs = (spent.user + spent.system) / 1000;
    return { text: "done", usage: stepUsage };
  });
}

interface Run {
  cpuMs: number;
  heapBytes: number;
}

/** The run's figures: its CPU less the probe's, the heap at the probe less the heap before. */
function runOf(cpuMs: number, before: number): Run {
  return { cpuMs: cpuMs - probe.cpuMs, heapBytes: probe.heapBytes - before };
}

function heapNow(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

async function flat(): Promise<Run> {
  const before = heapNow();
  const agent = createAgent({ provider: work(), tools: [noopTool], systemPrompt: "bench" });
  agent.events$.subscribe(() => {});
  const { cpuMs } = await measure(() => agent.prompt("go"));
  if (agent.messages.length !== 2 * TURNS) throw new Error(`flat: ${agent.messages.length} messages`);
  agent.stop();
  return runOf(cpuMs, before);
}

async function subAgent(): Promise<Run> {
  const before = heapNow();
  const worker = subAgentTool({
    name: "worker",
    description: "Does the work",
    provider: work(),
    tools: [noopTool],
    systemPrompt: "bench",
    updateIntervalMs: 1_000_000,
  });
  const parent = createAgent({
    provider: leanScripted([
      { toolCalls: [{ name: "worker", arguments: { task: "go" } }], usage: stepUsage },
      { text: "done", usage: stepUsage },
    ]),
    tools: [worker],
    systemPrompt: "bench",
  });
  parent.events$.subscribe(() => {});
  const { cpuMs } = await measure(() => parent.prompt("go"));
  const result = parent.messages.find((m) => m.role === "toolResult");
  if (!result || result.isError) throw new Error("subAgent: the child's call failed");
  parent.stop();
  return runOf(cpuMs, before);
}

async function inMachine(): Promise<Run> {
  const before = heapNow();
  const app = setup({
    actors: {
      worker: fromAgent({
        agent: { provider: work(), tools: [noopTool], systemPrompt: "bench" },
        prompt: () => "go",
      }),
    },
  }).createMachine({
    initial: "working",
    states: { working: { invoke: { src: "worker", onDone: "done" } }, done: { type: "final" } },
  });
  const actor = createActor(app);
  const { cpuMs } = await measure(() => {
    actor.start();
    return toPromise(actor);
  });
  if (actor.getSnapshot().value !== "done") throw new Error("inMachine: the app did not finish");
  actor.stop();
  return runOf(cpuMs, before);
}

const variants = { "one agent": flat, "sub-agent tool": subAgent, "fromAgent in an app machine": inMachine };
type Name = keyof typeof variants;
const names = Object.keys(variants) as Name[];

const runs = benchRuns() + 2;
const samples = new Map<Name, Run[]>(names.map((n) => [n, []]));
for (const name of names) await variants[name](); // warm-up
for (let run = 0; run < runs; run++) {
  for (let i = 0; i < names.length; i++) {
    const name = names[(run + i) % names.length]!;
    samples.get(name)!.push(await variants[name]());
  }
}

const cpu = (name: Name) => median(samples.get(name)!.map((s) => s.cpuMs));
const heap = (name: Name) => median(samples.get(name)!.map((s) => s.heapBytes));
console.log(
  `One level of nesting: ${TURNS.toLocaleString("en")} one-tool turns (${runs} runs each, medians)` +
    (gcExposed() ? "" : " · WARNING: no --expose-gc, heap figures are noise"),
);
for (const name of names) {
  const perTurnUs = (cpu(name) * 1000) / TURNS;
  const extraUs = ((cpu(name) - cpu("one agent")) * 1000) / TURNS;
  console.log(
    `  ${name.padEnd(30)} ${perTurnUs.toFixed(2).padStart(8)} µs/turn CPU  ` +
      `(${extraUs >= 0 ? "+" : ""}${extraUs.toFixed(2)} vs one agent)  ` +
      `heap at last turn ${(heap(name) / 1024).toFixed(0).padStart(6)} KiB ` +
      `(${(heap(name) - heap("one agent") >= 0 ? "+" : "") + ((heap(name) - heap("one agent")) / 1024).toFixed(0)} KiB)`,
  );
}
