import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  createAgent,
  defineTool,
  parseRecording,
  readRecording,
  recordEvents,
  sanitize,
  scripted,
  type VisualizerMessage,
} from "../index.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempFile(name: string) {
  const dir = await mkdtemp(join(tmpdir(), "agent-machine-rec-"));
  dirs.push(dir);
  return join(dir, name);
}

const echo = defineTool({
  name: "echo",
  description: "Echoes",
  parameters: z.object({ text: z.string() }),
  execute: ({ text }) => text,
});

describe("recordings", () => {
  it("write every event with a timestamp, in order, and the text in full", async () => {
    const file = await tempFile("runs/run.jsonl");
    const answer =
      "The answer streams in many small pieces, and none of them may be lost on the way to disk.";
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ name: "echo", arguments: { text: "hi", apiKey: "sk-secret-value" } }] },
        { text: answer, chunkSize: 3 },
      ]),
      tools: [echo],
    });
    const seen: AgentEvent["type"][] = [];
    agent.events$.subscribe((e) => seen.push(e.type));
    const recorder = recordEvents(agent, file);
    await agent.prompt("Say hi");
    await recorder.close();
    agent.stop();

    const messages = await readRecording(file);
    expect(messages[0]).toMatchObject({ kind: "hello", agentId: agent.id });
    for (const m of messages) expect(typeof m.t).toBe("number");
    const times = messages.map((m) => m.t);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    const events = messages.flatMap((m) => (m.kind === "event" ? [m.event] : []));
    // Deltas may travel joined, so compare the sequence without repeated updates.
    const collapse = (types: string[]) =>
      types.filter((t, i) => t !== "message_update" || types[i - 1] !== t);
    expect(collapse(events.map((e) => e.type))).toEqual(collapse(seen));
    const streamed = events.flatMap((e) =>
      e.type === "message_update" && e.kind === "text_delta" ? [e.delta] : [],
    );
    expect(streamed.join("")).toBe(answer);

    const states = messages.flatMap((m) => (m.kind === "state" ? [JSON.stringify(m.value)] : []));
    expect(states[0]).toBe('"idle"');
    expect(states).toContain('{"running":"executing"}');
    expect(states.at(-1)).toBe('"idle"');
    const toolStates = messages.flatMap((m) => (m.kind === "tool_state" ? [m.value] : []));
    // Lookup and validation happen as the actor starts; with no permission checker it goes straight on.
    expect(toolStates).toEqual(["executing", "done"]);
    const end = messages.find((m) => m.kind === "event" && m.event.type === "tool_execution_end");
    expect(end).toMatchObject({ outcome: "ok" });

    const text = await readFile(file, "utf8");
    expect(text).not.toContain("sk-secret-value");
    expect(text.trim().split("\n")).toHaveLength(messages.length);
  });

  it("append to an existing file and report a broken line with its number", async () => {
    const file = await tempFile("run.jsonl");
    await writeFile(file, `${JSON.stringify({ kind: "hello", t: 1, agentId: "a", mode: "replay" })}\n`);
    const agent = createAgent({ provider: scripted([{ text: "ok" }]) });
    const recorder = recordEvents(agent, file);
    await agent.prompt("x");
    await recorder.close();
    agent.stop();
    const messages = await readRecording(file);
    expect(messages.filter((m) => m.kind === "hello")).toHaveLength(2);

    expect(() => parseRecording('{"kind":"event","t":1}\nnot json\n', "run.jsonl")).toThrow(
      /^run\.jsonl:2: not JSON/,
    );
    expect(() => parseRecording('{"kind":"event"}', "r")).toThrow("r:1: not a visualizer message");
  });

  it("replays a CLI session log (agent events stamped `at`) as well", () => {
    const log = [
      { type: "agent_start", at: 10 },
      { type: "turn_start", turn: 1, at: 11 },
      { type: "session_resumed", at: 12, from: "snapshot" },
      { type: "agent_end", messages: [], reason: "stop", usage: {}, at: 13 },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    expect(parseRecording(log, "events.jsonl")).toEqual([
      { kind: "event", t: 10, event: { type: "agent_start" } },
      { kind: "event", t: 11, event: { type: "turn_start", turn: 1 } },
      { kind: "event", t: 13, event: { type: "agent_end", messages: [], reason: "stop", usage: {} } },
    ]);
  });

  it("reports a file it cannot write when closed, without crashing the agent", async () => {
    const dir = await tempFile("dir");
    await writeFile(dir, "a file where a directory should be");
    const agent = createAgent({ provider: scripted([{ text: "still fine" }]) });
    const recorder = recordEvents(agent, join(dir, "run.jsonl"));
    const { messages } = await agent.prompt("x");
    expect(messages.at(-1)).toMatchObject({ role: "assistant" });
    await expect(recorder.close()).rejects.toThrow("Could not write the recording");
    agent.stop();
  });
});

describe("sanitize", () => {
  it("redacts secrets by key name, cuts long values, and survives cycles and odd values", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const out = sanitize(
      {
        apiKey: "sk-1",
        headers: { Authorization: "Bearer x", "x-api-key": "k" },
        usage: { totalTokens: 12, maxTokens: 100 },
        text: "y".repeat(50),
        list: Array.from({ length: 10 }, (_, i) => i),
        big: 10n,
        fn: function named() {},
        error: new Error("boom"),
        cyclic,
      },
      { maxStringLength: 10, maxArrayLength: 4 },
    ) as Record<string, unknown>;
    expect(out).toMatchObject({
      apiKey: "[redacted]",
      headers: { Authorization: "[redacted]", "x-api-key": "[redacted]" },
      usage: { totalTokens: 12, maxTokens: 100 },
      text: "yyyyyyyyyy… [40 more characters]",
      list: [0, 1, "[… 6 more items …]", 8, 9],
      big: "10",
      fn: "[function named]",
      error: { name: "Error", message: "boom" },
      cyclic: { name: "loop", self: "[circular]" },
    });
    const message: VisualizerMessage = { kind: "error", t: 1, message: "x" };
    expect(sanitize(message)).toEqual(message);
  });
});

describe("tool outcomes on the wire", () => {
  it("name each call's fate: ok, error, not found (spaces in the name too), invalid, timed out, denied by the checker", async () => {
    const file = await tempFile("fates.jsonl");
    const slow = defineTool({
      name: "slow",
      description: "Never finishes in time",
      parameters: z.object({}),
      timeoutMs: 20,
      execute: (_args, { signal }) =>
        new Promise<string>((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(new Error("x"))),
        ),
    });
    const fail = defineTool({
      name: "fail",
      description: "Throws",
      parameters: z.object({}),
      execute: () => {
        throw new Error("broken");
      },
    });
    const secret = defineTool({
      name: "secret",
      description: "Refused",
      parameters: z.object({}),
      execute: () => "no",
    });
    const agent = createAgent({
      provider: scripted([
        {
          toolCalls: [
            { name: "echo", arguments: { text: "a" }, id: "ok" },
            { name: "fail", id: "error" },
            { name: "missing", id: "missing" },
            { name: "read file", id: "spaced" },
            { name: "echo", arguments: { text: 1 }, id: "invalid" },
            { name: "slow", id: "slow" },
            { name: "secret", id: "refused" },
          ],
        },
        { text: "done" },
      ]),
      tools: [echo, slow, fail, secret],
      permissions: {
        check: ({ toolCall }) =>
          toolCall.name === "secret"
            ? { behavior: "deny", reason: "Not on this machine" }
            : { behavior: "allow" },
      },
    });
    const recorder = recordEvents(agent, file);
    await agent.prompt("Try everything");
    await recorder.close();
    agent.stop();
    const outcomes = Object.fromEntries(
      (await readRecording(file)).flatMap((m) =>
        m.kind === "event" && m.event.type === "tool_execution_end" ? [[m.event.toolCallId, m.outcome]] : [],
      ),
    );
    expect(outcomes).toEqual({
      ok: "ok",
      error: "error",
      missing: "not found",
      spaced: "not found",
      invalid: "invalid",
      slow: "timed out",
      refused: "denied",
    });
  });
});
