// Issue 23 items 1 and 3: every message has a stable id and says where it came from.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentMessage,
  COMPACTION_SUMMARY_TYPE,
  createAgent,
  defineTool,
  isCompactionMessage,
  LIMIT_NOTICE_TYPE,
  type ScriptedStep,
  scripted,
} from "../index.js";
import { expectEventInvariants, expectValidTranscript, record, sleepTool } from "./helpers.js";

function expectUniqueIds(messages: readonly AgentMessage[]): void {
  const ids = messages.map((m) => m.id);
  expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
}

const ended = (events: ReturnType<typeof record>) =>
  events.flatMap((e) => (e.type === "message_end" && !e.discarded ? [e.message] : []));

describe("message ids", () => {
  it("every message of the transcript has a unique id, the one its events carried", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "a", name: "wait", arguments: { ms: 1, label: "A" } }] },
        { text: "done" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    const { messages: added } = await agent.prompt("go");

    expectUniqueIds(agent.messages);
    expect(added.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    // The ids the events announced are the transcript's.
    expect(ended(events).map((m) => m.id)).toEqual(agent.messages.map((m) => m.id));
    // The streamed answer's id is known from its message_start, before any delta.
    const firstStart = events.find((e) => e.type === "message_start" && e.message.role === "assistant");
    expect(firstStart?.type === "message_start" && firstStart.message.id).toBe(agent.messages[1]!.id);
    expectEventInvariants(events);
  });

  it("keeps the id a caller gives a user message, and mints one for every other", async () => {
    const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]) });
    await agent.prompt({ role: "user", content: "hi", timestamp: 1, id: "client-msg-1" });
    await agent.prompt("again");
    expect(agent.messages[0]).toMatchObject({ id: "client-msg-1", source: "prompt" });
    expectUniqueIds(agent.messages);
  });

  it("keeps ids through a snapshot, hibernation and a restore", async () => {
    const options = {
      provider: scripted([{ text: "one" }, { text: "two" }]),
      hibernate: "whenIdle" as const,
    };
    const agent = createAgent(options);
    await agent.prompt("hi");
    const before = agent.messages.map((m) => m.id);
    await Promise.resolve();
    expect(agent.hibernated).toBe(true);
    expect(agent.messages.map((m) => m.id)).toEqual(before);
    await agent.prompt("again");
    expect(agent.messages.slice(0, 2).map((m) => m.id)).toEqual(before);

    const restored = createAgent({
      provider: scripted([{ text: "three" }]),
      snapshot: JSON.parse(JSON.stringify(agent.getPersistedSnapshot())),
    });
    expect(restored.messages.map((m) => m.id)).toEqual(agent.messages.map((m) => m.id));
    await restored.prompt("more");
    expectUniqueIds(restored.messages);
  });

  it("a retried model call keeps one id: the discarded attempt and the answer share it", async () => {
    const agent = createAgent({
      provider: scripted([
        { text: "half an ans", error: { kind: "overloaded", message: "busy" } },
        { text: "the answer" },
      ]),
      retry: { baseDelayMs: 1, maxDelayMs: 1 },
    });
    const events = record(agent);
    await agent.prompt("go");
    const assistantEnds = events.flatMap((e) =>
      e.type === "message_end" && e.message.role === "assistant" ? [e] : [],
    );
    expect(assistantEnds.map((e) => e.discarded === true)).toEqual([true, false]);
    expect(assistantEnds[0]!.message.id).toBe(assistantEnds[1]!.message.id);
    expect(agent.messages.at(-1)!.id).toBe(assistantEnds[1]!.message.id);
  });

  it("a compaction summary gets its own id and lists the ids of the messages it replaced", async () => {
    const read = defineTool({
      name: "read",
      description: "Reads a file",
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => `${path}: ${"const x = 1;".repeat(40)}`,
    });
    let turns = 0;
    const provider = scripted((): ScriptedStep =>
      ++turns < 30
        ? { toolCalls: [{ id: `r${turns}`, name: "read", arguments: { path: `f${turns}.ts` } }] }
        : { text: "read them all" },
    );
    const agent = createAgent({
      provider,
      tools: [read],
      context: { maxContextTokens: 2_000, keepRecent: 2 },
    });
    // Every id that was ever in the transcript.
    const everIn = new Set<string | undefined>();
    agent.snapshot$.subscribe((s) => {
      for (const m of s.context.messages) everIn.add(m.id);
    });
    await agent.prompt("read every file");

    const summaries = agent.messages.filter(
      (m) => m.role === "custom" && m.customType === COMPACTION_SUMMARY_TYPE,
    );
    expect(summaries.length).toBeGreaterThan(0);
    const present = new Set(agent.messages.map((m) => m.id));
    for (const message of agent.messages.filter(isCompactionMessage)) {
      expect(message).toMatchObject({ source: "agent", id: expect.any(String) });
      const replaces = (message as { replaces?: string[] }).replaces ?? [];
      expect(replaces.length).toBeGreaterThan(0);
      // It stands for messages that were in the transcript and are no longer.
      for (const id of replaces) {
        expect(everIn.has(id)).toBe(true);
        expect(present.has(id)).toBe(false);
      }
    }
    expectUniqueIds(agent.messages);
    expectValidTranscript(agent.messages);
  });
});

describe("where a message came from", () => {
  it("prompt, steer and follow-up messages say so, in the events and the transcript", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "a", name: "wait", arguments: { ms: 20, label: "A" } }] },
        { text: "steered" },
        { text: "followed" },
      ]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    const run = agent.prompt("start");
    agent.steer("also this");
    agent.followUp("then that");
    await run;

    const users = agent.messages.filter((m) => m.role === "user");
    expect(users.map((m) => [m.content, m.source])).toEqual([
      ["start", "prompt"],
      ["also this", "steer"],
      ["then that", "followUp"],
    ]);
    const announced = ended(events).filter((m) => m.role === "user");
    expect(announced.map((m) => m.role === "user" && m.source)).toEqual(["prompt", "steer", "followUp"]);
  });

  it("the agent's own notices are custom messages with source agent", async () => {
    const agent = createAgent({
      provider: scripted([
        { toolCalls: [{ id: "a", name: "wait", arguments: { ms: 1, label: "A" } }] },
        { text: "my answer" },
      ]),
      tools: [sleepTool()],
      limits: { maxTurns: 1 },
    });
    await agent.prompt("go");
    const notice = agent.messages.find((m) => m.role === "custom");
    expect(notice).toMatchObject({ customType: LIMIT_NOTICE_TYPE, source: "agent", id: expect.any(String) });
    // Nothing the agent wrote is a user message.
    expect(agent.messages.filter((m) => m.role === "user").map((m) => m.source)).toEqual(["prompt"]);
  });
});
