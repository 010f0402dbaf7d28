// The durable turn's agent without Restate (issue 44): `npx tsx bench/durable-agent-alone.ts`. The
// journaled agent a durable run builds, on a journal that runs every effect at once, in a fresh
// process: 100 concurrent sessions × 5 turns (4 one-tool turns, then an answer) per round, the
// first round a warm-up, then ROUNDS rounds. Its CPU per session is the part of a durable session's
// service CPU (bench/durable-cpu.ts) that is the agent's own, before any journal entry.
import { z } from "zod";
import { type AgentOptions, defineTool, type ScriptedStep, scripted } from "../index.js";
import { createJournaledAgent } from "../agent/create-agent.js";
import type { EffectJournal } from "../core/effect-journal.js";

const CONCURRENT = 100;
const TURNS = 5;
const ROUNDS = Number(process.env.ROUNDS ?? 6);

/** The agent of bench/durable-cpu.ts: `turns` model calls, one instant tool call each but the last. */
function benchAgent(turns: number): AgentOptions {
  const noop = defineTool({
    name: "noop",
    description: "Does nothing",
    parameters: z.object({ turn: z.number() }),
    readOnly: true,
    execute: ({ turn }) => `ok ${turn}`,
  });
  const provider = scripted(
    (request): ScriptedStep => {
      const step = request.messages.filter((m) => m.role === "assistant").length;
      return step < turns - 1
        ? { toolCalls: [{ id: `c${step}`, name: "noop", arguments: { turn: step } }] }
        : { text: "done" };
    },
    { record: false },
  );
  return { provider, tools: [noop] };
}

/** A journal that records nothing: every effect runs at once. */
const direct = (): EffectJournal => ({
  idPrefix: "bench-",
  now: Date.now,
  modelCall: (_turn, run) => run(),
  toolCall: (_id, run) => run(),
  permission: (_id, run) => run(),
  approval: () => new Promise(() => {}),
  compaction: (_turn, run) => run(),
  drain: async () => [],
  timer: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
});

const options = benchAgent(TURNS);
async function round(): Promise<number> {
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, n) => {
      const agent = createJournaledAgent({ ...options, id: `s${n}`, messages: [] }, direct());
      agent.events$.subscribe(() => {});
      const result = await agent.prompt("go");
      agent.stop();
      if (result.messages.length !== 2 * TURNS) throw new Error(`${result.messages.length} messages`);
    }),
  );
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / CONCURRENT;
}

const warm = await round();
const rounds: number[] = [];
for (let i = 0; i < ROUNDS; i++) rounds.push(await round());
console.log(
  `agent alone, CPU per session (${CONCURRENT} concurrent × ${TURNS} turns): warm-up round ${warm.toFixed(2)} ms, ` +
    `then ${rounds.map((ms) => ms.toFixed(2)).join(", ")} ms`,
);
