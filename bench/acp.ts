// First message chunk at an ACP client after the provider's first delta: `serveAcp` in a child
// process over stdio (localhost, newline-delimited JSON-RPC), the official SDK's client here. The
// provider stamps its delta with the time it yielded it (performance.timeOrigin + now, comparable
// across processes); the client subtracts it from the time the chunk reached its handler.
// Run: node --import tsx bench/acp.ts (npm run bench -- acp). ACP_PROMPTS=n sets the prompts.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { client as acpClient, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const PROMPTS = Number(process.env.ACP_PROMPTS ?? 300);
const WARMUP = 30;
const here = dirname(fileURLToPath(import.meta.url));
const child = spawn(process.execPath, ["--import", "tsx", join(here, "acp-serve-fixture.ts")], {
  stdio: ["pipe", "pipe", "inherit"],
});

let firstChunk: ((latencyMs: number) => void) | undefined;
const app = acpClient().onNotification("session/update", ({ params }) => {
  const update = params.update;
  if (update.sessionUpdate !== "agent_message_chunk" || update.content.type !== "text") return;
  const arrived = performance.timeOrigin + performance.now();
  firstChunk?.(arrived - Number(update.content.text));
  firstChunk = undefined;
});
const connection = app.connect(
  ndJsonStream(
    Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
  ),
);
const agent = connection.agent;
await agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
const { sessionId } = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });

const latencies: number[] = [];
for (let i = 0; i < WARMUP + PROMPTS; i++) {
  const latency = new Promise<number>((resolve) => (firstChunk = resolve));
  await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] });
  const ms = await latency;
  if (i >= WARMUP) latencies.push(ms);
}
child.stdin.end();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
console.log(
  `ACP first message chunk after the provider's first delta (stdio, ${PROMPTS} prompts): median ${at(0.5).toFixed(2)} ms · p90 ${at(0.9).toFixed(2)} ms · max ${at(1).toFixed(2)} ms (aim: 5 ms at the median)`,
);
