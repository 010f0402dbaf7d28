import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import { sanitize } from "../browser.js";
import { createAgent, createInspectorRelay, defineTool, scripted, visualize } from "../index.js";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A WebSocket client; `opened` rejects with `HTTP <status>` when refused. */
function client(url: string) {
  const received: string[] = [];
  const socket = new WebSocket(url);
  const opened = new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
    socket.once("unexpected-response", (_request, response) =>
      reject(new Error(`HTTP ${response.statusCode}`)),
    );
  });
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  socket.on("message", (data) => received.push(data.toString()));
  cleanups.push(() => socket.terminate());
  return { socket, opened, closed, received };
}

const withoutToken = (url: string) => {
  const bare = new URL(url);
  bare.search = "";
  return bare.href;
};

/** Waits until `check` holds, or fails after `ms`. */
async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("the Stately inspector relay, attacked", () => {
  it("answers no local client without its token: neither the page nor the socket", async () => {
    const relay = await createInspectorRelay();
    cleanups.push(() => relay.close());
    const sender = client(relay.wsUrl);
    await sender.opened;
    sender.socket.send(JSON.stringify({ type: "@xstate.actor", sessionId: "x", secret: "transcript" }));

    // Another local process, with the port but not the token.
    await expect(client(withoutToken(relay.wsUrl)).opened).rejects.toThrow("HTTP 403");
    await expect(client(`${withoutToken(relay.wsUrl)}?token=wrong`).opened).rejects.toThrow("HTTP 403");
    expect((await fetch(withoutToken(relay.url))).status).toBe(403);
    // The page itself has it, and so gets in.
    const page = await fetch(relay.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`new WebSocket("${relay.wsUrl}")`);
  });

  it("its page, whose URL carries the token, sends the inspector's site no referrer", async () => {
    const relay = await createInspectorRelay();
    cleanups.push(() => relay.close());
    const page = await fetch(relay.url);
    expect(await page.text()).toContain('<iframe id="inspector" src="https://stately.ai/inspect"');
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("keeps a bounded backlog however many registrations a client sends", async () => {
    const relay = await createInspectorRelay({ maxRegistrations: 10, maxBacklogBytes: 1024 * 1024 });
    cleanups.push(() => relay.close());
    const sender = client(relay.wsUrl);
    const watcher = client(relay.wsUrl);
    await Promise.all([sender.opened, watcher.opened]);
    const big = "x".repeat(64 * 1024);
    for (let i = 0; i < 50; i++)
      sender.socket.send(JSON.stringify({ type: "@xstate.actor", sessionId: `a${i}`, definition: big }));
    sender.socket.send(JSON.stringify({ type: "@xstate.event", sessionId: "last" }));

    await until(() => watcher.received.some((data) => data.includes('"last"')), "the relay to take it all");
    // A page that connects late gets the newest registrations, not all 50 (3.2 MB).
    const late = client(relay.wsUrl);
    await late.opened;
    await until(() => late.received.some((data) => data.includes('"last"')), "the last event");
    const registrations = late.received.filter((data) => data.includes('"@xstate.actor"'));
    expect(registrations).toHaveLength(10);
    expect(JSON.parse(registrations[0]!).sessionId).toBe("a40");
  });

  it("closes a client that does not read instead of buffering for it without bound", async () => {
    const relay = await createInspectorRelay({ maxClientBufferBytes: 256 * 1024, bufferSize: 1 });
    cleanups.push(() => relay.close());
    const slow = client(relay.wsUrl);
    await slow.opened;
    slow.socket.pause(); // reads nothing from now on
    const sender = client(relay.wsUrl);
    await sender.opened;
    const chunk = JSON.stringify({ type: "@xstate.event", data: "y".repeat(256 * 1024) });
    for (let i = 0; i < 200; i++) sender.socket.send(chunk); // 50 MiB
    await until(() => sender.socket.bufferedAmount === 0, "the sender to send it all", 20_000);
    // Let the relay relay it, then let the slow client read again: its connection was cut short.
    await new Promise((resolve) => setTimeout(resolve, 300));
    slow.socket.resume();
    await slow.closed;
    expect(slow.received.length).toBeLessThan(200);
  }, 30_000);
});

describe("the visualizer server, attacked by a slow page", () => {
  it("closes a page that does not read instead of buffering for it without bound", async () => {
    const loud = defineTool({
      name: "loud",
      description: "Reports progress, a lot of it",
      parameters: z.object({}),
      execute: async (_args, { onProgress }) => {
        for (let i = 0; i < 400; i++) {
          onProgress(`${i} ${"z".repeat(1_900)}`);
          if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
        }
        return "done";
      },
    });
    const agent = createAgent({
      provider: scripted(
        Array.from({ length: 20 }, () => [
          { toolCalls: [{ name: "loud", arguments: {} }] },
          { text: "ok" },
        ]).flat(),
      ),
      tools: [loud],
    });
    cleanups.push(() => agent.stop());
    const server = await visualize(agent, { maxClientBufferBytes: 64 * 1024, historyLimit: 10 });
    cleanups.push(() => server.close());
    const wsUrl = `ws://127.0.0.1:${server.port}/ws?token=${encodeURIComponent(server.token)}`;
    const slow = client(wsUrl);
    const fast = client(wsUrl);
    await Promise.all([slow.opened, fast.opened]);
    slow.socket.pause();
    for (let run = 0; run < 20; run++) await agent.prompt("shout"); // 16 MB of progress
    slow.socket.resume();
    await slow.closed;
    // The page that keeps up is not cut off.
    expect(fast.socket.readyState).toBe(WebSocket.OPEN);
    expect(fast.received.length).toBeGreaterThan(slow.received.length);
  }, 30_000);
});

describe("the visualizer's redaction", () => {
  it("redacts by name whatever the key's case or plural, and by value in any text; token counts stay", () => {
    const out = sanitize({
      accessTokens: "at-1",
      apiTokens: "apt-2",
      private_key: "pk-3",
      bearer: "b-4",
      "X-Auth": "xa-5",
      pass: "p-6",
      sessionKey: "sk-7",
      usage: { inputTokens: 12, totalTokens: 30, maxTokens: 100 },
      dsn: "postgres://admin:hunter2@db.internal:5432/app",
      command: 'curl -H "Authorization: Bearer abcdefgh12345678" https://api.example.com',
      env: "GITHUB_TOKEN=ghp_aaaaaaaaaaaaaaaaaaaaaaaa\nMYSQL_PWD=s3cret\nPORT=8080",
    });
    const text = JSON.stringify(out);
    for (const secret of [
      "at-1",
      "apt-2",
      "pk-3",
      "b-4",
      "xa-5",
      "p-6",
      "sk-7",
      "hunter2",
      "abcdefgh12345678",
      "ghp_aaa",
      "s3cret",
    ])
      expect(text, secret).not.toContain(secret);
    expect(out).toMatchObject({
      usage: { inputTokens: 12, totalTokens: 30, maxTokens: 100 },
      dsn: "postgres://admin:[redacted]@db.internal:5432/app",
      command: 'curl -H "Authorization: Bearer [redacted]" https://api.example.com',
      env: "GITHUB_TOKEN=[redacted]\nMYSQL_PWD=[redacted]\nPORT=8080",
    });
    // JSON inside a text stays JSON.
    const json = sanitize(
      '{"password":1234,"apiKey":null,"token":true,"Authorization":"Basic dXNlcjpwYXNzMQ=="}',
    );
    expect(JSON.parse(json as string)).toEqual({
      password: "[redacted]",
      apiKey: null,
      token: true,
      Authorization: "Basic [redacted]",
    });
  });
});

/** What a local client sends to open a WebSocket, with its own target and headers. */
function upgradeRequest(target: string, port: number, headers = ""): string {
  return (
    `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${headers}Upgrade: websocket\r\n` +
    `Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`
  );
}

/** Sends `text` on a fresh connection and resets it at once (RST), as a client that goes away does. */
async function sendAndReset(port: number, text: string): Promise<void> {
  await new Promise<void>((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(text);
      socket.resetAndDestroy();
      resolve();
    });
    socket.on("error", () => undefined);
  });
}

/** Sends `text` and waits for the answer until the server closes (or `ms` passes). */
async function exchange(port: number, text: string, ms = 2_000): Promise<string> {
  return new Promise<string>((resolve) => {
    let answer = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

/** Errors thrown out of the process (no handler caught them) while `attack` runs, and a beat after. */
async function uncaughtDuring(attack: () => Promise<void>): Promise<unknown[]> {
  const thrown: unknown[] = [];
  const record = (error: unknown) => thrown.push(error);
  process.on("uncaughtException", record);
  try {
    await attack();
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    process.off("uncaughtException", record);
  }
  return thrown;
}

describe("attack: a local client at the door of the page servers", () => {
  it("an upgrade from another site or without the token, reset while it is refused, throws nothing out of the agent's process", async () => {
    const agent = createAgent({ provider: scripted([]) });
    cleanups.push(() => agent.stop());
    const server = await visualize(agent);
    cleanups.push(() => server.close());
    const relay = await createInspectorRelay();
    cleanups.push(() => relay.close());
    const thrown = await uncaughtDuring(async () => {
      for (let i = 0; i < 50; i++) {
        const pad = "x".repeat(i * 200); // more or less written before the reset comes
        const foreign = `Origin: http://evil.example\r\nX-Pad: ${pad}\r\n`;
        await sendAndReset(server.port, upgradeRequest("/ws", server.port, foreign));
        await sendAndReset(server.port, upgradeRequest("/ws?token=wrong", server.port, `X-Pad: ${pad}\r\n`));
        await sendAndReset(relay.port, upgradeRequest("/?token=wrong", relay.port, `X-Pad: ${pad}\r\n`));
      }
    });
    expect(thrown.map(String)).toEqual([]);
    // Both still let their own pages in.
    await client(`ws://127.0.0.1:${server.port}/ws?token=${encodeURIComponent(server.token)}`).opened;
    await client(relay.wsUrl).opened;
  });

  it("an upgrade whose target makes no URL gets 403 from the relay, nothing thrown, and close() still ends", async () => {
    const relay = await createInspectorRelay();
    const thrown = await uncaughtDuring(async () => {
      for (const target of ["http://[", "//[", "http://a:b@[::1/"]) {
        expect(await exchange(relay.port, upgradeRequest(target, relay.port))).toMatch(/^HTTP\/1\.1 403 /);
      }
    });
    expect(thrown.map(String)).toEqual([]);
    await relay.close(); // it waited forever for the sockets the throw left open
  });

  it("a refused client that keeps its side open holds no socket: close() ends", async () => {
    const agent = createAgent({ provider: scripted([]) });
    cleanups.push(() => agent.stop());
    const server = await visualize(agent);
    const held = connect({ port: server.port, host: "127.0.0.1", allowHalfOpen: true });
    held.on("error", () => undefined);
    cleanups.push(() => held.destroy());
    let answer = "";
    held.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    held.write(upgradeRequest("/ws", server.port, "Origin: http://evil.example\r\n"));
    await until(() => answer.startsWith("HTTP/1.1 403"), "the refusal");
    await until(() => held.readyState === "writeOnly" || held.destroyed, "the server's end of the socket");
    await server.close();
  });
});
