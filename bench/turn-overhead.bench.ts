import { createAgent, type ScriptedStep } from "../index.js";
import { noopTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, measure, medianSample, rotating, type Sample } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent, piNoopTool, piTranscript } from "./pi-adapter.js";
import { type FloorShape, runFloor } from "./xstate-floor.js";

/** Model calls in one run: the model asks for the tool this many times minus one, then answers. */
export const TURNS = 2_000;

export function oneToolTurns(turns: number) {
  return leanScripted((_request, call): ScriptedStep =>
    call < turns - 1
      ? // A new argument each turn: the same call 2,000 times would be a loop (loop detection stops it).
        { toolCalls: [{ name: "noop", arguments: { turn: call } }], usage: stepUsage }
      : { text: "done", usage: stepUsage },
  );
}

/** Transcript length after a run: the prompt, an assistant message and a result per tool turn, the answer. */
export const expectedMessages = (turns: number) => 1 + 2 * (turns - 1) + 1;

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
  if (piTranscript(agent).length !== expectedMessages(turns) || events === 0) {
    throw new Error(`pi-agent-core ended with ${piTranscript(agent).length} messages`);
  }
  return sample;
}

/** The shape of the design the floor keeps: a machine actor per call, the resting check states. */
export const DESIGN_SHAPE: FloorShape = { call: "machine", restingChecks: true };

/** One run of the design's shape in bare XState on the same script (see `xstate-floor.ts`). */
export function runDesignFloor(turns = TURNS, shape = DESIGN_SHAPE): Promise<Sample> {
  return runFloor(oneToolTurns(turns), [noopTool], shape, expectedMessages(turns));
}

/**
 * (a) Runtime overhead per turn: 2,000 one-tool turns with an instant tool, µs per turn; and the
 * floor, the design's shape in bare XState, measured in the same rounds.
 */
export async function run(): Promise<BenchResult[]> {
  const samples = await rotating({ ours: () => runOurs(), pi: () => runPi(), floor: () => runDesignFloor() });
  const ours = medianSample(samples.ours);
  const pi = medianSample(samples.pi);
  const floor = medianSample(samples.floor);
  const runs = samples.ours.length;
  const perTurn = (ms: number) => (ms * 1000) / TURNS;
  const name = "(a) turn overhead, 2,000 one-tool turns";
  const floorName = "(a) floor: the design's shape in bare XState, same turns";
  return [
    {
      name: `${name}, wall`,
      unit: "µs/turn",
      ours: perTurn(ours.wallMs),
      pi: perTurn(pi.wallMs),
      runs,
      note: `whole run: ours ${ours.wallMs.toFixed(0)} ms, pi ${pi.wallMs.toFixed(0)} ms; ours/floor ${(ours.wallMs / floor.wallMs).toFixed(2)}x`,
    },
    {
      name: `${name}, CPU`,
      unit: "µs/turn",
      ours: perTurn(ours.cpuMs),
      pi: perTurn(pi.cpuMs),
      runs,
      note: `user+system CPU time of the process during the run; ours/floor ${(ours.cpuMs / floor.cpuMs).toFixed(2)}x`,
    },
    {
      name: `${floorName}, wall`,
      unit: "µs/turn",
      ours: perTurn(floor.wallMs),
      pi: perTurn(pi.wallMs),
      runs,
      note: "ours column: the floor (bench/xstate-floor.ts): a machine actor per call, resting checks",
    },
    {
      name: `${floorName}, CPU`,
      unit: "µs/turn",
      ours: perTurn(floor.cpuMs),
      pi: perTurn(pi.cpuMs),
      runs,
      note: "no limits, hooks, abort, stall watchdog, loop detection or snapshots kept",
    },
  ];
}
