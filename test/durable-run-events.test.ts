import { type ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import { Subject } from "rxjs";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../index.js";
import { createLiveRuns } from "../durable/live-runs.js";
import {
  committedStream,
  createRunEventRecorder,
  eventBatchStarts,
  readRunEvents,
} from "../durable/run-events.js";
import { createRunPublisher, type SessionEvent } from "../durable/run-publisher.js";

// Where a durable run's recorded events go in its session's state, against a key/value state held
// in memory (no server; test/durable-events.slow.test.ts runs them on Restate): a batch a wait, under
// its own key, found again by the keys, so the run record is written once for them, not with each
// batch (issue 44); and the layout of earlier versions (the batches listed in the run record) still
// read and cleared.

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
  it("go one batch a flush under their own key; only the first flush asks for a run record write", async () => {
    const { ctx, writes } = memoryState();
    const publisher = publisherOn(ctx);
    publisher.publish({ type: "agent_start" });
    expect(publisher.flush()).toBe(true);
    for (const event of turn(1)) publisher.publish(event);
    expect(publisher.flush()).toBe(false);
    expect(publisher.flush()).toBe(false);
    for (const event of turn(2)) publisher.publish(event);
    expect(publisher.flush()).toBe(false);
    expect(writes).toEqual(["set e/0", "set e/1", "set e/3"]);
  });

  it("are read back by their keys, from any seq, with the seq the next one gets", async () => {
    const { ctx } = memoryState();
    const publisher = publisherOn(ctx);
    const all: AgentEvent[] = [{ type: "agent_start" }, ...turn(1), ...turn(2)];
    publisher.publish(all[0]!);
    publisher.flush();
    for (const event of turn(1)) publisher.publish(event);
    publisher.flush();
    for (const event of turn(2)) publisher.publish(event);
    publisher.flush();
    for (let since = 0; since <= all.length + 1; since++) {
      const read = await readRunEvents(ctx, "inv_2", undefined, false, since);
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
    recorder.flush();
    // The answer, the turn_end that carries it, and nothing else: its stream is not stored.
    expect(JSON.stringify(state.get("e/0")).split("the-one-answer")).toHaveLength(3);
    const all: AgentEvent[] = [
      { type: "agent_start" },
      ...committedStream(answer),
      { type: "message_end", message: answer },
      { type: "turn_end", turn: 1, message: answer, toolResults: [] } as AgentEvent,
    ];
    // The seqs the live channel gave each event are the ones a reader gets.
    expect(seen).toEqual(all.map((_, seq) => seq));
    for (let since = 0; since <= all.length; since++) {
      const read = await readRunEvents(ctx, "inv_2", undefined, false, since);
      expect(read, `from ${since}`).toEqual({
        runId: "inv_2",
        events: all.map((event, seq) => ({ seq, event })).slice(since),
        next: all.length,
        ended: false,
      });
    }
  });

  it("past the bound, the oldest batches go and a read from before them is unavailable", async () => {
    const { ctx, state } = memoryState();
    const publisher = publisherOn(ctx, [], 2);
    publisher.publish({ type: "agent_start" });
    publisher.flush();
    for (const event of turn(1)) publisher.publish(event);
    publisher.flush();
    for (const event of turn(2)) publisher.publish(event);
    publisher.flush();
    expect(eventBatchStarts([...state.keys()])).toEqual([3]);
    expect(await readRunEvents(ctx, "inv_2", undefined, true, 0)).toBeUndefined();
    expect(await readRunEvents(ctx, "inv_2", undefined, true, 3)).toMatchObject({ next: 5 });
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
