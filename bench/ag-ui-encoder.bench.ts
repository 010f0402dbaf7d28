// What the AG-UI encoder costs per agent event (issue 24): the same scripted run with a subscriber
// to `events$` that only counts, and with the AG-UI encoder of a session-host response turning
// every event into SSE frames. Reported per event, as a difference of medians in one process.
import { z } from "zod";
import { agUiEncoder } from "../http.js";
import { createAgent, defineTool, type ScriptedStep } from "../index.js";
import { stepUsage } from "./bench-tools.js";
import { type BenchResult, benchRuns, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

/** Text deltas per answer, and turns: 2 tool calls each, then a final answer. */
const DELTAS_PER_ANSWER = 500;
const TURNS = 10;

const lookup = defineTool({
  name: "lookup",
  description: "Looks something up",
  parameters: z.object({ q: z.string() }),
  execute: ({ q }) => `result for ${q}`,
});

function script(_request: unknown, call: number): ScriptedStep {
  const text = "word ".repeat(DELTAS_PER_ANSWER);
  if (call < TURNS - 1) {
    return {
      text,
      chunkSize: 5,
      toolCalls: [
        { name: "lookup", arguments: { q: `a${call}` } },
        { name: "lookup", arguments: { q: `b${call}` } },
      ],
      usage: stepUsage,
    };
  }
  return { text, chunkSize: 5, usage: stepUsage };
}

/** One run's wall time (ms) and event count, with or without the encoder. */
async function once(encode: boolean): Promise<{ ms: number; events: number; bytes: number }> {
  const agent = createAgent({ provider: leanScripted(script), tools: [lookup], eventReplay: false });
  let events = 0;
  let bytes = 0;
  const encoder = agUiEncoder({ runId: "bench" });
  if (encode) bytes += encoder.open({ kind: "run", threadId: "t", runId: undefined, messages: [] }).length;
  agent.events$.subscribe((event) => {
    events++;
    if (!encode) return;
    bytes += encoder.event(event, events).length;
    if (event.type === "agent_end") {
      bytes += encoder.close({ kind: "end", event, messages: agent.messages }).length;
    }
  });
  const started = performance.now();
  await agent.prompt("go");
  const ms = performance.now() - started;
  agent.stop();
  return { ms, events, bytes };
}

/** (h) The AG-UI encoder's cost per event, against `events$` alone. */
export async function run(): Promise<BenchResult[]> {
  for (let i = 0; i < 3; i++) {
    await once(false);
    await once(true);
  }
  const plain: number[] = [];
  const encoded: number[] = [];
  let events = 0;
  let bytes = 0;
  for (let i = 0; i < benchRuns(); i++) {
    const a = await once(false);
    const b = await once(true);
    plain.push(a.ms);
    encoded.push(b.ms);
    events = b.events;
    bytes = b.bytes;
  }
  const perEvent = ((median(encoded) - median(plain)) * 1000) / events;
  return [
    {
      name: `(h) AG-UI encoder, a ${TURNS}-turn run of ${events.toLocaleString("en")} events`,
      unit: "µs/event",
      ours: perEvent,
      runs: benchRuns(),
      note:
        `run ${median(encoded).toFixed(1)} ms with the encoder vs ${median(plain).toFixed(1)} ms with events$ alone ` +
        `(${((median(encoded) / median(plain) - 1) * 100).toFixed(1)}% more); ${(bytes / events).toFixed(0)} B of SSE per event`,
    },
  ];
}
