import { createAgent, type ScriptedStep } from "../index.js";
import { piSleepTool, sleepTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, measure, medianSample, type Sample, sideBySide } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent } from "./pi-adapter.js";

/** Tool calls in the one tool turn. */
export const CALLS = 100;
/** How long each tool sleeps: the floor of the turn's wall time. */
export const TOOL_MS = 50;

/** One turn asking for 100 sleeps at once, then a text answer. */
function parallelTurn() {
  const toolCalls = Array.from({ length: CALLS }, () => ({ name: "sleep", arguments: { ms: TOOL_MS } }));
  return leanScripted((_request, call): ScriptedStep =>
    call === 0 ? { toolCalls, usage: stepUsage } : { text: "all done", usage: stepUsage },
  );
}

/** prompt, assistant with 100 calls, 100 results, final answer */
const expectedMessages = 1 + 1 + CALLS + 1;

/** One run of agent-machine (strategy `"parallel"`, the default). */
export async function runOurs(): Promise<Sample> {
  const agent = createAgent({ provider: parallelTurn(), tools: [sleepTool] });
  agent.events$.subscribe(() => {});
  const sample = await measure(() => agent.prompt("sleep a lot"));
  if (agent.messages.length !== expectedMessages) {
    throw new Error(`agent-machine ended with ${agent.messages.length} messages`);
  }
  agent.stop();
  return sample;
}

/** One run of pi-agent-core (toolExecution `"parallel"`, its default). */
export async function runPi(): Promise<Sample> {
  const agent = createPiAgent(parallelTurn(), [piSleepTool]);
  agent.subscribe(() => {});
  const sample = await measure(() => agent.prompt("sleep a lot"));
  if (agent.state.messages.length !== expectedMessages) {
    throw new Error(`pi-agent-core ended with ${agent.state.messages.length} messages`);
  }
  return sample;
}

/** (b) Wall time of one turn with 100 parallel tools of 50 ms each (the floor is 50 ms). */
export async function run(): Promise<BenchResult[]> {
  const samples = await sideBySide({ ours: runOurs, pi: runPi });
  const ours = medianSample(samples.ours);
  const pi = medianSample(samples.pi);
  return [
    {
      name: `(b) ${CALLS} parallel tools of ${TOOL_MS} ms, wall`,
      unit: "ms",
      ours: ours.wallMs,
      pi: pi.wallMs,
      runs: samples.ours.length,
      note: `floor ${TOOL_MS} ms; above it: ours ${(ours.wallMs - TOOL_MS).toFixed(1)} ms, pi ${(pi.wallMs - TOOL_MS).toFixed(1)} ms`,
    },
  ];
}
