import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentEvent,
  type AgentEventOf,
  type AgentMessage,
  createAgent,
  defineTool,
  LOOP_NOTICE_TYPE,
  scripted,
  type ScriptedStep,
  textOf,
} from "../index.js";
import {
  callKey,
  canonicalJson,
  hashText,
  LOOP_MEMORY,
  loopMayStop,
  recordToolResults,
  resolveLoopDetection,
} from "../rules/loop-detection.logic.js";
import { expectEventInvariants, expectValidTranscript, record, trace } from "./helpers.js";

/** A tool that answers with a fixed text, or fails when `fail` is set. */
const lookup = defineTool({
  name: "lookup",
  description: "Looks something up",
  parameters: z.object({ key: z.string(), fail: z.boolean().optional(), answer: z.string().optional() }),
  readOnly: true,
  execute: ({ key, fail, answer }) => {
    if (fail) throw new Error(`no entry for ${key}`);
    return answer ?? `value of ${key}`;
  },
});

/** The model asks for the same call every turn (with a fresh id), until `stopAfter` calls. */
function repeating(args: Record<string, unknown>, stopAfter = 100) {
  return scripted((_request, call): ScriptedStep =>
    call < stopAfter
      ? { toolCalls: [{ id: `c${call}`, name: "lookup", arguments: args }] }
      : { text: "giving up" },
  );
}

/** The text of the user messages and of the custom messages the model reads as user messages. */
const userTexts = (messages: readonly AgentMessage[]) =>
  messages
    .filter((m) => m.role === "user" || (m.role === "custom" && m.display !== "ui-only"))
    .map((m) => (m.role !== "assistant" && typeof m.content === "string" ? m.content : ""));

const loopEvents = (events: AgentEvent[]) =>
  events.filter((e): e is AgentEventOf<"loop_detected"> => e.type === "loop_detected");

describe("loop detection", () => {
  it("tells the model after 5 identical calls with the same result, and ends the run with reason loop at the 6th", async () => {
    const provider = repeating({ key: "a" });
    const agent = createAgent({ provider, tools: [lookup] });
    const events = record(agent);
    const { messages: added } = await agent.prompt("find a");

    expect(provider.calls).toBe(6);
    // The notice is the agent's own custom message (the user's prompt says it came from prompt())...
    expect(added.filter((m) => m.role === "user" || m.role === "custom")).toMatchObject([
      { role: "user", source: "prompt" },
      { role: "custom", customType: LOOP_NOTICE_TYPE, source: "agent", display: "model" },
    ]);
    // ...and reaches the model as a user message at the start of the 6th turn.
    expect(provider.requests[5]!.messages.at(-1)).toMatchObject({
      role: "user",
      content: expect.stringMatching(/^\[Loop detected: /),
    });
    expect(userTexts(added)).toEqual([
      "find a",
      "[Loop detected: lookup was called 5 times with the same arguments and got the same result each time. " +
        "Repeating it will not help: change the arguments, try another approach, or stop and say what blocks you. " +
        "If this call repeats again, the run is stopped.]",
    ]);
    const sixthRequest = provider.requests[5]!.messages;
    expect(userTexts(sixthRequest as AgentMessage[]).at(-1)).toMatch(
      /^\[Loop detected: lookup was called 5 times/,
    );

    expect(
      loopEvents(events).map(({ action, kind, count, toolCallId }) => ({ action, kind, count, toolCallId })),
    ).toEqual([
      { action: "warned", kind: "repeated", count: 5, toolCallId: "c4" },
      { action: "stopped", kind: "repeated", count: 6, toolCallId: "c5" },
    ]);
    const end = events.at(-1) as AgentEventOf<"agent_end">;
    expect(end).toMatchObject({ type: "agent_end", reason: "loop" });
    expect(textOf((added.at(-1) as { content: { type: "text"; text: string }[] }).content)).toBe(
      "[Agent stopped: Loop detected (lookup was called 6 times with the same arguments and got the same result each time, after a warning)]",
    );
    // The 6th call ran and was answered; then the turn ends, the stop notice, agent_end.
    expect(trace(events).slice(-6)).toEqual([
      "message_end:toolResult",
      "loop_detected:c5",
      "turn_end",
      "message_start:assistant",
      "message_end:assistant",
      "agent_end",
    ]);
    expectEventInvariants(events);
    expectValidTranscript(agent.messages);
  });

  it("lets the model recover after the warning: a different call goes on and the run ends normally", async () => {
    const provider = scripted((request, call): ScriptedStep => {
      const last = request.messages.at(-1);
      const warned = last?.role === "user" && String(last.content).startsWith("[Loop detected");
      if (warned) return { toolCalls: [{ id: `c${call}`, name: "lookup", arguments: { key: "b" } }] };
      if (call >= 4) return { text: "found b" };
      return { toolCalls: [{ id: `c${call}`, name: "lookup", arguments: { key: "a", fail: true } }] };
    });
    const agent = createAgent({ provider, tools: [lookup] });
    const events = record(agent);
    await agent.prompt("find something");
    // Three identical failures: the model is told; its 4th call is another one; then it answers.
    expect(loopEvents(events)).toMatchObject([
      { action: "warned", kind: "failing", count: 3, toolName: "lookup" },
    ]);
    expect(userTexts(agent.messages)[1]).toMatch(
      /^\[Loop detected: lookup failed 3 times with the same arguments\./,
    );
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(provider.calls).toBe(5);
  });

  it("stops a failing call repeated after the warning (the 4th identical failure)", async () => {
    const agent = createAgent({ provider: repeating({ key: "x", fail: true }), tools: [lookup] });
    const events = record(agent);
    await agent.prompt("go");
    expect(loopEvents(events).map((e) => `${e.action}:${e.kind}:${e.count}`)).toEqual([
      "warned:failing:3",
      "stopped:failing:4",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "loop" });
  });

  it("treats arguments in another key order as the same call", async () => {
    let flip = false;
    const provider = scripted((_request, call): ScriptedStep => {
      flip = !flip;
      const args = flip ? { key: "a", answer: "same" } : { answer: "same", key: "a" };
      return { toolCalls: [{ id: `c${call}`, name: "lookup", arguments: args }] };
    });
    const agent = createAgent({ provider, tools: [lookup] });
    const events = record(agent);
    await agent.prompt("go");
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "loop" });
    expect(provider.calls).toBe(6);
  });

  it("does not flag a call repeated with a different result each time (a test rerun after edits)", async () => {
    let version = 0;
    const runTests = defineTool({
      name: "run_tests",
      description: "Runs the tests",
      parameters: z.object({}),
      execute: () => `${++version} failing`,
    });
    const provider = scripted((_request, call): ScriptedStep =>
      call < 12 ? { toolCalls: [{ id: `c${call}`, name: "run_tests", arguments: {} }] } : { text: "done" },
    );
    const agent = createAgent({ provider, tools: [runTests] });
    const events = record(agent);
    await agent.prompt("fix it");
    expect(loopEvents(events)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
  });

  it("counts identical calls inside one message once", async () => {
    const provider = scripted((_request, call): ScriptedStep =>
      call === 0
        ? {
            toolCalls: Array.from({ length: 8 }, (_, i) => ({
              id: `p${i}`,
              name: "lookup",
              arguments: { key: "a" },
            })),
          }
        : { text: "done" },
    );
    const agent = createAgent({ provider, tools: [lookup] });
    const events = record(agent);
    await agent.prompt("go");
    expect(loopEvents(events)).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
  });

  it("takes custom thresholds, and can be turned off", async () => {
    const strict = createAgent({
      provider: repeating({ key: "a" }),
      tools: [lookup],
      loopDetection: { maxIdenticalCalls: 2 },
    });
    const strictEvents = record(strict);
    await strict.prompt("go");
    expect(loopEvents(strictEvents).map((e) => `${e.action}:${e.count}`)).toEqual(["warned:2", "stopped:3"]);

    const provider = repeating({ key: "a" }, 12);
    const off = createAgent({ provider, tools: [lookup], loopDetection: false });
    const offEvents = record(off);
    await off.prompt("go");
    expect(loopEvents(offEvents)).toEqual([]);
    expect(provider.calls).toBe(13);
    expect(offEvents.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
  });

  it("refuses thresholds that cannot work and unknown keys", () => {
    const provider = scripted([{ text: "hi" }]);
    expect(() => createAgent({ provider, loopDetection: { maxIdenticalCalls: 1 } })).toThrow(
      /loopDetection.maxIdenticalCalls must be an integer of at least 2, got 1/,
    );
    expect(() => createAgent({ provider, loopDetection: { maxIdenticalFailure: 3 } as never })).toThrow(
      /createAgent loopDetection: unknown option "maxIdenticalFailure" \(did you mean "maxIdenticalFailures"\?\)/,
    );
  });

  it("starts counting afresh in each run, and a warning never leaks into the next run", async () => {
    const agent = createAgent({
      provider: scripted((request, call): ScriptedStep => {
        const last = request.messages.at(-1);
        // Answer as soon as warned, so each run ends normally right after its warning.
        if (last?.role === "user" && String(last.content).startsWith("[Loop detected")) return { text: "ok" };
        return { toolCalls: [{ id: `c${call}`, name: "lookup", arguments: { key: "a" } }] };
      }),
      tools: [lookup],
      loopDetection: { maxIdenticalCalls: 3 },
    });
    const events = record(agent);
    await agent.prompt("first");
    await agent.prompt("second");
    const ends = events.filter((e): e is AgentEventOf<"agent_end"> => e.type === "agent_end");
    expect(ends.map((e) => e.reason)).toEqual(["stop", "stop"]);
    expect(loopEvents(events).map((e) => `${e.action}:${e.count}`)).toEqual(["warned:3", "warned:3"]);
  });

  it("keeps its counts in the persisted snapshot: a restored agent stops where the old one would have", async () => {
    const script = (_request: unknown, call: number): ScriptedStep => ({
      toolCalls: [{ id: `c${call}`, name: "lookup", arguments: { key: "a" } }],
      // The 6th model call is slow: the snapshot is taken while it streams, after the warning.
      ...(call === 5 && { delayMs: 300 }),
    });
    const first = createAgent({ provider: scripted(script), tools: [lookup] });
    const warned = new Promise<void>((resolve) =>
      first.events$.subscribe((e) => e.type === "loop_detected" && resolve()),
    );
    const done = first.prompt("go");
    await warned;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(first.state).toBe("running.streaming");
    const saved = first.getPersistedSnapshot();
    first.abort();
    await done;

    const restored = createAgent({ provider: scripted(script), tools: [lookup], snapshot: saved });
    const events = record(restored);
    await restored.waitForIdle();
    expect(loopEvents(events).map((e) => `${e.action}:${e.count}`)).toEqual(["stopped:6"]);
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "loop" });
  });
});

describe("loop detection logic", () => {
  it("call keys are those of earlier releases, so a restored snapshot's loop memory still matches", () => {
    // Keys persisted by earlier releases (snapshots keep them): the same call must hash the same.
    expect(callKey("read_file", { path: "a.txt", limit: 10 })).toBe("kjr8bdaidb");
    expect(callKey("read_file", { limit: 10, path: "a.txt" })).toBe("kjr8bdaidb");
    expect([hashText(""), hashText("a"), hashText("x".repeat(1000))]).toEqual([
      "wvjl67o803",
      "262p94epp1d",
      "21ded0ooxff",
    ]);
  });

  it("canonical JSON sorts keys at every depth and drops undefined", () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: "x", u: undefined })).toBe(
      '{"a":"x","b":[1,{"c":2,"d":1}]}',
    );
  });

  it("remembers only the most recent distinct calls, so cost and snapshot size stay bounded", () => {
    const limits = resolveLoopDetection(undefined)!;
    let state;
    for (let turn = 1; turn <= 500; turn++) {
      const call = {
        type: "toolCall" as const,
        id: `c${turn}`,
        name: "lookup",
        arguments: { key: `k${turn}` },
      };
      const result = {
        role: "toolResult" as const,
        toolCallId: call.id,
        toolName: "lookup",
        content: [{ type: "text" as const, text: "v" }],
        isError: false,
        timestamp: 0,
      };
      state = recordToolResults(state, limits, [call], [result], turn).state;
    }
    expect(state!.recent).toHaveLength(LOOP_MEMORY);
  });

  it("can stop a run only once a call was warned about (the turn's shortcut past turnEnd relies on it)", () => {
    const limits = resolveLoopDetection({ maxIdenticalCalls: 2 })!;
    const call = { type: "toolCall" as const, id: "c", name: "lookup", arguments: { key: "k" } };
    const result = {
      role: "toolResult" as const,
      toolCallId: "c",
      toolName: "lookup",
      content: [{ type: "text" as const, text: "v" }],
      isError: false,
      timestamp: 0,
    };
    expect(loopMayStop(undefined)).toBe(false);
    const first = recordToolResults(undefined, limits, [call], [result], 1);
    expect(first.warnings).toEqual([]);
    expect(loopMayStop(first.state)).toBe(false);
    const second = recordToolResults(first.state, limits, [call], [result], 2);
    expect(second.warnings).toHaveLength(1);
    expect(loopMayStop(second.state)).toBe(true);
    expect(recordToolResults(second.state, limits, [call], [result], 3).stop).toMatchObject({
      toolName: "lookup",
    });
  });
});
