import { type AgentOptions, createAgent, type ScriptedStep } from "../index.js";
import { noopTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, benchRuns, collectGarbage, gcExposed, median, sideBySide } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent, piNoopTool, piTranscript } from "./pi-adapter.js";

/** Turns in the session: one prompt, the model asks for the instant tool every turn but the last. */
export const SESSION_TURNS = 10_000;
/** Turns per block compared: the first block against the last. */
export const BLOCK = 1_000;

/** Where each block starts and ends, by turns completed. */
const marks = [0, BLOCK, SESSION_TURNS - BLOCK, SESSION_TURNS];

function session(turns: number) {
  return leanScripted((_request, call): ScriptedStep =>
    call < turns - 1
      ? // A new argument each turn: the same call 10,000 times would be a loop (loop detection stops it).
        { toolCalls: [{ name: "noop", arguments: { turn: call } }], usage: stepUsage }
      : { text: "done", usage: stepUsage },
  );
}

/**
 * A context budget the session never reaches: compaction never runs, but the budget checks do, every
 * turn (the turn gate, the calibration of each answer). They once walked the whole transcript each
 * time, which made a budgeted session quadratic while the unbudgeted one stayed flat.
 */
const UNREACHED_BUDGET = { maxContextTokens: 100_000_000 };

/** CPU µs per turn and retained heap bytes per turn of the first and the last block. */
interface Blocks {
  firstCpu: number;
  lastCpu: number;
  /** CPU µs per turn over the whole session. */
  meanCpu: number;
  firstHeap: number;
  lastHeap: number;
}

interface Probe {
  cpuMs: number;
  heap: number;
}

/**
 * Reads the clock at the marks (as the turn's `turn_end` is published), and in a second pass the
 * heap after a full collection (a collection inside the timed pass would distort the times).
 */
function probe(withHeap: boolean): Probe {
  if (withHeap) collectGarbage();
  const cpu = process.cpuUsage();
  return { cpuMs: (cpu.user + cpu.system) / 1000, heap: withHeap ? process.memoryUsage().heapUsed : 0 };
}

function blocksOf(probes: Probe[]): Blocks {
  const [a, b, c, d] = probes as [Probe, Probe, Probe, Probe];
  return {
    firstCpu: ((b.cpuMs - a.cpuMs) * 1000) / BLOCK,
    lastCpu: ((d.cpuMs - c.cpuMs) * 1000) / BLOCK,
    meanCpu: ((d.cpuMs - a.cpuMs) * 1000) / SESSION_TURNS,
    firstHeap: (b.heap - a.heap) / BLOCK,
    lastHeap: (d.heap - c.heap) / BLOCK,
  };
}

/** One session of agent-machine; `withHeap` measures the heap instead of the time. */
export async function runOurs(
  withHeap: boolean,
  turns = SESSION_TURNS,
  options: Partial<AgentOptions> = {},
): Promise<Probe[]> {
  const agent = createAgent({
    provider: session(turns),
    tools: [noopTool],
    systemPrompt: "bench",
    ...options,
  });
  const probes: Probe[] = [];
  agent.events$.subscribe((event) => {
    if (event.type === "turn_end" && marks.includes(event.turn)) probes.push(probe(withHeap));
  });
  probes.push(probe(withHeap));
  await agent.prompt("go");
  if (agent.messages.length !== 2 * turns) throw new Error(`ended with ${agent.messages.length} messages`);
  agent.stop();
  return probes;
}

/** The same session on pi-agent-core. */
export async function runPi(withHeap: boolean, turns = SESSION_TURNS): Promise<Probe[]> {
  const agent = createPiAgent(session(turns), [piNoopTool], "bench");
  const probes: Probe[] = [];
  let turn = 0;
  agent.subscribe((event) => {
    if (event.type === "turn_end" && marks.includes(++turn)) probes.push(probe(withHeap));
  });
  probes.push(probe(withHeap));
  await agent.prompt("go");
  if (piTranscript(agent).length !== 2 * turns) {
    throw new Error(`pi ended with ${piTranscript(agent).length} messages`);
  }
  return probes;
}

/**
 * (e) A 10,000-turn session (one prompt, a one-tool turn after another): CPU time per turn and
 * retained heap per turn of turns 9,001–10,000 against turns 1–1,000. Flat is 1.
 */
export async function run(): Promise<BenchResult[]> {
  if (!gcExposed())
    throw new Error("The long-session benchmark needs node --expose-gc (npm run bench sets it)");
  const runs = Math.min(3, benchRuns());
  // Warm the JIT on a shorter session first, so the first block is not the warm-up.
  const warm = () => Promise.all([runOurs(false, 2_000), runPi(false, 2_000)]);
  await warm();
  const time = await sideBySide(
    { ours: async () => blocksOf(await runOurs(false)), pi: async () => blocksOf(await runPi(false)) },
    runs,
    0,
  );
  // pi-agent-core has no context budget of its own (an app compacts in `transformContext`): ours alone.
  const budgeted: Blocks[] = [];
  for (let i = 0; i < runs; i++) {
    budgeted.push(blocksOf(await runOurs(false, SESSION_TURNS, { context: UNREACHED_BUDGET })));
  }
  // Retained heap per block moves by ±30 % from run to run (V8's pages and array growth): medians.
  const heap = await sideBySide(
    { ours: async () => blocksOf(await runOurs(true)), pi: async () => blocksOf(await runPi(true)) },
    runs,
    0,
  );
  const m = (blocks: Blocks[], key: keyof Blocks) => median(blocks.map((b) => b[key]));
  const growth = (blocks: Blocks[], last: keyof Blocks, first: keyof Blocks) =>
    median(blocks.map((b) => b[last] / b[first]));
  const name = `${SESSION_TURNS.toLocaleString("en")}-turn session`;
  return [
    {
      name: `(e) ${name}: CPU per turn, turns 9,001–10,000 ÷ 1–1,000`,
      unit: "x",
      ours: growth(time.ours, "lastCpu", "firstCpu"),
      pi: growth(time.pi, "lastCpu", "firstCpu"),
      runs,
      note: `ours ${m(time.ours, "firstCpu").toFixed(0)} → ${m(time.ours, "lastCpu").toFixed(0)} µs/turn, pi ${m(time.pi, "firstCpu").toFixed(0)} → ${m(time.pi, "lastCpu").toFixed(0)}; whole session: ours ${m(time.ours, "meanCpu").toFixed(0)}, pi ${m(time.pi, "meanCpu").toFixed(0)} µs/turn`,
    },
    {
      name: `(e) ${name} with a context budget (never reached): CPU per turn, 9,001–10,000 ÷ 1–1,000`,
      unit: "x",
      ours: growth(budgeted, "lastCpu", "firstCpu"),
      runs,
      note: `ours ${m(budgeted, "firstCpu").toFixed(0)} → ${m(budgeted, "lastCpu").toFixed(0)} µs/turn (whole session ${m(budgeted, "meanCpu").toFixed(0)}): the budget checks run every turn`,
    },
    {
      name: `(e) ${name}: heap retained per turn, turns 9,001–10,000 ÷ 1–1,000`,
      unit: "x",
      ours: m(heap.ours, "lastHeap") / m(heap.ours, "firstHeap"),
      pi: m(heap.pi, "lastHeap") / m(heap.pi, "firstHeap"),
      runs,
      note: `medians: ours ${(m(heap.ours, "firstHeap") / 1024).toFixed(2)} → ${(m(heap.ours, "lastHeap") / 1024).toFixed(2)} KB/turn, pi ${(m(heap.pi, "firstHeap") / 1024).toFixed(2)} → ${(m(heap.pi, "lastHeap") / 1024).toFixed(2)}`,
    },
  ];
}
