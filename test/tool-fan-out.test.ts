import { readFileSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import type { AnyActorRef } from "xstate";
import { z } from "zod";
import {
  type Agent,
  createAgent,
  createPermissions,
  defineTool,
  scripted,
  toolCallMachine,
} from "../index.js";
import {
  eventMatching,
  expectEventInvariants,
  expectValidTranscript,
  record,
  resultText,
  sleepTool,
  toolResults,
  waitCall as wait,
} from "./helpers.js";

// Turns with more calls than one parent actor holds (50): the calls are spread over shard actors,
// and everything a user sees must stay as it is with a handful of calls.

const ids = (n: number, prefix = "c") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** Every tool-call actor in the agent's tree, with the number of call actors its parent holds. */
function callActors(agent: Agent): { id: string; siblings: number }[] {
  const found: { id: string; siblings: number }[] = [];
  const walk = (actor: AnyActorRef) => {
    const children = Object.values(actor.getSnapshot().children ?? {}) as AnyActorRef[];
    const calls = children.filter((c) => (c as { logic?: unknown }).logic === toolCallMachine);
    for (const call of calls) found.push({ id: call.id, siblings: calls.length });
    for (const child of children) walk(child);
  };
  walk(agent.actor as unknown as AnyActorRef);
  return found;
}

describe("a fan-out of many parallel calls", () => {
  it("runs 130 calls, one actor each (id = call id, at most 50 under one parent), results in the model's order", async () => {
    const calls = ids(130).map((id, i) => wait(id, 5 + (i % 7) * 3));
    const agent = createAgent({
      provider: scripted([{ toolCalls: calls }, { text: "ok" }]),
      tools: [sleepTool()],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_start" && e.toolCallId === "c129");
    const actors = callActors(agent);
    expect(actors.map((a) => a.id).sort()).toEqual(ids(130).sort());
    expect(Math.max(...actors.map((a) => a.siblings))).toBeLessThanOrEqual(50);
    await run;
    expect(toolResults(agent.messages).map((m) => m.toolCallId)).toEqual(ids(130));
    expect(toolResults(agent.messages).map(resultText)).toEqual(ids(130).map((id) => `done ${id}`));
    expect(events.filter((e) => e.type === "tool_execution_end")).toHaveLength(130);
    expect(callActors(agent)).toEqual([]);
    expect(Object.keys(agent.actor.getSnapshot().children)).toEqual([]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("abort stops every running call, in every shard, and answers each exactly once", async () => {
    let aborted = 0;
    const calls = [...ids(120).map((id) => wait(id, 10_000)), wait("quick", 1)];
    const agent = createAgent({
      provider: scripted([{ toolCalls: calls }]),
      tools: [sleepTool({ onAbort: () => aborted++ })],
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "tool_execution_end" && e.toolCallId === "quick");
    agent.abort();
    const { messages } = await run;
    expect(aborted).toBe(120);
    const results = toolResults(messages);
    expect(results.map((m) => m.toolCallId)).toEqual([...ids(120), "quick"]);
    expect(results.slice(0, 120).every((m) => m.isError && resultText(m) === "Tool wait aborted")).toBe(true);
    expect(resultText(results[120]!)).toBe("done quick");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
    expect(callActors(agent)).toEqual([]);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("batches bigger than a shard run one after another, and queued steering skips the rest", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: ids(180).map((id) => wait(id, 2)) }, { text: "ok" }]),
      tools: [sleepTool()],
      toolExecution: { batched: 70 },
    });
    const events = record(agent);
    let steered = false;
    agent.events$.subscribe((e) => {
      if (e.type === "tool_execution_end" && e.toolCallId === "c75" && !steered) {
        steered = true;
        agent.steer("stop there");
      }
    });
    // Steering from a subscriber of an event a call's actor publishes is a plain use of the API:
    // XState must not take it for an action calling `sendTo()` (its development build warns).
    const warnings: string[] = [];
    const warn = vi.spyOn(console, "warn").mockImplementation((text) => warnings.push(String(text)));
    try {
      await agent.prompt("go");
    } finally {
      warn.mockRestore();
    }
    expect(steered).toBe(true);
    expect(warnings.filter((text) => /should not call/.test(text))).toEqual([]);
    const results = toolResults(agent.messages);
    expect(results.map((m) => m.toolCallId)).toEqual(ids(180));
    expect(results.slice(0, 140).every((m) => resultText(m) === `done ${m.toolCallId}`)).toBe(true);
    expect(results.slice(140).every((m) => resultText(m) === "Skipped due to queued user message.")).toBe(
      true,
    );
    // Each batch's results enter the transcript together, when the batch completes.
    const resultStarts = events.filter((e) => e.type === "message_start" && e.message.role === "toolResult");
    expect(resultStarts).toHaveLength(180);
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("eager execution starts calls in shards as their arguments complete, results in order", async () => {
    const agent = createAgent({
      provider: scripted([{ toolCalls: ids(75).map((id) => wait(id, 1)), delayMs: 1 }, { text: "ok" }]),
      tools: [sleepTool()],
      eagerToolExecution: true,
    });
    const events = record(agent);
    await agent.prompt("go");
    const messageEnd = events.findIndex((e) => e.type === "message_end" && e.message.role === "assistant");
    const lastStart = events.findIndex((e) => e.type === "tool_execution_start" && e.toolCallId === "c74");
    expect(lastStart).toBeLessThan(messageEnd);
    expect(toolResults(agent.messages).map((m) => m.toolCallId)).toEqual(ids(75));
    expectValidTranscript(agent.messages);
    expectEventInvariants(events);
  });

  it("approvals find calls wherever they run: 60 pending calls, each approved or denied by id", async () => {
    const written: string[] = [];
    const note = defineTool({
      name: "write_note",
      description: "Writes a note",
      parameters: z.object({ text: z.string() }),
      execute: ({ text }) => {
        written.push(text);
        return `noted ${text}`;
      },
    });
    const calls = ids(60, "n").map((id) => ({ id, name: "write_note", arguments: { text: id } }));
    const agent = createAgent({
      provider: scripted([{ toolCalls: calls }, { text: "ok" }]),
      tools: [note],
      permissions: createPermissions({ mode: "default" }),
    });
    const events = record(agent);
    const run = agent.prompt("go");
    await eventMatching(agent, events, (e) => e.type === "approval_requested" && e.toolCallId === "n59");
    await new Promise((resolve) => setImmediate(resolve));
    expect(
      agent
        .pendingApprovals()
        .map((p) => p.toolCallId)
        .sort(),
    ).toEqual(ids(60, "n").sort());
    for (const [i, id] of ids(60, "n").entries()) {
      if (i % 2 === 0) agent.approve(id);
      else agent.deny(id, "not this one");
    }
    expect(() => agent.approve("n0")).toThrow(/not waiting for approval|already finished/);
    await run;
    expect(written.sort()).toEqual(
      ids(60, "n")
        .filter((_, i) => i % 2 === 0)
        .sort(),
    );
    const results = toolResults(agent.messages);
    expect(results.map((m) => m.toolCallId)).toEqual(ids(60, "n"));
    expect(resultText(results[1]!)).toBe("The user denied this tool call: not this one");
    expect(agent.pendingApprovals()).toEqual([]);
    expectEventInvariants(events);
  });

  it("a snapshot taken mid-fan-out, with calls finished and calls waiting in shards, restores and answers each call once", async () => {
    const ran: string[] = [];
    const note = (name: string) =>
      defineTool({
        name,
        description: "Writes a note",
        parameters: z.object({ text: z.string() }),
        readOnly: name === "read_note",
        execute: ({ text }) => {
          ran.push(text);
          return `noted ${text}`;
        },
      });
    // 120 calls: shards hold most of them; every third needs an approval, the rest finish at once.
    const calls = ids(120, "m").map((id, i) => ({
      id,
      name: i % 3 === 0 ? "write_note" : "read_note",
      arguments: { text: id },
    }));
    const tools = [note("write_note"), note("read_note")];
    const permissions = createPermissions({ mode: "default" });
    const first = createAgent({ provider: scripted([{ toolCalls: calls }]), tools, permissions });
    const events = record(first);
    void first.prompt("go");
    await eventMatching(first, events, (e) => e.type === "approval_requested" && e.toolCallId === "m117");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const finished = ids(120, "m").filter((_, i) => i % 3 !== 0);
    expect([...ran].sort()).toEqual([...finished].sort());
    const snapshot = first.getPersistedSnapshot();
    first.stop();

    ran.length = 0;
    const restored = createAgent({ provider: scripted([{ text: "ok" }]), tools, permissions, snapshot });
    const waiting = ids(120, "m").filter((_, i) => i % 3 === 0);
    expect(
      restored
        .pendingApprovals()
        .map((p) => p.toolCallId)
        .sort(),
    ).toEqual([...waiting].sort());
    for (const id of waiting) restored.approve(id);
    await restored.waitForIdle();

    expect([...ran].sort()).toEqual([...waiting].sort());
    const results = toolResults(restored.messages);
    expect(results.map((m) => m.toolCallId)).toEqual(ids(120, "m"));
    expect(results.map((m) => resultText(m))).toEqual(ids(120, "m").map((id) => `noted ${id}`));
    expectValidTranscript(restored.messages);
    expect(restored.messages.at(-1)).toMatchObject({ role: "assistant" });
  });

  it("a mid-fan-out snapshot written when shards were statecharts (machine 758445c0ed2e) restores: each call answered once, in order", async () => {
    // Written by main at 218de9f (60 calls: 6 in the execution machine, the rest in 3 shards; every
    // third call waits for an approval, the others had finished): test/fixtures/fan-out.
    const file = new URL(
      "./fixtures/fan-out/mid-fan-out.format-2-machine-758445c0ed2e.json",
      import.meta.url,
    );
    const snapshot = JSON.parse(readFileSync(file, "utf8")) as unknown;
    const ran: string[] = [];
    const note = (name: string) =>
      defineTool({
        name,
        description: "Writes a note",
        parameters: z.object({ text: z.string() }),
        readOnly: name === "read_note",
        execute: ({ text }) => {
          ran.push(text);
          return `noted ${text}`;
        },
      });
    const restored = createAgent({
      provider: scripted([{ text: "ok" }]),
      tools: [note("write_note"), note("read_note")],
      permissions: createPermissions({ mode: "default" }),
      snapshot,
    });
    const all = ids(60, "m");
    const waiting = all.filter((_, i) => i % 3 === 0);
    expect(
      callActors(restored)
        .map((a) => a.id)
        .sort(),
    ).toEqual([...waiting].sort());
    expect(
      restored
        .pendingApprovals()
        .map((p) => p.toolCallId)
        .sort(),
    ).toEqual([...waiting].sort());
    // Persisted again by this release, it restores the same way.
    const again = restored.getPersistedSnapshot() as { children: Record<string, unknown> };
    expect(JSON.stringify(again.children)).toContain('"src":"toolShard"');
    for (const id of waiting) restored.approve(id);
    await restored.waitForIdle();
    expect([...ran].sort()).toEqual([...waiting].sort());
    const results = toolResults(restored.messages);
    expect(results.map((m) => m.toolCallId)).toEqual(all);
    expect(results.map((m) => resultText(m))).toEqual(all.map((id) => `noted ${id}`));
    expect(callActors(restored)).toEqual([]);
    expectValidTranscript(restored.messages);
    expect(restored.messages.at(-1)).toMatchObject({ role: "assistant" });
  });
});

describe("watching a fan-out", () => {
  it("the visualizer feed follows every call's actor, in shards too", async () => {
    const { followAgent } = await import("../visualizer/wire.js");
    const agent = createAgent({
      provider: scripted([{ toolCalls: ids(70).map((id) => wait(id, 2)) }, { text: "ok" }]),
      tools: [sleepTool()],
    });
    const lanes = new Map<string, string[]>();
    const stop = followAgent(
      agent,
      (message) => {
        if (message.kind === "tool_state") {
          lanes.set(message.toolCallId, [...(lanes.get(message.toolCallId) ?? []), message.value]);
        }
      },
      { coalesceMs: 0 },
    );
    await agent.prompt("go");
    stop();
    expect([...lanes.keys()].sort()).toEqual(ids(70).sort());
    for (const states of lanes.values()) expect(states).toEqual(["executing", "done"]);
  });
});
