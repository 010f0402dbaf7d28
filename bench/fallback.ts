/**
 * What a fallback chain of three costs per model call when its first model answers: the agent's
 * CPU time per turn with the chain against the same model alone (2,000 one-tool turns, medians of
 * interleaved runs), and the chain's own work per call measured alone (the plan, the breaker's
 * bookkeeping, the request's vendor filter over a 40-message transcript).
 *
 *   npm run bench -- fallback     # or: node --expose-gc --import tsx bench/fallback.ts
 */
import { createAgent, fallback, type Message, type Provider, withoutOtherVendorsState } from "../index.js";
import { noopTool } from "./bench-tools.js";
import { benchRuns, measure } from "./harness.js";
import { expectedMessages, oneToolTurns } from "./turn-overhead.bench.js";

const TURNS = 2_000;

async function cpuPerTurnUs(provider: () => Provider): Promise<number> {
  const agent = createAgent({ provider: provider(), tools: [noopTool], systemPrompt: "bench" });
  const sample = await measure(() => agent.prompt("go"));
  if (agent.messages.length !== expectedMessages(TURNS))
    throw new Error(`ended with ${agent.messages.length} messages`);
  agent.stop();
  return (sample.cpuMs * 1000) / TURNS;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const alone = () => oneToolTurns(TURNS);
// The second and third models are never asked: the first answers every call.
const chained = () => fallback([oneToolTurns(TURNS), oneToolTurns(TURNS), oneToolTurns(TURNS)]);

/** The chain's own work per call: what the model stream does for a provider with a plan. */
function chainWorkUs(): number {
  const chain = fallback([oneToolTurns(1), oneToolTurns(1), oneToolTurns(1)]);
  const messages: Message[] = Array.from({ length: 40 }, (_, i) =>
    i % 2
      ? {
          role: "assistant",
          provider: "scripted",
          model: "scripted",
          content: [{ type: "text", text: `answer ${i}` }],
          stopReason: "stop",
          usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
          timestamp: 0,
        }
      : { role: "user", content: `question ${i}`, timestamp: 0 },
  );
  const request = { messages, tools: [] };
  const calls = 200_000;
  let kept = 0;
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const plan = chain.plan!(request);
    const first = plan.models[0]!;
    kept += withoutOtherVendorsState(messages, first.id).length;
    plan.settled?.(first, undefined);
  }
  const cpu = process.cpuUsage(start);
  if (kept !== calls * messages.length) throw new Error("the filter changed messages it must keep");
  return (cpu.user + cpu.system) / calls;
}

const runs = Math.max(5, benchRuns());
// Warm both paths up, then interleave them so load changes hit both alike.
await cpuPerTurnUs(alone);
await cpuPerTurnUs(chained);
const plain: number[] = [];
const chain: number[] = [];
for (let i = 0; i < runs; i++) {
  plain.push(await cpuPerTurnUs(alone));
  chain.push(await cpuPerTurnUs(chained));
}
const work = median(Array.from({ length: 5 }, chainWorkUs));
console.log(`fallback chain of three, first model answers (${runs} runs of ${TURNS} turns, medians)`);
console.log(`  agent CPU per turn, model alone:      ${median(plain).toFixed(2)} µs`);
console.log(`  agent CPU per turn, chain of three:   ${median(chain).toFixed(2)} µs`);
console.log(`  difference per call:                  ${(median(chain) - median(plain)).toFixed(2)} µs`);
console.log(`  the chain's own work per call, alone: ${work.toFixed(3)} µs (target 5 µs)`);
