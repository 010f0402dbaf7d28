import { createAgent, type ScriptedStep } from "../index.js";
import { stepUsage } from "./bench-tools.js";
import { type BenchResult, measure, medianSample, type Sample, sideBySide } from "./harness.js";
import { inBursts, leanScripted } from "./lean-scripted.js";
import { createPiAgent, piTranscript } from "./pi-adapter.js";

/** Delta counts measured; per-delta time must stay flat across them. */
export const SIZES = [10_000, 50_000, 100_000] as const;
/** Characters per delta. */
export const DELTA_CHARS = 10;

/** Events per burst in the paced variant (the source waits a macrotask between bursts). */
export const BURST = 100;

/** One text answer of `deltas` deltas of 10 characters, all at once or in bursts of {@link BURST}. */
function longAnswer(deltas: number, paced: boolean) {
  const text = "0123456789".repeat(deltas);
  const provider = leanScripted((): ScriptedStep => ({ text, chunkSize: DELTA_CHARS, usage: stepUsage }));
  return paced ? inBursts(provider, BURST) : provider;
}

function checkAnswer(runtime: string, updates: number, deltas: number, text: string | undefined) {
  if (updates !== deltas || text?.length !== deltas * DELTA_CHARS) {
    throw new Error(
      `${runtime}: ${updates} text updates and ${text?.length} characters for ${deltas} deltas`,
    );
  }
}

/** One run of agent-machine: the answer streams through `events$` to one subscriber. */
export async function runOurs(deltas: number, paced = false): Promise<Sample> {
  const agent = createAgent({ provider: longAnswer(deltas, paced) });
  let updates = 0;
  agent.events$.subscribe((event) => {
    if (event.type === "message_update" && event.kind === "text_delta") updates++;
  });
  const sample = await measure(() => agent.prompt("talk"));
  const answer = agent.messages.at(-1);
  checkAnswer("agent-machine", updates, deltas, answer?.role === "assistant" ? textOf(answer) : undefined);
  agent.stop();
  return sample;
}

/** One run of pi-agent-core: the same answer through `subscribe`. */
export async function runPi(deltas: number, paced = false): Promise<Sample> {
  const agent = createPiAgent(longAnswer(deltas, paced), []);
  let updates = 0;
  agent.subscribe((event) => {
    if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") updates++;
  });
  const sample = await measure(() => agent.prompt("talk"));
  const answer = piTranscript(agent).at(-1);
  checkAnswer("pi-agent-core", updates, deltas, answer?.role === "assistant" ? textOf(answer) : undefined);
  return sample;
}

function textOf(message: { content: readonly { type: string; text?: string }[] }): string {
  return message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}

async function series(sizes: readonly number[], paced: boolean): Promise<BenchResult[]> {
  const source = paced ? `source in bursts of ${BURST}` : "instant source";
  const results: BenchResult[] = [];
  const perDelta: { ours: number; pi: number }[] = [];
  for (const deltas of sizes) {
    const samples = await sideBySide({
      ours: () => runOurs(deltas, paced),
      pi: () => runPi(deltas, paced),
    });
    const ours = medianSample(samples.ours);
    const pi = medianSample(samples.pi);
    perDelta.push({ ours: (ours.cpuMs * 1000) / deltas, pi: (pi.cpuMs * 1000) / deltas });
    results.push({
      name: `(c) ${deltas.toLocaleString("en")} text deltas, ${source}, wall`,
      unit: "µs/delta",
      ours: (ours.wallMs * 1000) / deltas,
      pi: (pi.wallMs * 1000) / deltas,
      runs: samples.ours.length,
      note: `CPU: ours ${perDelta.at(-1)!.ours.toFixed(2)}, pi ${perDelta.at(-1)!.pi.toFixed(2)} µs/delta`,
    });
  }
  const first = perDelta[0]!;
  const last = perDelta.at(-1)!;
  results.push({
    name: `(c) growth of CPU µs/delta ${sizes[0]!.toLocaleString("en")} → ${sizes.at(-1)!.toLocaleString("en")}, ${source}`,
    unit: "x",
    ours: last.ours / first.ours,
    pi: last.pi / first.pi,
    runs: results[0]!.runs,
    note: "1.00 = flat; 10 would be quadratic",
  });
  return results;
}

/**
 * (c) Time per text delta of 10 characters at 10k, 50k and 100k deltas, and its growth; once
 * with an instant in-memory source, once with the source paced in bursts like a network stream.
 */
export async function run(): Promise<BenchResult[]> {
  return [...(await series(SIZES, false)), ...(await series([SIZES[0], SIZES.at(-1)!], true))];
}
