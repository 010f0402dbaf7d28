import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// A cold start pays for every file it loads (issue 44): an app that traces nothing must not load
// @opentelemetry/api (~40 CommonJS files), and one that registers a provider later is traced from
// then on. Each case is a fresh process, as the module cache is the thing measured.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Runs `code` (an ES module) in a fresh Node process over the sources; its last line as JSON. */
function fresh(code: string): unknown {
  const result = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  if (result.status !== 0) throw new Error(`child failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1)!);
}

const LOADED_OTEL = `Object.keys(createRequire(import.meta.url).cache).filter((file) => file.includes("@opentelemetry")).length`;

describe("OpenTelemetry on a cold start", () => {
  it("an agent nobody traces runs without loading @opentelemetry/api, wakes included", () => {
    const report = fresh(`
import { createRequire } from "node:module";
const { createAgent, scripted } = await import("./index.ts");
const { deliverWake } = await import("./wake.ts");
const agent = createAgent({ provider: scripted([{ text: "Hello." }, { text: "Woken." }]) });
await agent.prompt("Hi");
deliverWake(agent, { id: "wake_1", source: "schedule", queue: "followUp", text: "Time's up", cause: { id: "s1" } });
await new Promise((resolve) => setTimeout(resolve, 50));
await agent.waitForIdle();
console.log(JSON.stringify({ answers: agent.messages.filter((m) => m.role === "assistant").length, otelFiles: ${LOADED_OTEL} }));
agent.stop();`);
    expect(report).toEqual({ answers: 2, otelFiles: 0 });
  });

  it("a provider registered after the import traces the agents created after it", () => {
    const report = fresh(`
const { createAgent, scripted } = await import("./index.ts");
const { trace } = await import("@opentelemetry/api");
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
const agent = createAgent({ provider: scripted([{ text: "Hello." }]) });
await agent.prompt("Hi");
const spans = exporter.getFinishedSpans();
const run = spans.find((span) => span.name.startsWith("invoke_agent"));
const chat = spans.find((span) => span.name.startsWith("chat"));
console.log(JSON.stringify({ names: spans.map((span) => span.name.split(" ")[0]).sort(), nested: chat?.parentSpanContext?.spanId === run?.spanContext().spanId }));
agent.stop();`);
    expect(report).toEqual({ names: ["chat", "invoke_agent"], nested: true });
  });
});
