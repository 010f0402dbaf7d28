import { createAgent, type ScriptedStep } from "../index.js";
import { stepUsage } from "./bench-tools.js";
import { type BenchResult, benchRuns, collectGarbage, gcExposed, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

/** Deltas of the one answer: with agent_start, turn and message events, about 10,000 events. */
const DELTAS = 9_992;

/**
 * Heap a finished run of about 10,000 events holds with `eventReplay` on (the default bounds)
 * beyond the same run with it off: the agent is pinned (its actor read), so it keeps the last run's
 * events until its next run. Returns [bytes retained with replay, events kept].
 */
async function retained(replay: boolean): Promise<{ bytes: number; events: number }> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const agent = createAgent({
    provider: leanScripted((): ScriptedStep => ({
      text: "0123456789".repeat(DELTAS),
      chunkSize: 10,
      usage: stepUsage,
    })),
    ...(replay ? {} : { eventReplay: false as const }),
  });
  void agent.actor;
  let events = 0;
  agent.events$.subscribe(() => events++);
  await agent.prompt("Say a lot");
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  agent.stop();
  return { bytes: after - before, events };
}

/** (g) The replay buffer's memory for a run of about 10,000 events (issue 23 item 6). */
export async function run(): Promise<BenchResult[]> {
  if (!gcExposed())
    throw new Error("The replay-buffer benchmark needs node --expose-gc (npm run bench sets it)");
  await retained(true);
  await retained(false);
  const on: number[] = [];
  const off: number[] = [];
  let events = 0;
  for (let i = 0; i < benchRuns(); i++) {
    const a = await retained(true);
    const b = await retained(false);
    on.push(a.bytes);
    off.push(b.bytes);
    events = a.events;
  }
  const kb = (median(on) - median(off)) / 1024;
  return [
    {
      name: `(g) event replay buffer, one run of ${events.toLocaleString("en")} events`,
      unit: "KB",
      ours: kb,
      runs: benchRuns(),
      note: `heap with eventReplay on minus off, after the run (${((kb * 1024) / events).toFixed(0)} B/event; the answer's ${DELTAS.toLocaleString("en")} deltas of 10 chars)`,
    },
  ];
}
