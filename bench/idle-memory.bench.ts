import { createAgent, type ScriptedStep } from "../index.js";
import { noopTool, sleepTool, stepUsage } from "./bench-tools.js";
import { type BenchResult, benchRuns, collectGarbage, gcExposed, median, sideBySide } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";
import { createPiAgent, piNoopTool, piSleepTool } from "./pi-adapter.js";

/** Agents held at once. */
export const AGENTS = 1_000;

const systemPrompt = "You are a terse assistant used in a memory benchmark.";
const greeting = () =>
  leanScripted((): ScriptedStep => ({ text: "Hello, how can I help?", usage: stepUsage }));

/** Heap bytes per agent while `AGENTS` agents made by `create` are alive, between two full collections. */
async function heapPerAgent<T>(
  create: () => T,
  warmUp: (agent: T) => Promise<unknown>,
  release: (agent: T) => void,
): Promise<number> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const agents: T[] = [];
  for (let i = 0; i < AGENTS; i++) agents.push(create());
  for (const agent of agents) await warmUp(agent);
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  for (const agent of agents) release(agent);
  agents.length = 0;
  return (after - before) / AGENTS;
}

function measureBoth(afterOneRun: boolean, hibernate: "whenIdle" | "manual" = "manual") {
  return sideBySide({
    ours: () =>
      heapPerAgent(
        () => createAgent({ provider: greeting(), tools: [noopTool, sleepTool], systemPrompt, hibernate }),
        // After the run the agent hibernates in a microtask (whenIdle): let it.
        async (agent) => {
          if (afterOneRun) await agent.prompt("Hi");
          await Promise.resolve();
        },
        (agent) => agent.stop(),
      ),
    pi: () =>
      heapPerAgent(
        () => createPiAgent(greeting(), [piNoopTool, piSleepTool], systemPrompt),
        (agent) => (afterOneRun ? agent.prompt("Hi") : Promise.resolve()),
        () => {},
      ),
  });
}

/** (d) Heap per idle agent, 1,000 agents alive: fresh, and after one short text run each. */
export async function run(): Promise<BenchResult[]> {
  if (!gcExposed()) {
    throw new Error("The memory benchmark needs node --expose-gc (npm run bench sets it)");
  }
  const kb = (samples: number[]) => median(samples) / 1024;
  const fresh = await measureBoth(false);
  const used = await measureBoth(true);
  const freshAsleep = await measureBoth(false, "whenIdle");
  const usedAsleep = await measureBoth(true, "whenIdle");
  const runs = benchRuns();
  return [
    {
      name: `(d) heap per idle agent, ${AGENTS.toLocaleString("en")} fresh agents`,
      unit: "KB/agent",
      ours: kb(fresh.ours),
      pi: kb(fresh.pi),
      runs,
      note: "2 tools, a system prompt, own provider each; heapUsed after gc()",
    },
    {
      name: `(d) heap per idle agent, ${AGENTS.toLocaleString("en")} agents after one text run`,
      unit: "KB/agent",
      ours: kb(used.ours),
      pi: kb(used.pi),
      runs,
      note: "transcript of 2 messages each",
    },
    {
      name: `(d) heap per idle agent, ${AGENTS.toLocaleString("en")} fresh agents, hibernate: "whenIdle"`,
      unit: "KB/agent",
      ours: kb(freshAsleep.ours),
      pi: kb(freshAsleep.pi),
      runs,
      note: "asleep from the start: no actor until something needs one",
    },
    {
      name: `(d) heap per idle agent, ${AGENTS.toLocaleString("en")} agents after one text run, hibernate: "whenIdle"`,
      unit: "KB/agent",
      ours: kb(usedAsleep.ours),
      pi: kb(usedAsleep.pi),
      runs,
      note: "asleep after the run: the persisted snapshot as JSON, no actor",
    },
  ];
}
