// What an MCP server's tool costs our agent over calling the same function in process: one tool
// call through `mcpTools` (the v2 SDK client) against the v2 reference server speaking 2026-07-28
// (stateless, per-request envelope) and against the v1 server speaking 2025-11-25 (a session), both
// on localhost over Streamable HTTP, beside the same function as an in-process tool. Medians, p90s,
// and the overhead at the median.
// Run: node --import tsx bench/mcp-client.ts (npm run bench -- mcp-client). MCP_CALLS=n sets the calls.
import { z } from "zod";
import { defineTool, mcpTools, type Tool } from "../index.js";
import { runTool } from "../testing.js";
import { httpFloor } from "./http-floor.js";
import { serveLegacyMcp, serveModernMcp } from "../test/fixtures/mcp-revision-servers.js";

const CALLS = Number(process.env.MCP_CALLS ?? 300);
const WARMUP = 30;

async function timed(tool: Tool): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const started = performance.now();
    const run = await runTool(tool, { message: "hi", times: 2 });
    if (run.text !== "hi hi") throw new Error(`unexpected answer: ${run.text}`);
    if (i >= WARMUP) samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}
const at = (s: number[], q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;

const local = defineTool({
  name: "echo",
  description: "Echoes a message back",
  parameters: z.object({ message: z.string(), times: z.number().int().optional() }),
  execute: async ({ message, times }) =>
    Array(times ?? 1)
      .fill(message)
      .join(" "),
});
const direct = await timed(local);

const results: [string, number[], string][] = [];
for (const [name, serve] of [
  ["2026-07-28 (v2 reference server)", serveModernMcp],
  ["2025-11-25 (v1 server, a session)", serveLegacyMcp],
] as const) {
  const served = await serve();
  const set = await mcpTools({ url: served.url });
  const echo = set.tools.find((t) => t.name === "echo")!;
  results.push([name, await timed(echo), set.client.getNegotiatedProtocolVersion() ?? "?"]);
  await set.close();
  await served.close();
}

const floor = await httpFloor(CALLS);
const line = (name: string, s: number[]) =>
  `${name}: median ${at(s, 0.5).toFixed(2)} ms · p90 ${at(s, 0.9).toFixed(2)} ms` +
  (s === direct
    ? ""
    : ` · overhead at the median ${(at(s, 0.5) - at(direct, 0.5)).toFixed(2)} ms` +
      ` (${(at(s, 0.5) / at(floor, 0.5)).toFixed(1)}× the HTTP floor)`);
console.log(`One tool call, ${CALLS} calls each:`);
console.log(
  `  floor: one fetch POST to a localhost JSON handler: median ${at(floor, 0.5).toFixed(2)} ms · p90 ${at(floor, 0.9).toFixed(2)} ms`,
);
console.log(line("  in process (the same function)", direct));
for (const [name, samples, negotiated] of results)
  console.log(line(`  mcpTools, ${name}, negotiated ${negotiated}`, samples));
