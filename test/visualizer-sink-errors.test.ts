// The visualizer's feed and the Stately inspector's `attach` are fed from inside the agent's run
// (its inspection, in the middle of an event's delivery) and from timers: a sink of theirs that
// throws (a WebSocket whose send throws, an app's own `send`) must cost only what it shows, never
// the run: it finishes, its transcript whole, the error reported once on the console.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import { z } from "zod";
import {
  createAgent,
  createInspectorRelay,
  createStatelyInspector,
  defineTool,
  scripted,
  visualize,
} from "../index.js";
import { followAgent } from "../visualizer/wire.js";

const cleanups: (() => unknown)[] = [];
// What would have ended a process: an error thrown from a timer or a socket's event.
const uncaught: unknown[] = [];
const onUncaught = (error: unknown) => uncaught.push(error);
beforeEach(() => {
  uncaught.length = 0;
  process.on("uncaughtException", onUncaught);
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
  process.off("uncaughtException", onUncaught);
});

const within = <T>(promise: Promise<T>, ms = 5_000) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)),
  ]);

const echo = defineTool({
  name: "echo",
  description: "Echoes",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

/** An agent that calls a tool, then answers; and the run's expected transcript. */
function toolAgent(id: string, delayMs = 0) {
  const agent = createAgent({
    id,
    provider: scripted([
      { text: "Calling.", toolCalls: [{ id: "c1", name: "echo", arguments: { text: "hi" } }] },
      { text: "All done, with a longer answer that streams in several deltas.", delayMs },
    ]),
    tools: [echo],
  });
  cleanups.push(() => agent.stop());
  return agent;
}

async function expectRunWhole(agent: ReturnType<typeof toolAgent>): Promise<void> {
  const outcome = await within(agent.prompt("go"));
  expect(outcome.reason).toBe("stop");
  expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  expect(agent.messages[2]).toMatchObject({ toolCallId: "c1", isError: false, content: [{ text: "hi" }] });
  expect(agent.messages[3]).toMatchObject({
    content: [{ type: "text", text: expect.stringContaining("All done") }],
  });
}

/** Lets the timers that were due run (a coalesced delta's, the Stately inspector's). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 80));

describe("a visualizer feed whose sink throws", () => {
  it("on a tool call's state (sent from the run's inspection): the run finishes; reported once; the feed stops", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {});
    const agent = toolAgent("watched");
    const sent: string[] = [];
    let throws = 0;
    followAgent(
      agent,
      (message) => {
        if (message.kind === "tool_state") {
          throws++;
          throw new Error("the socket is gone");
        }
        sent.push(message.kind === "event" ? message.event.type : message.kind);
      },
      { coalesceMs: 0 },
    );
    await expectRunWhole(agent);
    await settle();
    expect(throws).toBe(1);
    expect(uncaught).toEqual([]);
    expect(report).toHaveBeenCalledTimes(1);
    expect(String(report.mock.calls[0]![0])).toBe(
      'agent-machine: the visualizer\'s feed of agent "watched" threw, and sends no more: the socket is gone',
    );
    // Nothing after the failure: the feed stopped before the tool ran.
    expect(sent).toContain("tool_execution_start");
    expect(sent).not.toContain("tool_execution_end");
    expect(sent).not.toContain("agent_end");
  });

  it("on a coalesced text delta (sent from a timer): the process is not ended, the run finishes", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {});
    // Deltas 20 ms apart, coalesced for 5 ms: each goes out from the coalescing timer.
    const agent = toolAgent("deltas", 20);
    followAgent(
      agent,
      (message) => {
        if (message.kind === "event" && message.event.type === "message_update") throw new Error("no deltas");
      },
      { coalesceMs: 5 },
    );
    await expectRunWhole(agent);
    await settle();
    expect(uncaught).toEqual([]);
    expect(report).toHaveBeenCalledTimes(1);
    expect(String(report.mock.calls[0]![0])).toBe(
      'agent-machine: the visualizer\'s feed of agent "deltas" threw, and sends no more: no deltas',
    );
  });

  it("visualize(): a page whose socket's send throws is dropped; the run finishes and the page server goes on", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const agent = toolAgent("served");
    const server = await visualize(agent, { port: 0 });
    cleanups.push(() => server.close());
    const page = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`);
    cleanups.push(() => page.terminate());
    const closed = new Promise<void>((resolve) => page.once("close", () => resolve()));
    // The server greets the page first; then every send on the server's side throws.
    await new Promise<void>((resolve, reject) => {
      page.on("message", (data) => {
        if ((JSON.parse(String(data)) as { kind: string }).kind === "caught_up") resolve();
      });
      page.once("error", reject);
    });
    const original = WebSocket.prototype.send;
    const send = vi.spyOn(WebSocket.prototype, "send").mockImplementation(function (
      this: WebSocket,
      ...args
    ) {
      if (this.url === undefined) throw new Error("send failed");
      return original.apply(this, args);
    });
    await expectRunWhole(agent);
    expect(send).toHaveBeenCalled();
    await within(closed);
    expect(uncaught).toEqual([]);
    // The server still serves: a page that connects now gets the history.
    send.mockRestore();
    const late = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`);
    cleanups.push(() => late.terminate());
    const kinds: string[] = [];
    late.on("message", (data) => {
      const message = JSON.parse(String(data)) as { kind: string; messages?: { kind: string }[] };
      kinds.push(...(message.messages?.map((m) => m.kind) ?? [message.kind]));
    });
    await expect.poll(() => kinds).toContain("caught_up");
    expect(kinds).toContain("tool_state");
  });
});

/** Every send on a server's side (its accepted sockets have no `url`) throws, until restored. */
function failServerSends() {
  const original = WebSocket.prototype.send;
  return vi.spyOn(WebSocket.prototype, "send").mockImplementation(function (this: WebSocket, ...args) {
    if (this.url === undefined) throw new Error("send failed");
    return original.apply(this, args);
  });
}

/** Every message a client socket gets, by kind (a backlog's messages counted one by one). */
function kindsOf(socket: WebSocket): string[] {
  const kinds: string[] = [];
  socket.on("message", (data) => {
    const message = JSON.parse(String(data)) as { kind: string; messages?: { kind: string }[] };
    kinds.push(...(message.messages?.map((m) => m.kind) ?? [message.kind]));
  });
  return kinds;
}

describe("a page whose socket's send throws as it is greeted", () => {
  it("visualize(): the page is dropped, nothing is thrown out of the upgrade, the next page is greeted", async () => {
    const agent = toolAgent("greeted");
    const server = await visualize(agent, { port: 0 });
    cleanups.push(() => server.close());
    await expectRunWhole(agent);
    const send = failServerSends();
    const page = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`);
    cleanups.push(() => page.terminate());
    const kinds = kindsOf(page);
    await within(new Promise<void>((resolve) => page.once("close", () => resolve())));
    expect(send).toHaveBeenCalled();
    expect(kinds).toEqual([]);
    await settle();
    expect(uncaught).toEqual([]);
    send.mockRestore();
    const next = new WebSocket(`ws://127.0.0.1:${server.port}/ws?token=${server.token}`);
    cleanups.push(() => next.terminate());
    const greeted = kindsOf(next);
    await expect.poll(() => greeted).toContain("caught_up");
    expect(greeted).toContain("tool_state");
  });

  it("the inspector relay: a page whose send throws on the backlog is cut off; the next one gets it", async () => {
    const relay = await createInspectorRelay();
    cleanups.push(() => relay.close());
    const source = new WebSocket(relay.wsUrl);
    cleanups.push(() => source.terminate());
    await within(new Promise((resolve) => source.once("open", resolve)));
    source.send(JSON.stringify({ type: "@xstate.event", sessionId: "x:1", event: { type: "GO" } }));
    await settle();
    const send = failServerSends();
    const page = new WebSocket(relay.wsUrl);
    cleanups.push(() => page.terminate());
    await within(new Promise<void>((resolve) => page.once("close", () => resolve())));
    expect(send).toHaveBeenCalled();
    await settle();
    expect(uncaught).toEqual([]);
    send.mockRestore();
    const next = new WebSocket(relay.wsUrl);
    cleanups.push(() => next.terminate());
    const received: string[] = [];
    next.on("message", (data) => received.push(String(data)));
    await expect.poll(() => received.join("")).toContain('"GO"');
  });
});

describe("the Stately inspector, attached, whose connection's send throws", () => {
  it("the run finishes with its transcript; the failure is reported once; stop() resolves", async () => {
    const report = vi.spyOn(console, "error").mockImplementation(() => {});
    const inspector = await createStatelyInspector();
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await inspector.stop();
    });
    const agent = toolAgent("inspected");
    // The inspector's own connection to its relay (a client socket) fails every send.
    const original = WebSocket.prototype.send;
    const send = vi.spyOn(WebSocket.prototype, "send").mockImplementation(function (
      this: WebSocket,
      ...args
    ) {
      if (this.url !== undefined) throw new Error("send failed");
      return original.apply(this, args);
    });
    inspector.attach(agent);
    await expectRunWhole(agent);
    // The events wait in the queue until the connection opens (later, on a busy machine).
    await expect.poll(() => send.mock.calls.length).toBeGreaterThan(0);
    await settle();
    expect(uncaught).toEqual([]);
    expect(report).toHaveBeenCalledTimes(1);
    expect(String(report.mock.calls[0]![0])).toMatch(
      /Stately inspector could not send to the relay.*send failed/,
    );
    stopped = true;
    await within(inspector.stop());
  });
});
