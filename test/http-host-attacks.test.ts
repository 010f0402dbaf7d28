// The session host against a hostile web (docs/frontends.md, "Who may act"; SECURITY.md): a page
// the user visits sending what a browser sends cross-site without a preflight, a page that rebinds
// its name to 127.0.0.1, a host started with no identity check, and slow, dead and oversized
// clients. Each attack is made through the public entry, then the world is checked: the call still
// waits (the tool did not run), no thread was made, the host let go of what it held.
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { throwError } from "rxjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  agentMachineProtocol,
  aiSdkProtocol,
  createSessionHost,
  type HostProtocol,
  serveNode,
  type SessionHost,
  type SessionHostOptions,
  type StreamEncoder,
} from "../http.js";
import { scripted } from "../index.js";
import { deleteFile } from "./fixtures/frontend-tools.js";
import { gateTool } from "./helpers.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

function makeHost(more: Partial<SessionHostOptions> = {}): SessionHost {
  const host = createSessionHost({
    agent: () => ({
      provider: scripted([
        { text: "Deleting.", toolCalls: [{ name: "delete_file", arguments: { path: "a.txt" } }] },
        { text: "Done." },
      ]),
      tools: [deleteFile],
    }),
    basePath: "/api",
    authorize: "none-local-only",
    ...more,
  });
  closers.push(() => host.close());
  return host;
}

const userMessage = (id: string, text: string) => ({ id, role: "user", parts: [{ type: "text", text }] });
const chatBody = (id: string, text = "delete a.txt") => ({
  id,
  trigger: "submit-message",
  messages: [userMessage("u1", text)],
});

function post(host: SessionHost, path: string, body: BodyInit, headers: Record<string, string> = {}) {
  return host.handle(new Request(`http://localhost/api${path}`, { method: "POST", headers, body }));
}

/** A thread whose run waits for the approval of call_0_0 (delete_file). */
async function waitingThread(host: SessionHost, id: string, headers: Record<string, string> = {}) {
  const response = await post(host, "/chat", JSON.stringify(chatBody(id)), {
    "content-type": "application/json",
    ...headers,
  });
  expect(response.status).toBe(200);
  await response.text();
  expect(
    host
      .agent(id)!
      .pendingApprovals()
      .map((p) => p.toolCallId),
  ).toEqual(["call_0_0"]);
  return host.agent(id)!;
}

async function errorOf(response: Response): Promise<[number, string]> {
  const body = (await response.json()) as { error: { code: string } };
  return [response.status, body.error.code];
}

/** A request body that records whether anything read it. */
function watchedBody(text: string): { body: ReadableStream<Uint8Array>; read: () => boolean } {
  let pulled = false;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled = true;
        controller.enqueue(new TextEncoder().encode(text));
        controller.close();
      },
    },
    { highWaterMark: 0 }, // pulled by a read only
  );
  return { body, read: () => pulled };
}

describe("attack: a web page sends a body a browser sends cross-site without a preflight", () => {
  it("approving with its own arguments as text/plain, a form or no content type gets 415, the body unread and the call still waiting", async () => {
    const host = makeHost();
    const agent = await waitingThread(host, "t1");
    const forged = JSON.stringify({ toolCallId: "call_0_0", args: { path: "/everything" } });
    for (const type of [
      "text/plain; charset=json",
      "multipart/form-data; boundary=json",
      "application/x-www-form-urlencoded; json",
      "text/json",
      "application/jsonp",
      undefined,
    ]) {
      const { body, read } = watchedBody(forged);
      const response = await host.handle(
        new Request("http://localhost/api/threads/t1/approve", {
          method: "POST",
          headers: type === undefined ? {} : { "content-type": type },
          body,
          duplex: "half",
        } as RequestInit),
      );
      expect([type, ...(await errorOf(response))]).toEqual([type, 415, "unsupported_media_type"]);
      expect(read(), `${type}: the body was read`).toBe(false);
    }
    // An empty POST too: a no-cors fetch with no body would otherwise abort the run.
    expect(await errorOf(await post(host, "/threads/t1/abort", ""))).toEqual([415, "unsupported_media_type"]);
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["call_0_0"]);
    expect(agent.messages.some((m) => m.role === "toolResult")).toBe(false);
  });

  it("starting a run or steering as text/plain gets 415 and makes no thread", async () => {
    const host = makeHost();
    const text = JSON.stringify(chatBody("t2"));
    expect(
      await errorOf(await post(host, "/chat", text, { "content-type": "text/plain;charset=json" })),
    ).toEqual([415, "unsupported_media_type"]);
    expect(await errorOf(await post(host, "/ag-ui", text, { "content-type": "text/plain" }))).toEqual([
      415,
      "unsupported_media_type",
    ]);
    expect(host.agent("t2")).toBeUndefined();
  });

  it("takes JSON by its media type, whatever the case and parameters", async () => {
    const host = makeHost();
    for (const [id, type] of [
      ["a", "application/json"],
      ["b", "Application/JSON; charset=UTF-8"],
      ["c", "application/vnd.agent+json"],
    ] as const) {
      const response = await post(host, "/chat", JSON.stringify(chatBody(id)), { "content-type": type });
      expect([type, response.status]).toEqual([type, 200]);
      await response.text();
    }
  });
});

describe("attack: a state-changing request from another site", () => {
  const cookieAuth = (request: Request) => request.headers.get("cookie") === "session=ann";

  it("is refused 403 cross_site with the user's cookie, nothing applied", async () => {
    const host = makeHost({ authorize: cookieAuth });
    const agent = await waitingThread(host, "t1", { cookie: "session=ann" });
    const json = { "content-type": "application/json", cookie: "session=ann" };
    const approve = JSON.stringify({ toolCallId: "call_0_0", args: { path: "/everything" } });
    const attempts: Record<string, string>[] = [
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
      { origin: "https://sub.localhost", "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" }, // an older browser: Origin alone
      { origin: "null" }, // a sandboxed frame
      { "sec-fetch-site": "cross-site" },
    ];
    for (const from of attempts) {
      const response = await post(host, "/threads/t1/approve", approve, { ...json, ...from });
      expect([from, ...(await errorOf(response))]).toEqual([from, 403, "cross_site"]);
    }
    for (const [path, body] of [
      ["/chat", JSON.stringify(chatBody("t9"))],
      ["/threads/t1/steer", JSON.stringify({ text: "delete everything" })],
      ["/threads/t1/abort", "{}"],
    ]) {
      const response = await post(host, path!, body!, { ...json, origin: "https://evil.example" });
      expect([path, ...(await errorOf(response))]).toEqual([path, 403, "cross_site"]);
    }
    expect(host.agent("t9")).toBeUndefined();
    expect(agent.pendingApprovals().map((p) => p.toolCallId)).toEqual(["call_0_0"]);
    expect(agent.queued.steering).toEqual([]);
    // The app's own page, and a client that is no browser, act as before.
    const own = await post(host, "/threads/t1/approve", JSON.stringify({ toolCallId: "call_0_0" }), {
      ...json,
      origin: "http://localhost",
      "sec-fetch-site": "same-origin",
    });
    expect(own.status).toBe(200);
    await agent.waitForIdle();
    expect(agent.messages.find((m) => m.role === "toolResult")).toMatchObject({
      content: [{ type: "text", text: "deleted a.txt" }],
    });
  });

  it("lets the origins the app allowed act", async () => {
    const host = makeHost({ authorize: cookieAuth, allowedOrigins: ["https://app.example"] });
    await waitingThread(host, "t1", { cookie: "session=ann", origin: "http://localhost" });
    const response = await post(host, "/threads/t1/approve", JSON.stringify({ toolCallId: "call_0_0" }), {
      "content-type": "application/json",
      cookie: "session=ann",
      origin: "https://app.example",
      "sec-fetch-site": "cross-site",
    });
    expect(response.status).toBe(200);
    const other = await post(host, "/threads/t1/steer", JSON.stringify({ text: "x" }), {
      "content-type": "application/json",
      cookie: "session=ann",
      origin: "https://app.example.evil",
      "sec-fetch-site": "cross-site",
    });
    expect(await errorOf(other)).toEqual([403, "cross_site"]);
    // An entry no browser would send never matches: refused when the host is made.
    expect(() => makeHost({ allowedOrigins: ["https://app.example/"] })).toThrow(
      /scheme:\/\/host\[:port\].*did you mean "https:\/\/app.example"/,
    );
  });
});

describe("attack: DNS rebinding against a host that checks no identity", () => {
  it("answers nothing to a name that is not loopback, read or write", async () => {
    const host = makeHost();
    const agent = await waitingThread(host, "t1");
    const json = { "content-type": "application/json" };
    for (const request of [
      new Request("http://rebind.evil.example:3000/api/threads/t1"),
      new Request("http://rebind.evil.example:3000/api/chat/t1/stream"),
      new Request("http://192.168.1.20:3000/api/threads/t1/approve", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ toolCallId: "call_0_0" }),
      }),
      new Request("http://127.0.0.1.evil.example/api/threads/t1/abort", {
        method: "POST",
        headers: json,
        body: "{}",
      }),
    ]) {
      expect([request.url, ...(await errorOf(await host.handle(request)))]).toEqual([
        request.url,
        403,
        "not_loopback",
      ]);
    }
    expect(agent.pendingApprovals()).toHaveLength(1);
    for (const url of [
      "http://127.0.0.1:3000",
      "http://[::1]:3000",
      "http://app.localhost",
      "http://localhost",
    ]) {
      expect((await host.handle(new Request(`${url}/api/threads/t1`))).status).toBe(200);
    }
  });

  it("a run's events by id and seq (what remoteAgentHandle reads) go to loopback names only", async () => {
    const host = makeHost({ protocols: [aiSdkProtocol(), agentMachineProtocol()] });
    const agent = await waitingThread(host, "t1");
    const route = `/api/threads/t1/events?runId=${agent.runId}&seq=0`;
    const rebound = await host.handle(new Request(`http://rebind.evil.example:3000${route}`));
    expect(await errorOf(rebound)).toEqual([403, "not_loopback"]);
    // The same read from a loopback name gets the run's events: the 403 was the rebinding check.
    const local = await host.handle(new Request(`http://127.0.0.1:3000${route}`));
    expect(local.status).toBe(200);
    const reader = local.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('"type":"open"');
    await reader.cancel();
  });

  it("on serveNode: a request to 127.0.0.1 carrying the rebound name gets 403", async () => {
    const host = makeHost();
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/api/threads/t1`,
        { headers: { host: "rebind.evil.example" } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});

/** One request over a raw socket (the client writes what it likes); the status code and the body. */
async function rawRequest(port: number, text: string): Promise<[number, string]> {
  const answer = await new Promise<string>((resolve) => {
    let received = "";
    const socket = connect(port, "127.0.0.1", () => socket.write(text));
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => resolve(received));
  });
  return [Number(answer.split(" ")[1]), answer.slice(answer.indexOf("\r\n\r\n") + 4)];
}

describe("attack: a Host header or a request target that makes no URL, on serveNode", () => {
  it("a Host that smuggles a path, credentials or spaces gets 400 and acts on nothing", async () => {
    const host = makeHost();
    const agent = await waitingThread(host, "t1");
    const waiting = agent.state;
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const abort = (hostHeader: string) =>
      `POST /x HTTP/1.1\r\nHost: ${hostHeader}\r\ncontent-type: application/json\r\n` +
      `content-length: 2\r\nConnection: close\r\n\r\n{}`;
    for (const hostHeader of [
      "127.0.0.1/api/threads/t1/abort?", // the path the host would have routed: abort
      "127.0.0.1/api/threads/t1/abort#",
      "rebind.evil.example@127.0.0.1",
      "a b",
    ]) {
      const [status, body] = await rawRequest(server.port, abort(hostHeader));
      expect([hostHeader, status, body]).toEqual([hostHeader, 400, expect.stringContaining('"bad_request"')]);
    }
    expect(agent.state).toBe(waiting);
    expect(agent.pendingApprovals()).toHaveLength(1);
  });

  it("an absolute target is checked by its own host: a rebound name 403, a loopback one served", async () => {
    const host = makeHost();
    await waitingThread(host, "t1");
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const get = (target: string) =>
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: close\r\n\r\n`;
    const [rebound, refusal] = await rawRequest(
      server.port,
      get("http://rebind.evil.example/api/threads/t1"),
    );
    expect([rebound, refusal]).toEqual([403, expect.stringContaining('"not_loopback"')]);
    expect((await rawRequest(server.port, get(`http://127.0.0.1:${server.port}/api/threads/t1`)))[0]).toBe(
      200,
    );
    expect((await rawRequest(server.port, get("http://[/api/threads/t1")))[0]).toBe(400);
  });
});

/** A key as a provider issues one: what an app's authorize hook may quote when it throws. */
const LEAKED = "sk-ant-api03-LEAKEDleakedLEAKED0123456789";

describe("attack: a token in an error, on every listener's answer and log", () => {
  it("a thread's agent that cannot be reached: 503 naming why, without the password its URL carries", async () => {
    const unreachable = async (): Promise<never> => {
      throw new Error("connect ECONNREFUSED http://admin:hunter2@restate.internal:8080/ingress");
    };
    const host = createSessionHost({
      threads: (id) => ({
        id,
        status: unreachable,
        messages: unreachable,
        eventsSince: () => throwError(() => new Error("unreachable")),
        run: unreachable,
        steer: unreachable,
        followUp: unreachable,
        check: unreachable,
        answer: unreachable,
        abort: unreachable,
      }),
      basePath: "/api",
      authorize: "none-local-only",
    });
    closers.push(() => host.close());
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const response = await fetch(`${server.url}/api/threads/t1`);
    const body = await response.text();
    expect([response.status, body]).toEqual([503, expect.stringContaining("ECONNREFUSED")]);
    expect(body).toContain("admin:[redacted]@restate.internal");
    expect(body).not.toContain("hunter2");
  });

  it("an authorize hook that throws quoting the token it was shown: 500, the token in neither the answer nor the log", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const host = makeHost({
        authorize: (request) => {
          throw new Error(`rejected credentials ${request.headers.get("authorization")}`);
        },
      });
      const server = await serveNode(host.handle);
      closers.push(() => server.close());
      const response = await fetch(`${server.url}/api/threads/t1`, {
        headers: { authorization: `Bearer ${LEAKED}` },
      });
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain("LEAKED");
      const log = logged.mock.calls.flat().map(String).join("\n");
      expect(log).toContain("rejected credentials Bearer [redacted]");
      expect(log).not.toContain("LEAKED");
    } finally {
      logged.mockRestore();
    }
  });
});

describe("attack: a host started without an identity check", () => {
  it("refuses to start without authorize, naming the explicit local choice", () => {
    const agent = { provider: scripted([]) };
    expect(() => createSessionHost({ agent } as unknown as SessionHostOptions)).toThrow(
      /needs authorize: \(request, threadId\) => boolean.*authorize: "none-local-only"/s,
    );
    expect(() =>
      createSessionHost({ durable: { url: "http://127.0.0.1:1" } } as unknown as SessionHostOptions),
    ).toThrow(/needs authorize/);
    expect(() => createSessionHost({ agent, authorize: "none" } as unknown as SessionHostOptions)).toThrow(
      /authorize must be a function .* or "none-local-only", got "none"/,
    );
    expect(() => createSessionHost({ agent, authorize: () => true })).not.toThrow();
  });
});

/** A run that streams `size` characters of text, then waits on the gate until the test opens it. */
function bigRunHost(size: number, more: Partial<SessionHostOptions> = {}) {
  const gate = gateTool("wait", "waited");
  const text = "0123456789".repeat(size / 10);
  const host = makeHost({
    agent: () => ({
      provider: scripted([
        { text, chunkSize: 1000, toolCalls: [{ name: "wait", arguments: {} }] },
        { text: "Done." },
      ]),
      tools: [gate.tool],
    }),
    ...more,
  });
  return { host, text, open: gate.open };
}

/** The text deltas of a UI message stream, joined. */
function textOf(stream: string): string {
  return stream
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: {"))
    .map((frame) => JSON.parse(frame.slice(6)) as { type: string; delta?: string })
    .filter((chunk) => chunk.type === "text-delta")
    .map((chunk) => chunk.delta)
    .join("");
}

describe("attack: slow and dead clients", () => {
  it("a client that never reads is dropped past the bound; its reconnect replays the whole response as it reads", async () => {
    const { host, text, open } = bigRunHost(1_000_000, { maxResponseBufferBytes: 64 * 1024 });
    const stalled = await post(host, "/chat", JSON.stringify(chatBody("t1", "talk")), {
      "content-type": "application/json",
    });
    expect(stalled.status).toBe(200);
    const agent = host.agent("t1")!;
    await expect.poll(() => agent.state).toBe("running.executing"); // all the text is out
    // The host let the stalled response go: what it holds for it is an error, not a megabyte.
    await expect(stalled.text()).rejects.toThrow(/read too slowly/);
    const resumed = await host.handle(new Request("http://localhost/api/chat/t1/stream"));
    expect(resumed.status).toBe(200);
    const reading = resumed.text();
    open();
    const replay = await reading;
    expect(textOf(replay)).toBe(`${text}Done.`);
    expect(replay).toContain('"type":"finish"');
    await agent.waitForIdle();
  });

  it("twenty reconnects that never read make the encoder encode nothing of the replay; one that reads gets all of it", async () => {
    // A protocol of the app's own, whose encoder counts what it is asked to encode.
    const encoded: number[] = [];
    const counting: HostProtocol = {
      name: "counting",
      routes: [
        {
          method: "GET",
          path: "/follow/:id",
          async handle(request, { id }, api) {
            const slot = encoded.push(0) - 1;
            const encoder: StreamEncoder = {
              headers: { "content-type": "text/event-stream" },
              open: () => "",
              event: (event) => {
                encoded[slot]! += 1;
                return event.type === "message_update" && event.kind === "text_delta" ? event.delta : "";
              },
              close: () => "",
            };
            return (await api.thread(request, id)).reconnect(encoder) ?? new Response(null, { status: 204 });
          },
        },
      ],
    };
    const { host, text, open } = bigRunHost(2_000_000, {
      maxResponseBufferBytes: 64 * 1024,
      protocols: [aiSdkProtocol(), counting],
    });
    const first = await post(host, "/chat", JSON.stringify(chatBody("t1", "talk")), {
      "content-type": "application/json",
    });
    const agent = host.agent("t1")!;
    await expect.poll(() => agent.state).toBe("running.executing");
    await expect(first.text()).rejects.toThrow(/read too slowly/); // dropped: it did not read
    const follow = () => host.handle(new Request("http://localhost/api/follow/t1"));
    const stalled = await Promise.all(Array.from({ length: 20 }, follow));
    expect(stalled.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(encoded).toEqual(Array(20).fill(0)); // 2,000 deltas replayed, none encoded for nobody
    const reader = await follow();
    const reading = reader.text();
    open();
    expect(await reading).toBe(`${text}Done.`);
    expect(encoded[20]).toBeGreaterThan(2000);
    // A stalled one is still whole when it reads at last (its backlog is the replay buffer's).
    expect(await stalled[0]!.text()).toBe(`${text}Done.`);
    for (const response of stalled.slice(1)) await response.body!.cancel();
  });

  it("serveNode: a slow reader's many waits add no listener each (no MaxListenersExceededWarning)", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    closers.push(async () => void process.off("warning", onWarning));
    const { host, text, open } = bigRunHost(3_000_000, { maxResponseBufferBytes: 64 * 1024 * 1024 });
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    // Reads a chunk, then pauses: the host waits for the socket to drain again and again.
    const slow = await rawChat(server.port, "slow", async (socket, got) => {
      socket.pause();
      await new Promise((r) => setTimeout(r, 5));
      socket.resume();
      return got < text.length;
    });
    expect(slow.received).toBeGreaterThanOrEqual(text.length);
    await new Promise((r) => setImmediate(r));
    expect(warnings).not.toContain("MaxListenersExceededWarning");
    open();
    slow.socket.destroy();
  });

  it("serveNode cuts off a TCP client that stops reading once the bound is passed", async () => {
    const { host, open } = bigRunHost(4_000_000, { maxResponseBufferBytes: 256 * 1024 });
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const dead = await rawChat(server.port, "dead", async (socket) => {
      socket.pause(); // reads nothing after the first bytes
      return false;
    });
    const agent = host.agent("dead")!;
    await expect.poll(() => agent.state).toBe("running.executing");
    await expect.poll(() => dead.closed(), { timeout: 10_000 }).toBe(true);
    open();
    await agent.waitForIdle();
  });
});

/**
 * Posts a chat request over a raw socket; `onData(socket, bytesSoFar)` runs on each chunk and
 * returns whether to keep going (false: stop handling data, leave the socket as it is).
 */
async function rawChat(
  port: number,
  threadId: string,
  onData: (socket: ReturnType<typeof connect>, received: number) => Promise<boolean>,
): Promise<{ socket: ReturnType<typeof connect>; received: number; closed: () => boolean }> {
  const socket = connect(port, "127.0.0.1");
  const body = JSON.stringify(chatBody(threadId, "talk"));
  socket.write(
    `POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  let closed = false;
  socket.on("close", () => (closed = true));
  socket.on("error", () => undefined);
  const state = { socket, received: 0, closed: () => closed };
  await new Promise<void>((resolve) => {
    let busy = false;
    const handler = (chunk: Buffer) => {
      state.received += chunk.byteLength;
      if (busy) return;
      busy = true;
      void onData(socket, state.received).then((more) => {
        busy = false;
        if (!more) {
          socket.off("data", handler);
          resolve();
        }
      });
    };
    socket.on("data", handler);
    socket.on("close", () => resolve());
  });
  return state;
}

describe("attack: oversized bodies and odd methods", () => {
  it("a chunked 50 MB upload gets its 413, not a reset", async () => {
    const host = makeHost();
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const chunk = new Uint8Array(64 * 1024).fill(32);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 50 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${server.url}/api/chat`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(await errorOf(response)).toEqual([413, "payload_too_large"]);
    expect(host.agent("t1")).toBeUndefined();
  });

  it("a keep-alive client gets every 413 and the answers after them", async () => {
    const host = makeHost();
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const big = JSON.stringify({ ...chatBody("t1"), pad: "x".repeat(2_000_000) });
    for (let i = 0; i < 3; i++) {
      const refused = await fetch(`${server.url}/api/chat`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(await errorOf(refused)).toEqual([413, "payload_too_large"]);
      expect((await fetch(`${server.url}/api/threads/t1`)).status).toBe(404);
    }
  });

  it("clients that go away mid-upload are no server failure: nothing logged, the host serves on", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const host = makeHost();
      const agent = await waitingThread(host, "t1");
      const server = await serveNode(host.handle);
      closers.push(() => server.close());
      for (const path of ["/api/chat", "/api/threads/t1/steer"]) {
        const socket = connect(server.port, "127.0.0.1");
        socket.on("error", () => undefined);
        socket.write(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\ncontent-type: application/json\r\n` +
            `content-length: 100000\r\n\r\n{"text":"half`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
        socket.destroy();
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(logged.mock.calls.map(String)).toEqual([]);
      expect(agent.queued.steering).toEqual([]);
      const status = await fetch(`${server.url}/api/threads/t1`);
      expect(status.status).toBe(200);
    } finally {
      logged.mockRestore();
    }
  });

  it("TRACE gets 405, not a server error", async () => {
    const host = makeHost();
    const server = await serveNode(host.handle);
    closers.push(() => server.close());
    const socket = connect(server.port, "127.0.0.1");
    socket.write(`TRACE /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    let answer = "";
    socket.on("data", (chunk: Buffer) => (answer += chunk.toString()));
    await new Promise((resolve) => socket.on("close", resolve));
    expect(answer.split("\r\n")[0]).toBe("HTTP/1.1 405 Method Not Allowed");
    expect(answer).toContain('"code":"method_not_allowed"');
  });
});
