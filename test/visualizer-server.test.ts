import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import { apply, emptyModel, laneStatus } from "../visualizer/page/model.js";
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

/** A WebSocket client of the page's server: `url` is the page's (with its token) unless told otherwise. */
function connect(url: string, origin?: string, token = new URL(url).searchParams.get("token") ?? "") {
  const messages: VisualizerMessage[] = [];
  const { host } = new URL(url);
  const socket = new WebSocket(
    `ws://${host}/ws${token ? `?token=${encodeURIComponent(token)}` : ""}`,
    origin ? { origin } : {},
  );
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once("error", reject);
  });
  socket.on("message", (data) => {
    const message = JSON.parse(String(data));
    // The history a page gets on connecting comes in one backlog message: taken one by one.
    if (message.kind === "backlog") messages.push(...message.messages);
    else messages.push(message);
  });
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
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43}$/);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    const base = `http://127.0.0.1:${server.port}/`;
    const page = await fetch(server.url);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toContain('<script type="module" src="app.js"></script>');
    for (const file of ["app.js", "model.js", "chart.js", "style.css", "favicon.svg", "favicon.ico"]) {
      expect((await fetch(`${base}${file}`)).status, file).toBe(200);
    }
    const graphs = await (await fetch(`${base}graph.json`)).json();
    expect(graphs.agent.nodes.map((n: { id: string }) => n.id)).toContain("agent.running.executing");
    expect(graphs.toolExecution.nodes.map((n: { id: string }) => n.id)).toContain("toolExecution.running");
    expect(graphs.toolCall.nodes.map((n: { id: string }) => n.id)).toContain("toolCall.awaitingApproval");
    expect((await fetch(`${base}recording.jsonl`)).status).toBe(404);
    expect((await fetch(`${base}../package.json`)).status).toBe(404);
    expect((await fetch(`${base}server.ts`)).status).toBe(404);
  });

  it("forbids framing and other origins on every answer", async () => {
    const { server } = await started({ provider: scripted([]) });
    const base = `http://127.0.0.1:${server.port}/`;
    for (const url of [server.url, `${base}app.js`, `${base}nothing-here`]) {
      const response = await fetch(url);
      expect(response.headers.get("x-frame-options"), url).toBe("DENY");
      const policy = response.headers.get("content-security-policy") ?? "";
      expect(policy, url).toContain("frame-ancestors 'none'");
      expect(policy, url).toContain("script-src 'self'");
      expect(response.headers.get("referrer-policy"), url).toBe("no-referrer");
    }
  });

  it("lets no client connect without the page's token, browser or not", async () => {
    const { server } = await started({ provider: scripted([]) });
    const own = `http://127.0.0.1:${server.port}`;
    // A local process sends no Origin: only the token lets it in.
    await expect(connect(server.url, undefined, "").opened).rejects.toThrow("403");
    await expect(connect(server.url, undefined, "wrong-token").opened).rejects.toThrow("403");
    await expect(connect(server.url, own, "").opened).rejects.toThrow("403");
    await connect(server.url).opened;
    await connect(server.url, own).opened;
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
    await connect(server.url, `http://127.0.0.1:${server.port}`).opened;
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

  it("gives a page that connects after the history limit the state, transcript, approvals and lanes", async () => {
    const agent = createAgent({
      provider: scripted([
        { text: "Looking first.", toolCalls: [{ name: "hold", id: "call_look" }] },
        {
          toolCalls: [
            { name: "hold", id: "call_deploy" },
            { name: "hold", id: "call_migrate" },
          ],
        },
      ]),
      tools: [hold],
      permissions: { check: ({ toolCall }) => ({ behavior: toolCall.id === "call_look" ? "allow" : "ask" }) },
    });
    // Ten messages of history: far fewer than one run sends.
    const server = await visualize(agent, { historyLimit: 10 });
    cleanups.push(
      () => agent.stop(),
      () => server.close(),
    );
    const run = agent.prompt("Deploy it");
    await expect.poll(() => agent.state).toBe("running.executing");
    agent.abort(); // ends the first call, so the second turn asks for approval
    await run;
    const second = agent.prompt("Deploy it again");
    await expect.poll(() => agent.pendingApprovals().length).toBe(2);

    const late = connect(server.url);
    await late.opened;
    await expect.poll(() => late.messages.length).toBeGreaterThanOrEqual(13);
    expect(late.messages[0]).toMatchObject({ kind: "hello" });
    expect(late.messages[1]).toMatchObject({ kind: "catch_up" });
    // hello, catch_up, then the 10 messages kept word for word, and the mark that live follows
    expect(late.messages.length).toBe(13);
    expect(late.messages[12]).toMatchObject({ kind: "caught_up" });

    const model = emptyModel();
    for (const message of late.messages) apply(model, message);
    expect(model.stateName).toBe("running.executing");
    expect([...model.approvals.keys()].sort()).toEqual(["call_deploy", "call_migrate"]);
    expect(model.messages.map((m) => (m.role === "user" ? m.content : m.role))).toEqual([
      "Deploy it",
      "assistant",
      "toolResult",
      "Deploy it again",
      "assistant",
    ]);
    expect(model.runs.map((r) => [r.run, r.prompt, r.reason])).toEqual([
      [1, "Deploy it", "aborted"],
      [2, "Deploy it again", undefined],
    ]);
    const lanes = [...model.lanes.values()].map((l) => [l.id, l.run, l.turn, laneStatus(l)]);
    expect(lanes).toEqual([
      ["call_look", 1, 1, "aborted"],
      ["call_deploy", 2, 1, "awaiting approval"],
      ["call_migrate", 2, 1, "awaiting approval"],
    ]);
    agent.abort();
    await second;
  });

  it("sends pages tool results as previews, and a late page the last messages only, the rest folded with true counts", async () => {
    const big = defineTool({
      name: "big",
      description: "Returns 50 KB",
      parameters: z.object({ n: z.number() }),
      execute: async () => "x".repeat(50_000),
    });
    const turns = 12;
    const agent = createAgent({
      provider: scripted([
        ...Array.from({ length: turns }, (_, turn) => ({
          toolCalls: [
            { name: "big", arguments: { n: 2 * turn } },
            { name: "big", arguments: { n: 2 * turn + 1 } },
          ],
        })),
        { text: "All done." },
      ]),
      tools: [big],
    });
    const server = await visualize(agent, { latePageMessages: 30 });
    cleanups.push(
      () => agent.stop(),
      () => server.close(),
    );
    await agent.prompt("Go");

    const late = connect(server.url);
    let bytes = 0;
    let frames = 0;
    late.socket.on("message", (data) => {
      bytes += String(data).length;
      frames++;
    });
    await late.opened;
    await expect.poll(() => late.messages.at(-1)?.kind).toBe("caught_up");
    expect(late.messages[0]).toMatchObject({ kind: "hello" });
    expect(late.messages[1]).toMatchObject({ kind: "catch_up" });
    expect(late.messages.length).toBe(33); // hello, catch_up, the last 30 messages word for word, caught_up
    expect(frames).toBe(4); // the 30 travel as one backlog message

    const model = emptyModel();
    for (const message of late.messages) apply(model, message);
    // Counts are true though most of the run arrived folded.
    expect(model.toolCalls).toBe(2 * turns);
    expect(model.runs[0]).toMatchObject({ calls: 2 * turns, turns: turns + 1, reason: "stop" });
    expect(model.lanes.size).toBe(2 * turns);
    const results = model.messages.filter((m) => m.role === "toolResult");
    expect(results.length).toBe(2 * turns);
    for (const result of results) {
      const text = (result.content as { text: string }[])[0]!.text;
      expect(text.startsWith("x".repeat(2000))).toBe(true);
      expect(text).toContain("48,000 more characters not sent to the page");
    }
    expect(model.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "All done." }],
    });
    // 24 results of 50 KB, sent twice each (the event and the transcript) would be 2.4 MB.
    expect(bytes).toBeLessThan(400_000);
    // The agent itself keeps every character.
    const kept = agent.messages.filter((m) => m.role === "toolResult");
    expect((kept[0]!.content[0] as { text: string }).text.length).toBe(50_000);
  });

  it("takes a steering message far larger than 64 KiB (a pasted log)", async () => {
    const { agent, server } = await started({
      provider: scripted([{ toolCalls: [{ name: "hold" }] }]),
      tools: [hold],
    });
    const page = connect(server.url);
    await page.opened;
    expect(page.messages[0]).toMatchObject({ kind: "hello", maxCommandBytes: 16 * 1024 * 1024 });
    const run = agent.prompt("Start");
    await expect.poll(() => agent.state).toBe("running.executing");
    const trace = Array.from({ length: 6000 }, (_, i) => `    at frame${i} (file.ts:${i}:1)`).join("\n");
    expect(trace.length).toBeGreaterThan(200_000);
    page.send({ kind: "steer", text: trace });
    await expect.poll(() => agent.actor.getSnapshot().context.steeringQueue.length).toBe(1);
    expect(agent.actor.getSnapshot().context.steeringQueue[0]).toMatchObject({ content: trace });
    expect(page.socket.readyState).toBe(WebSocket.OPEN);
    agent.abort();
    await run;
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

  it("keeps a retried attempt's message out of the page's transcript", async () => {
    const { agent, server } = await started({
      provider: scripted([
        { text: "half an ans", error: { kind: "overloaded", message: "Overloaded" } },
        { text: "The whole answer" },
      ]),
      retry: { baseDelayMs: 1, maxDelayMs: 2 },
    });
    const page = connect(server.url);
    await page.opened;
    await agent.prompt("Hi");
    await expect
      .poll(() => page.messages.some((m) => m.kind === "event" && m.event.type === "agent_end"))
      .toBe(true);
    const model = emptyModel();
    for (const message of page.messages) apply(model, message);
    expect(model.messages).toEqual([
      expect.objectContaining({ role: "user", content: "Hi" }),
      expect.objectContaining({ role: "assistant", content: [{ type: "text", text: "The whole answer" }] }),
    ]);
    expect(model.streaming).toBeNull();
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
    expect(server.url).toBe(
      `http://127.0.0.1:${server.port}/?token=${server.token}&replay=recordings%2Fbad.jsonl`,
    );
    const recording = `http://127.0.0.1:${server.port}/recordings/bad.jsonl`;
    expect((await fetch(recording)).status).toBe(403);
    expect(await (await fetch(`${recording}?token=${server.token}`)).text()).toBe('{"kind":"hello","t":1}\n');
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
