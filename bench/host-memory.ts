// What slow and dead clients cost the session host (issue 34 §3): the host's memory (RSS, and the
// heap plus buffers) over a baseline, with
//   reader     a client that reads a 50 MB run as it streams (the reference),
//   never      a client that opens a 50 MB run's stream and never reads,
//   waiting    a 10 MB run waiting on a tool, its client having read it (the reference for:)
//   stalled    20 reconnects to that run that never read.
// Each scenario runs in a process of its own: `npm run bench -- host-memory`, or one of them with
// `node --expose-gc --import tsx bench/host-memory.ts never`.
import { spawnSync } from "node:child_process";
import * as z from "zod";
import { connect, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { createSessionHost, serveNode } from "../http.js";
import { defineTool, scripted } from "../index.js";
import { collectGarbage } from "./harness.js";

const SCENARIOS = ["reader", "never", "waiting", "stalled"] as const;
type Scenario = (typeof SCENARIOS)[number];
const MB = 1024 * 1024;

const scenario = process.argv[2] as Scenario | undefined;
if (scenario === undefined) {
  console.log("session host memory with slow and dead clients (MB over the baseline, after GC)");
  for (const name of SCENARIOS) {
    const child = spawnSync(
      process.execPath,
      ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), name],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
    );
    process.stdout.write(child.stdout);
  }
} else {
  await measure(scenario);
}

async function measure(name: Scenario): Promise<void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const gate = defineTool({
    name: "wait",
    description: "Waits until the bench lets it go",
    parameters: z.object({}),
    execute: async () => {
      await released;
      return "done";
    },
  });
  const tenMb = name === "stalled" || name === "waiting";
  const size = tenMb ? 10 * MB : 50 * MB;
  const text = "0123456789abcdef".repeat(size / 16);
  const host = createSessionHost({
    agent: () => ({
      provider: scripted([
        {
          text,
          chunkSize: 10_000,
          ...(tenMb ? { toolCalls: [{ name: "wait", arguments: {} }] } : {}),
        },
        { text: "Done." },
      ]),
      tools: [gate],
      // Reconnects need the whole run kept (the default keeps 8 MB of events); the others keep the default.
      ...(tenMb ? { eventReplay: { maxEvents: 100_000, maxBytes: 64 * MB } } : {}),
    }),
    basePath: "/api",
    // Loopback only; a function, so that this script measures the host before `authorize` was required too.
    authorize: () => true,
  });
  const server = await serveNode(host.handle);
  const before = await usage();

  const started = request(server.port, "POST", "/api/chat", chatBody());
  if (name === "reader") started.socket.resume();
  const agent = await until(() => host.agent("t1"));
  if (tenMb) {
    await until(() => agent.state === "running.executing" || undefined);
    started.socket.resume();
    const count = name === "stalled" ? 20 : 0;
    const stalled = Array.from({ length: count }, () => request(server.port, "GET", "/api/chat/t1/stream"));
    await sleep(1000);
    const what = count ? "20 stalled reconnects to one 10 MB run" : "a 10 MB run waiting, its client reading";
    report(name, what, before, await usage());
    release();
    for (const client of stalled) client.socket.destroy();
  } else {
    await until(() => (agent.state === "idle" && agent.messages.length > 1) || undefined);
    await sleep(500);
    const what = name === "reader" ? "a client reading a 50 MB run" : "a client never reading a 50 MB run";
    report(name, what, before, await usage());
  }
  started.socket.destroy();
  await host.close();
  await server.close();
}

function chatBody(): string {
  return JSON.stringify({
    id: "t1",
    trigger: "submit-message",
    messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "talk" }] }],
  });
}

/** A raw HTTP/1.1 request whose answer nobody reads (the socket stays paused) unless resumed. */
function request(port: number, method: string, path: string, body?: string): { socket: Socket } {
  const socket = connect(port, "127.0.0.1");
  socket.on("error", () => undefined);
  socket.pause();
  socket.write(
    `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      (body === undefined
        ? "\r\n"
        : `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
  );
  return { socket };
}

interface Usage {
  rss: number;
  heap: number;
}

async function usage(): Promise<Usage> {
  collectGarbage();
  await sleep(100);
  collectGarbage();
  const memory = process.memoryUsage();
  // external includes the ArrayBuffers (the encoded bytes waiting for a client).
  return { rss: memory.rss, heap: memory.heapUsed + memory.external };
}

function report(name: string, what: string, before: Usage, after: Usage): void {
  const mb = (bytes: number) => `${bytes >= 0 ? "+" : ""}${(bytes / MB).toFixed(0)} MB`;
  console.log(
    `  ${name.padEnd(8)} ${what.padEnd(40)} RSS ${mb(after.rss - before.rss).padStart(8)}   heap+buffers ${mb(after.heap - before.heap).padStart(8)}`,
  );
}

async function until<T>(check: () => T | undefined, timeoutMs = 120_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() - start > timeoutMs) throw new Error("the bench waited too long");
    await sleep(20);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
