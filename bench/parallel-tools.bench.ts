import { createAgent, type ScriptedStep } from "../index.js";
import { sleepTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, benchRuns, measure, medianSample, type Sample, sideBySide } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent, piSleepTool, piTranscript } from "./pi-adapter.js";

/** How many parallel calls the one tool turn asks for, in each series. */
export const SERIES = [10, 100, 1_000, 3_000];
/** How long each tool sleeps: the floor of the turn's wall time. */
export const TOOL_MS = 50;

/** One turn asking for `calls` sleeps at once, then a text answer. */
function parallelTurn(calls: number) {
  const toolCalls = Array.from({ length: calls }, () => ({ name: "sleep", arguments: { ms: TOOL_MS } }));
  return leanScripted((_request, call): ScriptedStep =>
    call === 0 ? { toolCalls, usage: stepUsage } : { text: "all done", usage: stepUsage },
  );
}

/** prompt, assistant with the calls, one result per call, final answer */
const expectedMessages = (calls: number) => 1 + 1 + calls + 1;

/** One run of agent-machine (strategy `"parallel"`, the default) over `calls` parallel calls. */
export async function runFanOut(calls: number): Promise<Sample> {
  const agent = createAgent({ provider: parallelTurn(calls), tools: [sleepTool] });
  let ends = 0;
  agent.events$.subscribe((event) => {
    if (event.type === "tool_execution_end") ends++;
  });
  const sample = await measure(() => agent.prompt("sleep a lot"));
  if (agent.messages.length !== expectedMessages(calls) || ends !== calls) {
    throw new Error(`agent-machine ended with ${agent.messages.length} messages and ${ends} tool ends`);
  }
  agent.stop();
  return sample;
}

/** One run of pi-agent-core (toolExecution `"parallel"`, its default) over `calls` parallel calls. */
export async function runPiFanOut(calls: number): Promise<Sample> {
  const agent = createPiAgent(parallelTurn(calls), [piSleepTool]);
  let ends = 0;
  agent.subscribe((event) => {
    if (event.type === "tool_execution_end") ends++;
  });
  const sample = await measure(() => agent.prompt("sleep a lot"));
  if (piTranscript(agent).length !== expectedMessages(calls) || ends !== calls) {
    throw new Error(`pi-agent-core ended with ${piTranscript(agent).length} messages and ${ends} tool ends`);
  }
  return sample;
}

/**
 * (b) One turn with n parallel tools of 50 ms each (the floor is 50 ms), n = 10, 100, 1,000, 3,000:
 * wall time of the run, and the CPU time per call, which stays flat when the fan-out is linear.
 */
export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const perCall: { calls: number; ours: number; pi: number }[] = [];
  for (const calls of SERIES) {
    // The biggest series costs seconds a run on a slow core; three runs are enough for its median.
    const runs = calls >= 1_000 ? Math.min(3, benchRuns()) : benchRuns();
    const samples = await sideBySide({ ours: () => runFanOut(calls), pi: () => runPiFanOut(calls) }, runs);
    const ours = medianSample(samples.ours);
    const pi = medianSample(samples.pi);
    const label = calls.toLocaleString("en");
    results.push({
      name: `(b) ${label} parallel tools of ${TOOL_MS} ms, wall`,
      unit: "ms",
      ours: ours.wallMs,
      pi: pi.wallMs,
      runs,
      note: `floor ${TOOL_MS} ms; above it: ours ${(ours.wallMs - TOOL_MS).toFixed(1)} ms, pi ${(pi.wallMs - TOOL_MS).toFixed(1)} ms`,
    });
    const usPerCall = (sample: Sample) => (sample.cpuMs * 1000) / calls;
    perCall.push({ calls, ours: usPerCall(ours), pi: usPerCall(pi) });
    results.push({
      name: `(b) ${label} parallel tools of ${TOOL_MS} ms, CPU per call`,
      unit: "µs/call",
      ours: usPerCall(ours),
      pi: usPerCall(pi),
      runs,
      note: "CPU time of the whole run ÷ calls (includes the two model turns)",
    });
  }
  const first = perCall[0]!;
  const last = perCall.at(-1)!;
  results.push({
    name: `(b) growth of CPU µs/call ${first.calls.toLocaleString("en")} → ${last.calls.toLocaleString("en")}`,
    unit: "x",
    ours: last.ours / first.ours,
    pi: last.pi / first.pi,
    runs: benchRuns(),
    note: "below 1 = flat (fixed costs spread over more calls); growing with n = quadratic",
  });
  return results;
}
