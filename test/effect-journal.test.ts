import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createJournaledAgent } from "../agent/create-agent.js";
import type { ClientResultRequest, EffectJournal, InboxKind } from "../core/effect-journal.js";
import {
  type AgentMessage,
  type AgentOptions,
  createPermissions,
  defineClientTool,
  defineTool,
  fallback,
  type ProviderRequest,
  type ScriptedStep,
  scripted,
  subAgentTool,
} from "../index.js";
import { expectValidTranscript, record, trace } from "./helpers.js";

// The seam a durable engine plugs into: every effect of the loop goes through the journal, in an
// order that depends only on what the journal answered before, so answering from a record replays
// the run without running anything again.

type Entry = { ask: string; answer: unknown };

/** A journal that runs each effect and records its answer, or answers from `replay` when given. */
function createRecordingJournal(
  options: {
    replay?: Entry[];
    inbox?: Partial<Record<InboxKind, AgentMessage[][]>>;
    decide?: (toolCallId: string) => { approved: true } | { approved: false; reason?: string };
    /** Sub-agents journal their own steps (`EffectJournal.child`), as a durable engine's do. */
    children?: boolean;
  } = {},
) {
  const entries: Entry[] = [];
  const replay = options.replay ? [...options.replay] : undefined;
  let clock = 1_000;
  const inbox = {
    steering: [...(options.inbox?.steering ?? [])],
    followUp: [...(options.inbox?.followUp ?? [])],
  };
  const step = async <T>(ask: string, run: () => Promise<T> | T): Promise<T> => {
    clock += 10;
    if (replay) {
      const next = replay.shift();
      expect(next?.ask, "the replay asks in the recorded order").toBe(ask);
      entries.push(next!);
      return next!.answer as T;
    }
    const answer = await run();
    entries.push({ ask, answer: structuredClone(answer) });
    return answer;
  };
  /** The journal of the agent at `path` (a sub-agent's: its steps named under its call's path). */
  const scoped = (prefix: string): EffectJournal => ({
    idPrefix: `recorded-${prefix}`,
    now: () => clock,
    modelCall: (turn, run) => step(`${prefix}model:${turn}`, run),
    toolCall: (id, run) => step(`${prefix}tool:${id}`, run),
    permission: (id, run) => step(`${prefix}permission:${id}`, run),
    approval: (request) =>
      step(
        `${prefix}approval:${request.toolCallId}`,
        () => options.decide?.(`${prefix}${request.toolCallId}`) ?? { approved: true },
      ),
    compaction: (turn, run) => step(`${prefix}compaction:${turn}`, run),
    drain: (kind) => (prefix ? Promise.resolve([]) : step(`drain:${kind}`, () => inbox[kind].shift() ?? [])),
    timer: (ms) => step(`${prefix}timer:${ms}`, () => new Promise<void>(() => {})),
    ...(options.children && { child: (callId: string) => scoped(`${prefix}${callId}/`) }),
  });
  return { journal: scoped(""), entries };
}

function countingTool() {
  const runs: { id: string; key: string }[] = [];
  const tool = defineTool({
    name: "note",
    description: "Writes a note",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }, ctx) => {
      runs.push({ id: ctx.toolCallId, key: ctx.idempotencyKey });
      return `noted ${text}`;
    },
  });
  return { tool, runs };
}

/** Answers from what the model was sent, as a real model does (not from a call counter). */
function modelFor(steps: (request: ProviderRequest) => ScriptedStep) {
  return scripted((request) => steps(request));
}

const assistantTurns = (request: ProviderRequest) =>
  request.messages.filter((m) => m.role === "assistant").length;

describe("the effect journal seam", () => {
  it("sends every effect of a run through the journal, in call order, with the journal's clock", async () => {
    const { tool, runs } = countingTool();
    const provider = modelFor((request) =>
      assistantTurns(request) === 0
        ? {
            toolCalls: [
              { id: "a", name: "note", arguments: { text: "one" } },
              { id: "b", name: "note", arguments: { text: "two" } },
            ],
          }
        : { text: "done" },
    );
    const { journal, entries } = createRecordingJournal({
      inbox: { steering: [[], [{ role: "user", content: "also three", timestamp: 5 }]] },
    });
    const agent = createJournaledAgent({ provider, tools: [tool] }, journal);
    const events = record(agent);
    await agent.prompt("write notes");

    expect(entries.map((e) => e.ask)).toEqual([
      "model:1",
      "tool:a",
      "tool:b",
      "drain:steering",
      "model:2",
      "drain:steering",
      "model:3",
      "drain:steering",
      "drain:followUp",
    ]);
    expect(runs).toEqual([
      { id: "a", key: "a" },
      { id: "b", key: "b" },
    ]);
    // The steering message drained at the second check opened the third turn.
    expect(agent.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
      "user",
      "assistant",
    ]);
    expectValidTranscript(agent.messages);
    // Every timestamp the loop wrote came from the journal's clock (it starts at 1,000).
    for (const message of agent.messages.filter((m) => m.timestamp !== 5)) {
      expect(message.timestamp).toBeGreaterThanOrEqual(1_000);
      expect(message.timestamp).toBeLessThan(2_000);
    }
    expect(trace(events).filter((t) => t.startsWith("tool_execution"))).toEqual([
      "tool_execution_start:a",
      "tool_execution_start:b",
      "tool_execution_end:a",
      "tool_execution_end:b",
    ]);
  });

  it("replays a run from the record: same transcript, no model call and no tool run again", async () => {
    const first = countingTool();
    const options = (tool: AgentOptions["tools"]): AgentOptions => ({
      provider: modelFor((request) =>
        assistantTurns(request) < 2
          ? { toolCalls: [{ id: `c${assistantTurns(request)}`, name: "note", arguments: { text: "x" } }] }
          : { text: "all noted" },
      ),
      tools: tool,
    });
    const live = createRecordingJournal();
    const agent = createJournaledAgent(options([first.tool]), live.journal);
    await agent.prompt({ role: "user", content: "go", timestamp: 1 });

    const second = countingTool();
    const silent = scripted(() => {
      throw new Error("a replay must not call the model");
    });
    const replayed = createRecordingJournal({ replay: live.entries });
    const again = createJournaledAgent({ ...options([second.tool]), provider: silent }, replayed.journal);
    await again.prompt({ role: "user", content: "go", timestamp: 1 });

    expect(first.runs.map((r) => r.id)).toEqual(["c0", "c1"]);
    expect(second.runs).toEqual([]);
    expect(again.messages).toEqual(agent.messages);
  });

  it("a sub-agent under a journal with children journals its own steps under its call; a replay runs none of them again", async () => {
    const { tool, runs } = countingTool();
    const helper = subAgentTool({
      name: "helper",
      description: "Takes notes",
      tools: [tool],
      readOnly: true,
      provider: modelFor((request) =>
        assistantTurns(request) === 0
          ? { toolCalls: [{ id: "c1", name: "note", arguments: { text: "child" } }] }
          : { text: "child done" },
      ),
    });
    const provider = modelFor((request) =>
      assistantTurns(request) === 0
        ? { toolCalls: [{ id: "d1", name: "helper", arguments: { task: "note it" } }] }
        : { text: "done" },
    );
    const live = createRecordingJournal({ children: true });
    const agent = createJournaledAgent({ provider, tools: [helper] }, live.journal);
    await agent.prompt("delegate");
    // The call is its child's steps, not one step of its own (a crash would run the whole child again).
    expect(live.entries.map((e) => e.ask)).toEqual([
      "model:1",
      "d1/model:1",
      "d1/tool:c1",
      "d1/model:2",
      "drain:steering",
      "model:2",
      "drain:steering",
      "drain:followUp",
    ]);
    expect(runs).toHaveLength(1);

    const replayed = createRecordingJournal({ children: true, replay: live.entries });
    const again = createJournaledAgent({ provider, tools: [helper] }, replayed.journal);
    await again.prompt("delegate");
    expect(runs).toHaveLength(1);
    expect(again.messages.map((m) => ({ ...m, timestamp: 0 }))).toEqual(
      agent.messages.map((m) => ({ ...m, timestamp: 0 })),
    );
    expectValidTranscript(again.messages);
  });

  it("a sub-agent tool wrapped in a plain tool is journaled whole: its child journals nothing inside that step", async () => {
    const { tool, runs } = countingTool();
    const helper = subAgentTool({
      name: "helper",
      description: "Takes notes",
      tools: [tool],
      readOnly: true,
      provider: modelFor((request) =>
        assistantTurns(request) === 0
          ? { toolCalls: [{ id: "c1", name: "note", arguments: { text: "child" } }] }
          : { text: "child done" },
      ),
    });
    // An app's wrapper: a tool of its own that runs the sub-agent tool (a durable engine allows no
    // step inside a step, so the child must not journal inside the wrapper's).
    const wrapper = defineTool({
      name: "wrapped",
      description: "Takes notes through a helper",
      parameters: z.object({ task: z.string() }),
      readOnly: true,
      execute: (args, ctx) => helper.execute(args, ctx),
    });
    const provider = modelFor((request) =>
      assistantTurns(request) === 0
        ? { toolCalls: [{ id: "d1", name: "wrapped", arguments: { task: "note it" } }] }
        : { text: "done" },
    );
    const { journal, entries } = createRecordingJournal({ children: true });
    const agent = createJournaledAgent({ provider, tools: [wrapper] }, journal);
    await agent.prompt("delegate");
    expect(entries.map((e) => e.ask)).toEqual([
      "model:1",
      "tool:d1",
      "drain:steering",
      "model:2",
      "drain:steering",
      "drain:followUp",
    ]);
    expect(runs).toHaveLength(1);
    expectValidTranscript(agent.messages);
  });

  it("a fallback chain's call is one step: the replay takes the model that answered and asks neither", async () => {
    const chain = () => {
      const calls = { first: 0, second: 0 };
      const provider = fallback(
        [
          scripted(
            () => (calls.first++, { text: "half", error: { kind: "overloaded", message: "529 overloaded" } }),
            { id: "anthropic", model: "first" },
          ),
          scripted(() => (calls.second++, { text: "from the second" }), { id: "openai", model: "second" }),
        ],
        { breaker: false },
      );
      return { provider, calls };
    };
    const live = chain();
    const recording = createRecordingJournal();
    const agent = createJournaledAgent({ provider: live.provider }, recording.journal);
    await agent.prompt({ role: "user", content: "go", timestamp: 1 });
    expect(live.calls).toEqual({ first: 1, second: 1 });
    expect(agent.messages.at(-1)).toMatchObject({ model: "second", provider: "openai" });

    // The process died after the second model answered: the replay answers from the record.
    const after = chain();
    const replayed = createRecordingJournal({ replay: recording.entries });
    const again = createJournaledAgent({ provider: after.provider }, replayed.journal);
    await again.prompt({ role: "user", content: "go", timestamp: 1 });
    expect(after.calls).toEqual({ first: 0, second: 0 });
    expect(again.messages).toEqual(agent.messages);
  });

  it("asks the journal for approvals and permission decisions, and honours its answer", async () => {
    const { tool, runs } = countingTool();
    const provider = modelFor((request) =>
      assistantTurns(request) === 0
        ? {
            toolCalls: [
              { id: "yes", name: "note", arguments: { text: "approved" } },
              { id: "no", name: "note", arguments: { text: "denied" } },
            ],
          }
        : { text: "ok" },
    );
    const { journal, entries } = createRecordingJournal({
      decide: (id) => (id === "yes" ? { approved: true } : { approved: false, reason: "not today" }),
    });
    const agent = createJournaledAgent(
      { provider, tools: [tool], permissions: createPermissions() },
      journal,
    );
    await agent.prompt("go");

    expect(entries.map((e) => e.ask).slice(0, 5)).toEqual([
      "model:1",
      "permission:yes",
      "permission:no",
      "approval:yes",
      "approval:no",
    ]);
    expect(runs.map((r) => r.id)).toEqual(["yes"]);
    const results = agent.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => (m.content[0] as { text: string }).text)).toEqual([
      "noted approved",
      "The user denied this tool call: not today",
    ]);
  });

  it("asks the journal for a client-run call's result, with the tool's timeout; without that method, answers with an error", async () => {
    const pick = defineClientTool({
      name: "pick",
      description: "Asks the user to pick",
      parameters: z.object({ options: z.array(z.string()) }),
      timeoutMs: 5_000,
    });
    const provider = () =>
      modelFor((request) =>
        assistantTurns(request) === 0
          ? { toolCalls: [{ id: "c1", name: "pick", arguments: { options: ["red"] } }] }
          : { text: "ok" },
      );
    const requests: ClientResultRequest[] = [];
    const { journal } = createRecordingJournal();
    const agent = createJournaledAgent(
      { provider: provider(), tools: [pick] },
      {
        ...journal,
        clientResult: async (request) => {
          requests.push(request);
          return { content: [{ type: "text", text: "red" }] };
        },
      },
    );
    await agent.prompt("go");
    expect(requests).toEqual([
      {
        toolCallId: "c1",
        toolName: "pick",
        args: { options: ["red"] },
        timeout: {
          ms: 5_000,
          result: {
            content: [
              { type: "text", text: "Tool pick timed out after 5000 ms waiting for the client's result" },
            ],
            isError: true,
          },
        },
      },
    ]);
    expect(agent.messages.find((m) => m.role === "toolResult")).toMatchObject({
      isError: false,
      content: [{ type: "text", text: "red" }],
    });

    // A journal that cannot take a client's result answers the call at once instead of hanging.
    const plain = createJournaledAgent(
      { provider: provider(), tools: [pick] },
      createRecordingJournal().journal,
    );
    await plain.prompt("go");
    expectValidTranscript(plain.messages);
    expect(plain.messages.find((m) => m.role === "toolResult")).toMatchObject({
      isError: true,
      content: [
        { type: "text", text: "Tool pick is run by the client, which this journal does not support" },
      ],
    });
  });

  it("an abort mid-stream ends the call with the answer the journal recorded", async () => {
    const provider = scripted([{ text: "a long answer that streams slowly", chunkSize: 2, delayMs: 5 }]);
    const { journal, entries } = createRecordingJournal();
    const agent = createJournaledAgent({ provider }, journal);
    const events = record(agent);
    const done = agent.prompt("talk");
    await new Promise<void>((resolve) =>
      agent.events$.subscribe((e) => e.type === "message_update" && e.delta === "ng" && resolve()),
    );
    agent.abort();
    await done;

    const recorded = entries.find((e) => e.ask === "model:1")!.answer as { message: AgentMessage };
    const last = agent.messages.at(-1)!;
    // The journal holds what the model call returned; the transcript adds the interrupted mark after
    // the words that arrived (issue 43), so a replay of the same answer marks it the same way.
    expect(recorded.message.role === "assistant" && recorded.message.content).toHaveLength(1);
    expect(last).toEqual({
      ...recorded.message,
      content: [
        ...(recorded.message.role === "assistant" ? recorded.message.content : []),
        { type: "text", text: "\n\n[interrupted]" },
      ],
    });
    expect(last).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "aborted" });
  });
});
