// What OpenTelemetry tracing costs an agent, in one process: the same workload with telemetry off
// (`telemetry: false`), with the default and no tracer provider registered (what every user
// without an SDK gets: this must cost nothing), and traced into an SDK that drops the spans.
// Run: node --expose-gc --import tsx bench/telemetry.ts (npm run bench -- telemetry).
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base";
import { type AgentOptions, createAgent, type ScriptedStep } from "../index.js";
import { noopTool, stepUsage } from "./bench-tools.js";
import { benchRuns, measure, median, type Sample } from "./harness.js";
import { leanScripted } from "./lean-scripted.js";

const TURNS = 2_000;
const DELTAS = 20_000;

type Variant = { name: string; telemetry: AgentOptions["telemetry"] | "default" };
const sdk = new BasicTracerProvider(); // no processor: spans are made and dropped
const variants: Variant[] = [
  { name: "telemetry: false", telemetry: false },
  { name: "default, no tracer provider", telemetry: "default" },
  { name: "traced (SDK, spans dropped)", telemetry: { tracerProvider: sdk } },
];

function options(variant: Variant): Partial<AgentOptions> {
  return variant.telemetry === "default" ? {} : { telemetry: variant.telemetry };
}

async function turns(variant: Variant): Promise<Sample> {
  const provider = leanScripted((_request, call): ScriptedStep =>
    call < TURNS - 1
      ? { toolCalls: [{ name: "noop", arguments: { turn: call } }], usage: stepUsage }
      : { text: "done", usage: stepUsage },
  );
  const agent = createAgent({ provider, tools: [noopTool], systemPrompt: "bench", ...options(variant) });
  agent.events$.subscribe(() => {});
  const sample = await measure(() => agent.prompt("go"));
  if (agent.messages.length !== 2 * TURNS) throw new Error(`ended with ${agent.messages.length} messages`);
  agent.stop();
  return sample;
}

async function deltas(variant: Variant): Promise<Sample> {
  const text = "0123456789".repeat(DELTAS);
  const provider = leanScripted([{ text, chunkSize: 10, usage: stepUsage }]);
  const agent = createAgent({ provider, ...options(variant) });
  agent.events$.subscribe(() => {});
  const sample = await measure(() => agent.prompt("go"));
  agent.stop();
  return sample;
}

async function compare(
  workload: (variant: Variant) => Promise<Sample>,
  per: number,
  unit: string,
  label: string,
) {
  const runs = benchRuns() + 2;
  const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
  for (const variant of variants) await workload(variant); // warm-up
  for (let run = 0; run < runs; run++) {
    // Rotate the order each round, so no variant always runs first (or right after a collection).
    for (let i = 0; i < variants.length; i++) {
      const variant = variants[(run + i) % variants.length]!;
      samples.get(variant.name)!.push(await workload(variant));
    }
  }
  const base = median(samples.get(variants[0]!.name)!.map((s) => s.cpuMs));
  console.log(`${label} (${runs} runs each, medians, CPU time)`);
  for (const variant of variants) {
    const cpu = median(samples.get(variant.name)!.map((s) => s.cpuMs));
    const wall = median(samples.get(variant.name)!.map((s) => s.wallMs));
    console.log(
      `  ${variant.name.padEnd(30)} ${((cpu * 1000) / per).toFixed(2).padStart(8)} ${unit} CPU  ` +
        `${((wall * 1000) / per).toFixed(2).padStart(8)} ${unit} wall   ×${(cpu / base).toFixed(3)} of telemetry: false`,
    );
  }
}

await compare(turns, TURNS, "µs/turn", `${TURNS.toLocaleString("en")} one-tool turns`);
await compare(deltas, DELTAS, "µs/delta", `one answer of ${DELTAS.toLocaleString("en")} text deltas`);
