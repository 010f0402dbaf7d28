import { type Agent, createAgent, type ScriptedStep } from "../index.js";
import { stepUsage } from "./bench-tools.js";
import { type BenchResult, collectGarbage, gcExposed, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent } from "./pi-adapter.js";

/** Sessions held at once (`BENCH_SESSIONS` overrides). */
export const SESSIONS = Number(process.env.BENCH_SESSIONS) || 100_000;
/** Sessions woken for the wake-up figures. */
const WAKES = 1_000;

const systemPrompt = "You are a terse assistant used in a memory benchmark.";
/** One provider for every session, as an app has: the sessions are what is measured. */
const provider = leanScripted((): ScriptedStep => ({ text: "Hello, how can I help?", usage: stepUsage }));

function heapUsed(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Heap bytes per session: `SESSIONS` of them, each after one short text run. */
async function heapPerSession<T>(create: () => T, run: (session: T) => Promise<unknown>) {
  const before = heapUsed();
  const sessions: T[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const session = create();
    await run(session);
    sessions.push(session);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const perSession = (heapUsed() - before) / SESSIONS;
  return { perSession, sessions };
}

/** Median µs of `work` over `sessions`, one call each. */
async function microseconds<T>(sessions: readonly T[], work: (session: T) => unknown): Promise<number> {
  const samples: number[] = [];
  for (const session of sessions) {
    const start = performance.now();
    await work(session);
    samples.push((performance.now() - start) * 1000);
  }
  return median(samples);
}

/**
 * (f) Hibernation: 100,000 sessions with `hibernate: "whenIdle"`, each after one short run, held
 * in one process (heap per session, against pi-agent-core agents after the same run); then the
 * time to wake one (its actor restored from the snapshot) and a prompt on a hibernated session
 * against one on an awake agent.
 */
export async function run(): Promise<BenchResult[]> {
  if (!gcExposed())
    throw new Error("The hibernation benchmark needs node --expose-gc (npm run bench sets it)");
  const options = { provider, systemPrompt, hibernate: "whenIdle" as const };
  const ours = await heapPerSession(
    () => createAgent(options),
    (agent) => agent.prompt("Hi"),
  );
  const asleep = ours.sessions.filter((agent) => agent.hibernated).length;
  if (asleep !== SESSIONS) throw new Error(`${SESSIONS - asleep} sessions did not hibernate`);

  const sample = ours.sessions.slice(0, WAKES);
  const wake = await microseconds(sample, (agent) => agent.actor);
  await new Promise((resolve) => setImmediate(resolve));
  const hibernatedPrompt = await microseconds(ours.sessions.slice(WAKES, 2 * WAKES), (agent) =>
    agent.prompt("again"),
  );
  // Awake for good: an app that read `agent.actor` keeps that actor (it never rests).
  const awake: Agent[] = Array.from({ length: WAKES }, () => createAgent({ provider, systemPrompt }));
  for (const agent of awake) void agent.actor;
  for (const agent of awake) await agent.prompt("Hi");
  const awakePrompt = await microseconds(awake, (agent) => agent.prompt("again"));
  for (const agent of awake) agent.stop();
  // Resting (the default): the idle agent let its actor go and keeps its context; a prompt makes a new actor.
  const resting: Agent[] = Array.from({ length: WAKES }, () => createAgent({ provider, systemPrompt }));
  for (const agent of resting) await agent.prompt("Hi");
  await new Promise((resolve) => setImmediate(resolve));
  const restingPrompt = await microseconds(resting, (agent) => agent.prompt("again"));
  for (const agent of resting) agent.stop();
  const oursKb = ours.perSession / 1024;
  ours.sessions.length = 0;

  const pi = await heapPerSession(
    () => createPiAgent(provider, [], systemPrompt),
    (agent) => agent.prompt("Hi"),
  );
  const piKb = pi.perSession / 1024;
  pi.sessions.length = 0;

  const count = SESSIONS.toLocaleString("en");
  return [
    {
      name: `(f) heap per session, ${count} hibernated sessions after one run`,
      unit: "KB/session",
      ours: oursKb,
      pi: piKb,
      runs: 1,
      note: `ours hibernate: "whenIdle" (snapshot kept as JSON); pi: ${count} idle agents; one shared provider`,
    },
    {
      name: `(f) wake-up of a hibernated session (agent.actor)`,
      unit: "µs",
      ours: wake,
      runs: WAKES,
      note: "median: the actor restored from the snapshot and started",
    },
    {
      name: `(f) prompt on a hibernated session, one text turn`,
      unit: "µs",
      ours: hibernatedPrompt,
      pi: awakePrompt,
      runs: WAKES,
      note: "the pi column here is agent-machine awake (actor read, so it never rests): the cost of waking in a run",
    },
    {
      name: `(f) prompt on a resting agent (the default), one text turn`,
      unit: "µs",
      ours: restingPrompt,
      pi: awakePrompt,
      runs: WAKES,
      note: "the pi column here is agent-machine awake for good: what resting adds to a prompt",
    },
  ];
}
