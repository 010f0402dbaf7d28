// An MCP tool call's overhead over the same prompt in process: a fresh agent on a lean scripted
// model answers one prompt, (1) by `agent.prompt` directly, (2) as a tool call of
// `createMcpAgentServer` over the SDK's in-memory transport (the protocol alone), (3) over
// Streamable HTTP on localhost (`createMcpHttpHandler` + `serveNode`). Medians and p90s.
// Run: node --import tsx bench/mcp-server.ts (npm run bench -- mcp-server). MCP_CALLS=n sets the calls.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { serveNode } from "../http.js";
import { createAgent } from "../index.js";
import { createMcpAgentServer, createMcpHttpHandler, type McpAgentTool } from "../mcp-server.js";
import { leanScripted } from "./lean-scripted.js";

const CALLS = Number(process.env.MCP_CALLS ?? 300);
const WARMUP = 30;
const tool: McpAgentTool = {
  description: "Answers",
  create: () => createAgent({ provider: leanScripted([{ text: "the answer" }]) }),
};

async function timed(run: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const started = performance.now();
    await run();
    if (i >= WARMUP) samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b);
}
const at = (s: number[], q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;

const direct = await timed(async () => {
  const agent = tool.create();
  await agent.prompt("go");
  agent.stop();
});

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await createMcpAgentServer({ answer: tool }).connect(serverSide);
const memoryClient = new Client({ name: "bench", version: "1" });
await memoryClient.connect(clientSide);
const memory = await timed(() => memoryClient.callTool({ name: "answer", arguments: { prompt: "go" } }));

const handler = createMcpHttpHandler({ agents: { answer: tool }, authorize: "none-local-only" });
const server = await serveNode(handler);
const httpClient = new Client({ name: "bench", version: "1" });
await httpClient.connect(new StreamableHTTPClientTransport(new URL(server.url)));
const http = await timed(() => httpClient.callTool({ name: "answer", arguments: { prompt: "go" } }));
await httpClient.close();
await memoryClient.close();
await handler.close();
await server.close();

const line = (name: string, s: number[]) =>
  `${name}: median ${at(s, 0.5).toFixed(2)} ms · p90 ${at(s, 0.9).toFixed(2)} ms` +
  (s === direct
    ? ""
    : ` · overhead at the median ${(at(s, 0.5) - at(direct, 0.5)).toFixed(2)} ms (aim: 2 ms)`);
console.log(`One prompt, ${CALLS} calls each:`);
console.log(line("  in process (agent.prompt)", direct));
console.log(line("  MCP tool call, in-memory transport", memory));
console.log(line("  MCP tool call, Streamable HTTP on localhost", http));
