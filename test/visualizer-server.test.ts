import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import {
  createAgent,
  defineTool,
  scripted,
  type VisualizerMessage,
  visualize,
  visualizeRecording,
} from "../index.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function connect(url: string, origin?: string) {
  const messages: VisualizerMessage[] = [];
  const socket = new WebSocket(`${url.replace("http://", "ws://")}ws`, origin ? { origin } : {});
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once("error", reject);
  });
  socket.on("message", (data) => messages.push(JSON.parse(String(data))));
  cleanups.push(() => socket.close());
  return { socket, messages, opened, send: (command: unknown) => socket.send(JSON.stringify(command)) };
}

const hold = defineTool({
  name: "hold",
  description: "Holds until aborted",
  parameters: z.object({}),
  execute: (_args, { signal }) =>
    new Promise<string>((_resolve, reject) =>
      signal.addEventListener("abort", () => reject(new Error("stopped"))),
    ),
});

async function started(options: Parameters<typeof createAgent>[0]) {
  const agent = createAgent(options);
  const server = await visualize(agent, { port: 0 });
  cleanups.push(
    () => agent.stop(),
    () => server.close(),
  );
  return { agent, server };
}

describe("the visualizer server", () => {
  it("serves the page, the statechart and nothing else, on 127.0.0.1", async () => {
    const { server } = await started({ provider: scripted([]) });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(server.url);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('<script src="app.js"></script>');
    expect((await fetch(`${server.url}app.js`)).status).toBe(200);
    const graph = await (await fetch(`${server.url}graph.json`)).json();
    expect(graph.nodes.map((n: { id: string }) => n.id)).toContain("agent.running.executing");
    expect((await fetch(`${server.url}recording.jsonl`)).status).toBe(404);
    expect((await fetch(`${server.url}../package.json`)).status).toBe(404);
  });

  it("refuses other sites and rebound host names", async () => {
    const { server } = await started({ provider: scripted([]) });
    await expect(connect(server.url, "http://evil.example").opened).rejects.toThrow("403");
    const status = await new Promise<number>((resolve) => {
      request(server.url, { headers: { host: `evil.example:${server.port}` } }, (res) =>
        resolve(res.statusCode!),
      ).end();
    });
    expect(status).toBe(403);
    await connect(server.url, server.url.slice(0, -1)).opened;
  });

  it("sends hello, the history to late pages, and the state only when it changes", async () => {
    const { agent, server } = await started({ provider: scripted([{ text: "Hello there" }]) });
    await agent.prompt("Hi");
    const late = connect(server.url);
    await late.opened;
    await expect
      .poll(() => late.messages.some((m) => m.kind === "event" && m.event.type === "agent_end"))
      .toBe(true);
    expect(late.messages[0]).toMatchObject({ kind: "hello", agentId: agent.id, mode: "live" });
    const states = late.messages.flatMap((m) => (m.kind === "state" ? [JSON.stringify(m.value)] : []));
    expect(states[0]).toBe('"idle"');
    expect(states.at(-1)).toBe('"idle"');
    for (let i = 1; i < states.length; i++) expect(states[i]).not.toBe(states[i - 1]);
    const text = late.messages
      .flatMap((m) => (m.kind === "event" && m.event.type === "message_update" ? [m.event.delta] : []))
      .join("");
    expect(text).toBe("Hello there");
  });

  it("runs the page's commands and answers the ones that fail", async () => {
    const { agent, server } = await started({
      provider: scripted([{ toolCalls: [{ name: "hold" }] }, { text: "Second run" }]),
      tools: [hold],
    });
    const page = connect(server.url);
    await page.opened;
    const errors = () => page.messages.flatMap((m) => (m.kind === "error" ? [m.message] : []));

    page.send({ kind: "prompt", text: "Start from the page" });
    await expect.poll(() => agent.state).toBe("running.executing");
    expect(agent.messages[0]).toMatchObject({ role: "user", content: "Start from the page" });

    page.send({ kind: "steer", text: "Queued from the page" });
    await expect.poll(() => agent.actor.getSnapshot().context.steeringQueue.length).toBe(1);

    page.send({ kind: "approve", toolCallId: "nope" });
    await expect.poll(errors).toEqual([expect.stringContaining('No pending approval for tool call "nope"')]);
    page.socket.send("not json");
    page.send({ kind: "launch" });
    page.send({ kind: "steer", text: "   " });
    await expect.poll(() => errors().length).toBe(4);
    expect(errors().slice(1)).toEqual([
      "The command is not JSON",
      'Unknown command "launch"',
      "Type a message first",
    ]);

    const ended = new Promise((resolve) =>
      agent.events$.subscribe((e) => e.type === "agent_end" && resolve(e.reason)),
    );
    page.send({ kind: "abort" });
    expect(await ended).toBe("aborted");
  });

  it("closes its page connections", async () => {
    const agent = createAgent({ provider: scripted([]) });
    cleanups.push(() => agent.stop());
    const server = await visualize(agent);
    const page = connect(server.url);
    await page.opened;
    const closed = new Promise((resolve) => page.socket.once("close", resolve));
    await server.close();
    await closed;
    await expect(fetch(server.url)).rejects.toThrow();
  });

  it("refuses to replay a broken recording, naming the line", async () => {
    const dir = await mkdtemp(join(tmpdir(), "agent-machine-vis-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, "bad.jsonl");
    await writeFile(file, '{"kind":"hello","t":1}\n{oops\n');
    await expect(visualizeRecording(file)).rejects.toThrow(`${file}:2: not JSON`);
    await writeFile(file, '{"kind":"hello","t":1}\n');
    const server = await visualizeRecording(file);
    cleanups.push(() => server.close());
    expect(server.url).toMatch(/\?replay=recording\.jsonl$/);
    expect(await (await fetch(new URL("recording.jsonl", server.url))).text()).toBe(
      '{"kind":"hello","t":1}\n',
    );
  });
});

describe("a port that is taken", () => {
  it("is reported clearly", async () => {
    const agent = createAgent({ provider: scripted([]) });
    cleanups.push(() => agent.stop());
    const first = await visualize(agent);
    cleanups.push(() => first.close());
    await expect(visualize(agent, { port: first.port })).rejects.toThrow(
      `The visualizer cannot listen on 127.0.0.1:${first.port}: the port is in use`,
    );
  });
});
