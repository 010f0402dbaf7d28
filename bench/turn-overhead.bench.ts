import { createAgent, type ScriptedStep } from "../index.js";
import { noopTool, piNoopTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, measure, medianSample, type Sample, sideBySide } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent } from "./pi-adapter.js";

/** Model calls in one run: the model asks for the tool this many times minus one, then answers. */
export const TURNS = 2_000;

function oneToolTurns(turns: number) {
  return leanScripted((_request, call): ScriptedStep =>
    call < turns - 1
      ? // A new argument each turn: the same call 2,000 times would be a loop (loop detection stops it).
        { toolCalls: [{ name: "noop", arguments: { turn: call } }], usage: stepUsage }
      : { text: "done", usage: stepUsage },
  );
}

/** Transcript length after a run: the prompt, an assistant message and a result per tool turn, the answer. */
const expectedMessages = (turns: number) => 1 + 2 * (turns - 1) + 1;

/** One run of agent-machine over `turns` one-tool turns. */
export async function runOurs(turns = TURNS): Promise<Sample> {
  const agent = createAgent({ provider: oneToolTurns(turns), tools: [noopTool], systemPrompt: "bench" });
  let events = 0;
  agent.events$.subscribe(() => {
    events++;
  });
  const sample = await measure(() => agent.prompt("go"));
  if (agent.messages.length !== expectedMessages(turns) || events === 0) {
    throw new Error(`agent-machine ended with ${agent.messages.length} messages`);
  }
  agent.stop();
  return sample;
}

/** One run of pi-agent-core on the same script. */
export async function runPi(turns = TURNS): Promise<Sample> {
  const agent = createPiAgent(oneToolTurns(turns), [piNoopTool], "bench");
  let events = 0;
  agent.subscribe(() => {
    events++;
  });
  const sample = await measure(() => agent.prompt("go"));
  if (agent.state.messages.length !== expectedMessages(turns) || events === 0) {
    throw new Error(`pi-agent-core ended with ${agent.state.messages.length} messages`);
  }
  return sample;
}

/** (a) Runtime overhead per turn: 2,000 one-tool turns with an instant tool, µs per turn. */
export async function run(): Promise<BenchResult[]> {
  const samples = await sideBySide({ ours: () => runOurs(), pi: () => runPi() });
  const ours = medianSample(samples.ours);
  const pi = medianSample(samples.pi);
  const runs = samples.ours.length;
  const name = "(a) turn overhead, 2,000 one-tool turns";
  return [
    {
      name: `${name}, wall`,
      unit: "µs/turn",
      ours: (ours.wallMs * 1000) / TURNS,
      pi: (pi.wallMs * 1000) / TURNS,
      runs,
      note: `whole run: ours ${ours.wallMs.toFixed(0)} ms, pi ${pi.wallMs.toFixed(0)} ms`,
    },
    {
      name: `${name}, CPU`,
      unit: "µs/turn",
      ours: (ours.cpuMs * 1000) / TURNS,
      pi: (pi.cpuMs * 1000) / TURNS,
      runs,
      note: "user+system CPU time of the process during the run",
    },
  ];
}
