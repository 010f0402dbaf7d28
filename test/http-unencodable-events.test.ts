// A tool's partial results reach the HTTP encoders unchecked (only what a run keeps is checked),
// so one JSON cannot hold (a BigInt, a cycle) must cost that value, not the response: every
// protocol's response goes on to the run's end with every event in its place, and the client
// that counts events by seq (the agent-machine protocol's) reads the run to its end.
import { firstValueFrom, toArray } from "rxjs";
import * as z from "zod";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  agentMachineProtocol,
  agUiProtocol,
  aiSdkProtocol,
  createSessionHost,
  type SessionHost,
  sseFrame,
} from "../http.js";
import { defineTool, scripted } from "../index.js";
import { remoteAgentHandle } from "../react.js";

const hosts: SessionHost[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  while (hosts.length) await hosts.pop()!.close();
});

/** Streams a count as a BigInt, then a partial result with a cycle, then a plain one. */
const counter = defineTool({
  name: "count",
  description: "counts",
  parameters: z.object({}),
  execute: async (_, ctx) => {
    ctx.onUpdate({ content: [{ type: "text", text: "big" }], details: { count: 12n } });
    const node: Record<string, unknown> = { name: "loop" };
    node.self = node;
    ctx.onUpdate({ content: [{ type: "text", text: "cyclic" }], details: { node } });
    ctx.onUpdate("plain");
    await Promise.resolve();
    return "counted";
  },
});

function makeHost(): SessionHost {
  const host = createSessionHost({
    agent: () => ({
      provider: scripted([{ toolCalls: [{ id: "c1", name: "count", arguments: {} }] }, { text: "Done." }]),
      tools: [counter],
    }),
    basePath: "/api",
    authorize: "none-local-only",
    protocols: [aiSdkProtocol(), agUiProtocol(), agentMachineProtocol()],
  });
  hosts.push(host);
  return host;
}

const post = (host: SessionHost, path: string, body: unknown) =>
  host.handle(
    new Request(`http://localhost/api${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );

/** The JSON values of a response's `data:` frames (every one must parse). */
async function frames(response: Response): Promise<Record<string, unknown>[]> {
  expect(response.status).toBe(200);
  return (await response.text())
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: ") && frame !== "data: [DONE]")
    .map((frame) => JSON.parse(frame.slice(6)) as Record<string, unknown>);
}

/** The transcript every protocol's run must leave: the call, its whole result, the answer. */
function expectTranscript(host: SessionHost, id: string): void {
  const messages = host.agent(id)!.messages;
  expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  expect(messages[2]).toMatchObject({ toolCallId: "c1", isError: false, content: [{ text: "counted" }] });
  expect(messages[3]).toMatchObject({ content: [{ type: "text", text: "Done." }] });
}

describe("an event JSON cannot hold, through the HTTP protocols", () => {
  it("the agent-machine protocol sends every event in its place, the unencodable values as text", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const host = makeHost();
    const sent = await frames(await post(host, "/threads/t1/run", { message: { text: "count" } }));
    expect(sent.at(-1)).toMatchObject({ type: "close", ending: { kind: "end" } });
    const events = sent.filter((f) => f.type === "event");
    // No seq is skipped: a client drops whatever follows a gap.
    expect(events.map((f) => f.seq)).toEqual(events.map((_, index) => index));
    const updates = events
      .map((f) => f.event as { type: string; partialResult?: { details?: unknown } })
      .filter((e) => e.type === "tool_execution_update");
    expect(updates.map((e) => e.partialResult)).toEqual([
      { content: [{ type: "text", text: "big" }], details: { count: "12n" } },
      { content: [{ type: "text", text: "cyclic" }], details: { node: { name: "loop", self: "[cycle]" } } },
      { content: [{ type: "text", text: "plain" }] },
    ]);
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "stop" });
    expectTranscript(host, "t1");
    // Said once, with the reason, for the first such frame only.
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toMatch(/"event" frame held a value JSON cannot hold \(.*BigInt/);
  });

  it("the remote handle reads such a run to its end", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const host = makeHost();
    const handle = remoteAgentHandle({
      url: "http://localhost/api",
      threadId: "t2",
      fetch: (input, init) => host.handle(new Request(input, init)),
    });
    const { runId } = await handle.run({ role: "user", content: "count", timestamp: Date.now() });
    const events = await firstValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    expect(events.map((e) => e.event.type).filter((t) => t === "tool_execution_update")).toHaveLength(3);
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "stop" });
    expectTranscript(host, "t2");
  });

  it("the AI SDK UI message stream sends the preliminary outputs and finishes", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const host = makeHost();
    const body = {
      id: "t3",
      trigger: "submit-message",
      messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "count" }] }],
    };
    const sent = await frames(await post(host, "/chat", body));
    const preliminary = sent.filter((c) => c.type === "tool-output-available" && c.preliminary === true);
    expect(preliminary.map((c) => c.output)).toEqual([
      { content: [{ type: "text", text: "big" }], details: { count: "12n" } },
      { content: [{ type: "text", text: "cyclic" }], details: { node: { name: "loop", self: "[cycle]" } } },
      "plain",
    ]);
    expect(sent.filter((c) => c.type === "tool-output-available" && c.preliminary === undefined)).toEqual([
      expect.objectContaining({ toolCallId: "c1", output: "counted" }),
    ]);
    expect(sent.map((c) => c.type)).toContain("text-delta");
    expect(sent.at(-1)).toMatchObject({ type: "finish" });
    expectTranscript(host, "t3");
  });

  it("AG-UI sends the updates' text and finishes the run", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const host = makeHost();
    const sent = await frames(
      await post(host, "/ag-ui", {
        threadId: "t4",
        runId: "r1",
        messages: [{ id: "u1", role: "user", content: "count" }],
        tools: [],
        context: [],
      }),
    );
    const updates = sent.filter(
      (e) => e.type === "CUSTOM" && e.name === "agent-machine.tool_execution_update",
    );
    expect(updates.map((e) => (e.value as { text: string }).text)).toEqual(["big", "cyclic", "plain"]);
    expect(sent.at(-1)).toMatchObject({ type: "RUN_FINISHED" });
    expectTranscript(host, "t4");
  });

  it("sseFrame writes what JSON cannot hold as text, and what it can as JSON writes it", () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const shared = { n: 1 };
    const throwing = {
      toJSON: () => {
        throw new Error("no\nway");
      },
    };
    expect(sseFrame({ a: shared, b: shared, big: [1n], bad: throwing, date: new Date(0), f: () => 1 })).toBe(
      'data: {"a":{"n":1},"b":{"n":1},"big":["1n"],"bad":"[cannot encode: no way]","date":"1970-01-01T00:00:00.000Z"}\n\n',
    );
  });
});
