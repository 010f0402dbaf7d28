import { type ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../index.js";
import { createLiveRuns } from "../durable/live-runs.js";
import { committedStream, createRunEventRecorder, readRunEvents, slotEvents } from "../durable/run-events.js";
import { createRunSlotWriter, readRunSlots } from "../durable/run-slots.js";
import { createRunPublisher, type SessionEvent } from "../durable/run-publisher.js";

// Where a durable run's recorded events go in its session's state, against a key/value state held
// in memory (no server; test/durable-events.slow.test.ts runs them on Restate): a batch a wait, in
// the run's slot with the rest of what the wait writes (durable/run-slots.ts), so recording costs no
// state write of its own (issue 44); and the layouts of earlier versions (a key a batch, listed in
// the run record or found by the keys) still read and cleared.

function memoryState(initial: Record<string, unknown> = {}) {
  const state = new Map<string, unknown>(Object.entries(structuredClone(initial)));
  const writes: string[] = [];
  const ctx = {
    key: "s",
    get: (key: string) => RestatePromise.resolve(state.has(key) ? structuredClone(state.get(key)) : null),
    stateKeys: () => RestatePromise.resolve([...state.keys()]),
    set: (key: string, value: unknown) => {
      writes.push(`set ${key}`);
      state.set(key, structuredClone(value));
    },
    clear: (key: string) => {
      writes.push(`clear ${key}`);
      state.delete(key);
    },
  } as unknown as ObjectContext;
  return { ctx, state, writes };
}

const turn = (n: number): AgentEvent[] => [
  { type: "turn_start", turn: n },
  { type: "turn_end", turn: n, message: assistant(n), toolResults: [] } as AgentEvent,
];
const assistant = (n: number) => ({
  role: "assistant" as const,
  content: [{ type: "text" as const, text: `answer ${n}` }],
  stopReason: "stop" as const,
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
  timestamp: n,
});

function publisherOn(ctx: ObjectContext, previous: number[] = [], maxEvents?: number) {
  return createRunPublisher(ctx, {
    sessionId: "s",
    runId: "inv_2",
    previous,
    eventReplay: maxEvents === undefined ? undefined : { maxEvents },
    events: new Subject<SessionEvent>(),
    liveRun: createLiveRuns().open("s", "inv_2"),
  });
}

describe("a run's recorded events", () => {
  it("go one batch a take, into the run's slot (no key of their own), nothing when none was recorded", async () => {
    const { ctx, writes } = memoryState();
    const publisher = publisherOn(ctx);
    publisher.publish({ type: "agent_start" });
    expect(publisher.take()).toEqual({ seq: 0, events: [{ type: "agent_start" }], kept: 0 });
    for (const event of turn(1)) publisher.publish(event);
    expect(publisher.take()).toEqual({ seq: 1, events: turn(1), kept: 0 });
    expect(publisher.take()).toBeUndefined();
    for (const event of turn(2)) publisher.publish(event);
    expect(publisher.take()).toMatchObject({ seq: 3 });
    expect(writes).toEqual([]);
  });

  it("are read back from the run's slots, from any seq, with the seq the next one gets", async () => {
    const { ctx } = memoryState();
    const publisher = publisherOn(ctx);
    const slots = createRunSlotWriter(ctx, "inv_2", 0);
    const all: AgentEvent[] = [{ type: "agent_start" }, ...turn(1), ...turn(2)];
    publisher.publish(all[0]!);
    slots.write({ turn: 0, count: 0, ...publisher.take() });
    for (const event of turn(1)) publisher.publish(event);
    slots.write({ turn: 1, count: 0, ...publisher.take() });
    // A slot with no events (a turn's messages alone) between two that have some.
    slots.write({ turn: 1, count: 0 });
    for (const event of turn(2)) publisher.publish(event);
    slots.write({ turn: 2, count: 0, ...publisher.take() });
    for (let since = 0; since <= all.length + 1; since++) {
      const read = slotEvents(await readRunSlots(ctx, "inv_2"), "inv_2", false, since);
      expect(read, `from ${since}`).toEqual({
        runId: "inv_2",
        events: all.map((event, seq) => ({ seq, event })).slice(since),
        next: all.length,
        ended: false,
      });
    }
  });

  it("store a model's answer once, as its message_end, and read it back as its committed stream, seq by seq", async () => {
    const { ctx, state } = memoryState();
    const answer = {
      ...assistant(1),
      content: [
        { type: "text" as const, text: "the-one-answer" },
        { type: "toolCall" as const, id: "c1", name: "noop", arguments: { turn: 1 } },
      ],
      stopReason: "toolUse" as const,
    };
    const seen: number[] = [];
    const live = createLiveRuns();
    const run = live.open("s", "inv_2");
    const recorder = createRunPublisher(ctx, {
      sessionId: "s",
      runId: "inv_2",
      previous: [],
      eventReplay: undefined,
      events: new Subject<SessionEvent>(),
      liveRun: run,
    });
    live.follow("s", "inv_2", 0)!.subscribe((entry) => "seq" in entry && seen.push(entry.seq));
    recorder.publish({ type: "agent_start" });
    recorder.publish({ type: "message_end", message: answer });
    recorder.publish({ type: "turn_end", turn: 1, message: answer, toolResults: [] } as AgentEvent);
    createRunSlotWriter(ctx, "inv_2", 0).write({ turn: 1, count: 0, ...recorder.take() });
    // The answer, the turn_end that carries it, and nothing else: its stream is not stored.
    expect(JSON.stringify(state.get("s/0")).split("the-one-answer")).toHaveLength(3);
    const all: AgentEvent[] = [
      { type: "agent_start" },
      ...committedStream(answer),
      { type: "message_end", message: answer },
      { type: "turn_end", turn: 1, message: answer, toolResults: [] } as AgentEvent,
    ];
    // The seqs the live channel gave each event are the ones a reader gets.
    expect(seen).toEqual(all.map((_, seq) => seq));
    for (let since = 0; since <= all.length; since++) {
      const read = slotEvents(await readRunSlots(ctx, "inv_2"), "inv_2", false, since);
      expect(read, `from ${since}`).toEqual({
        runId: "inv_2",
        events: all.map((event, seq) => ({ seq, event })).slice(since),
        next: all.length,
        ended: false,
      });
    }
  });

  it("past the bound, the oldest batches go and a read from before them is unavailable", async () => {
    const { ctx } = memoryState();
    const publisher = publisherOn(ctx, [], 2);
    const slots = createRunSlotWriter(ctx, "inv_2", 0);
    publisher.publish({ type: "agent_start" });
    slots.write({ turn: 0, count: 0, ...publisher.take() });
    for (const event of turn(1)) publisher.publish(event);
    slots.write({ turn: 1, count: 0, ...publisher.take() });
    for (const event of turn(2)) publisher.publish(event);
    const last = publisher.take();
    expect(last?.kept).toBe(3);
    slots.write({ turn: 2, count: 0, ...last });
    const read = await readRunSlots(ctx, "inv_2");
    expect(slotEvents(read, "inv_2", true, 0)).toBeUndefined();
    expect(slotEvents(read, "inv_2", true, 2)).toBeUndefined();
    expect(slotEvents(read, "inv_2", true, 3)).toEqual({
      runId: "inv_2",
      events: turn(2).map((event, i) => ({ seq: 3 + i, event })),
      next: 5,
      ended: true,
    });
  });

  it("a run recorded by an earlier version (its batches in the run record) reads, and the next run clears them", async () => {
    const earlier = [{ type: "agent_start" }, ...turn(1)];
    const { ctx, state, writes } = memoryState({ "e/0": earlier.slice(0, 1), "e/1": earlier.slice(1) });
    const record = {
      next: 3,
      batches: [
        [0, 1, 64],
        [1, 2, 128],
      ] as [number, number, number][],
    };
    const read = await readRunEvents(ctx, "inv_1", record, true, 1);
    expect(read).toEqual({
      runId: "inv_1",
      events: earlier.slice(1).map((event, i) => ({ seq: i + 1, event })),
      next: 3,
      ended: true,
    });
    createRunEventRecorder(
      ctx,
      record.batches.map(([start]) => start),
      undefined,
    );
    expect(writes).toEqual(["clear e/0", "clear e/1"]);
    expect(state.size).toBe(0);
  });
});
