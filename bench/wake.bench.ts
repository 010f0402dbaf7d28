import {
  type Agent,
  createAgent,
  createLaterResults,
  createMemoryScheduleStore,
  createScheduler,
  deliverEvent,
  type Provider,
  type ScheduleStore,
  type ScriptedStep,
} from "../index.js";
import { stepUsage } from "./bench-tools.js";
import { type BenchResult, collectGarbage, gcExposed, median } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

/** Sessions held at once (`BENCH_SESSIONS` overrides). */
const SESSIONS = Number(process.env.BENCH_SESSIONS) || 100_000;
/** Schedules held for the scheduler's own heap figure (agents stubbed). */
const SCHEDULES = 100_000;
/** Wakes timed for the latency figures. */
const WAKES = 500;

const systemPrompt = "You are a terse assistant used in a memory benchmark.";
const inner = leanScripted((): ScriptedStep => ({ text: "Hello, how can I help?", usage: stepUsage }));
/** Notes when a model call starts: the end of a wake's latency. */
let onModelCall: (() => void) | undefined;
const provider: Provider = {
  id: inner.id,
  model: inner.model,
  stream(request, signal) {
    onModelCall?.();
    return inner.stream(request, signal);
  },
};

function heapUsed(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** A store kept elsewhere (a database): the process holds only the scheduler's own copy. */
const externalStore: ScheduleStore = { load: () => [], put: () => {}, delete: () => {} };

/** Heap bytes per hibernated session after one run, with `schedule(agentId)` run for each. */
async function heapPer(schedule?: (agents: Map<string, Agent>, id: string) => Promise<unknown>) {
  const before = heapUsed();
  const agents = new Map<string, Agent>();
  for (let i = 0; i < SESSIONS; i++) {
    const id = `s${i}`;
    const agent = createAgent({ provider, systemPrompt, hibernate: "whenIdle", id });
    await agent.prompt("Hi");
    agents.set(id, agent);
    await schedule?.(agents, id);
  }
  await new Promise((resolve) => setImmediate(resolve));
  return { perSession: (heapUsed() - before) / SESSIONS, agents };
}

/** Median ms from `start()` to the first model call of the run it causes. */
async function latency(start: (i: number) => number | Promise<number>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < WAKES; i++) {
    let called: number | undefined;
    onModelCall = () => (called ??= performance.timeOrigin + performance.now());
    const from = await start(i);
    while (called === undefined) await new Promise((resolve) => setImmediate(resolve));
    samples.push(called - from);
    onModelCall = undefined;
  }
  return median(samples);
}

/**
 * (w) Agents that wake: heap per hibernated session with a schedule (one cron each, one process
 * scheduler) against one without; and the time from a wake to the woken run's first model call,
 * for an event, a late result (from outside, and from the work in process) and a schedule's slot.
 */
export async function run(): Promise<BenchResult[]> {
  if (!gcExposed()) throw new Error("The wake benchmark needs node --expose-gc (npm run bench sets it)");
  const plain = await heapPer();
  plain.agents.clear();

  const results: BenchResult[] = [];
  for (const [label, store] of [
    ["store kept elsewhere", externalStore],
    ["in-memory store", createMemoryScheduleStore()],
  ] as const) {
    let agents: Map<string, Agent> | undefined;
    const lookup = { get: (id: string) => agents?.get(id) };
    const scheduled = await (async () => {
      const inner = createScheduler({ agents: lookup, store });
      await inner.start();
      const made = await heapPer((map, id) => {
        agents = map;
        return inner.schedule({
          agentId: id,
          cron: "0 9 * * *",
          timeZone: "Europe/Paris",
          message: "Morning",
        });
      });
      inner.stop();
      return made;
    })();
    scheduled.agents.clear();
    results.push({
      name: `(w) heap per hibernated session with a cron schedule, ${SESSIONS.toLocaleString("en")} sessions (${label})`,
      unit: "KB/session",
      ours: scheduled.perSession / 1024,
      runs: 1,
      note: `unscheduled: ${(plain.perSession / 1024).toFixed(2)} KB; ratio ${(scheduled.perSession / plain.perSession).toFixed(2)}×`,
    });
  }

  // The scheduler's own share: SCHEDULES cron schedules, the agents a stub the directory hands out.
  const stub = {} as Agent;
  const own = createScheduler({ agents: { get: () => stub }, store: externalStore });
  await own.start();
  const beforeSchedules = heapUsed();
  for (let i = 0; i < SCHEDULES; i++) {
    await own.schedule({ agentId: `s${i}`, cron: "0 9 * * *", timeZone: "Europe/Paris", message: "Morning" });
  }
  const perSchedule = (heapUsed() - beforeSchedules) / SCHEDULES;
  own.stop();
  results.push({
    name: `(w) heap per schedule in the process scheduler, ${SCHEDULES.toLocaleString("en")} cron schedules`,
    unit: "KB/schedule",
    ours: perSchedule / 1024,
    runs: 1,
    note: `the record and its heap entry (store kept elsewhere); a hibernated session here: ${(plain.perSession / 1024).toFixed(2)} KB`,
  });

  const agents = new Map<string, Agent>();
  for (let i = 0; i < WAKES; i++) {
    const agent = createAgent({ provider, systemPrompt, hibernate: "whenIdle", id: `w${i}` });
    await agent.prompt("Hi");
    agents.set(agent.id, agent);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const event = await latency(async (i) => {
    const from = performance.timeOrigin + performance.now();
    await deliverEvent(agents, { agentId: `w${i}`, id: `e${i}`, text: "ping" });
    return from;
  });
  for (const agent of agents.values()) await agent.waitForIdle();
  await new Promise((resolve) => setImmediate(resolve));
  const scheduler = createScheduler({ agents });
  await scheduler.start();
  const slot = await latency(async (i) => {
    // Far enough ahead that a pause of this loaded process (a GC of 100,000 sessions) does not put it in the past.
    const at = Date.now() + 100;
    await scheduler.schedule({ agentId: `w${i}`, at, message: "ping" });
    return at;
  });
  scheduler.stop();

  // Late results: each agent has a pending handle; its result comes from outside (complete) or from
  // the work the tool started in this process (its promise resolves).
  for (const agent of agents.values()) await agent.waitForIdle();
  await new Promise((resolve) => setImmediate(resolve));
  const later = createLaterResults({ agents });
  const finish = new Map<string, (text: string) => void>();
  await later.start();
  const handles: string[] = [];
  const workHandles: string[] = [];
  for (let i = 0; i < WAKES; i++) {
    const agentId = `w${i}`;
    later.register(agentId, "render", () => undefined);
    handles.push((await later.begin({ agentId, toolName: "render", toolCallId: `a${i}`, args: {} })).id);
    later.register(agentId, "render_here", (_args, { handle }) => {
      return new Promise<string>((resolve) => finish.set(handle, resolve));
    });
    workHandles.push(
      (await later.begin({ agentId, toolName: "render_here", toolCallId: `b${i}`, args: {} })).id,
    );
  }
  const outside = await latency(async (i) => {
    const from = performance.timeOrigin + performance.now();
    await later.complete(handles[i]!, "intro.mp4, 12 s");
    return from;
  });
  for (const agent of agents.values()) await agent.waitForIdle();
  await new Promise((resolve) => setImmediate(resolve));
  const inProcess = await latency((i) => {
    const from = performance.timeOrigin + performance.now();
    finish.get(workHandles[i]!)!("intro.mp4, 12 s");
    return from;
  });
  later.stop();
  return [
    ...results,
    {
      name: "(w) event to the woken run's first model call, hibernated session",
      unit: "ms",
      ours: event,
      runs: WAKES,
      note: "median: deliverEvent on a hibernated agent until its provider is called",
    },
    {
      name: "(w) late result (laterResults.complete) to the woken run's first model call, hibernated session",
      unit: "ms",
      ours: outside,
      runs: WAKES,
      note: "median: complete(handle) on a hibernated agent's pending handle until its provider is called (target 5 ms)",
    },
    {
      name: "(w) late result (the tool's work resolves) to the woken run's first model call, hibernated session",
      unit: "ms",
      ours: inProcess,
      runs: WAKES,
      note: "median: the work's promise resolves until the provider is called (target 5 ms)",
    },
    {
      name: "(w) schedule slot to the woken run's first model call, hibernated session",
      unit: "ms",
      ours: slot,
      runs: WAKES,
      note: "median: from the slot's time (timer lateness included) until the provider is called",
    },
  ];
}
