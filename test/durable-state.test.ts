import { type ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import {
  createApprovalBook,
  createRunRecorder,
  createTranscriptWriter,
  readStatus,
  readStored,
  type RunRecord,
} from "../durable/session-state.js";
import { createRunSlotWriter, readRunSlots, slotIndexes } from "../durable/run-slots.js";

// A session's stored transcript against a key/value state held in memory (no server): what each
// write costs in keys, and that every read, from any index, gives back the transcript written, in
// the current layout (the snapshot "m/0", and a run's slots "s/<k>" with its count) and in those of
// earlier versions (tail slots "t/<j>" with the count in the run record; format 1: a key per
// message, a "count" key), which the next run moves into the snapshot.

const user = (text: string): AgentMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp: 0,
});

function memoryState(initial: Record<string, unknown> = {}) {
  const state = new Map<string, unknown>(Object.entries(structuredClone(initial)));
  const writes: string[] = [];
  const reads: string[] = [];
  const ctx = {
    key: "s",
    get: (key: string) => {
      reads.push(key);
      return RestatePromise.resolve(state.has(key) ? structuredClone(state.get(key)) : null);
    },
    stateKeys: () => {
      reads.push("(keys)");
      return RestatePromise.resolve([...state.keys()]);
    },
    set: (key: string, value: unknown) => {
      writes.push(`set ${key}`);
      state.set(key, structuredClone(value));
    },
    clear: (key: string) => {
      writes.push(`clear ${key}`);
      state.delete(key);
    },
  } as unknown as ObjectContext;
  return { ctx, state, writes, reads };
}

const record = (count?: number): RunRecord => ({
  state: "running",
  runId: "inv_1",
  turn: 0,
  startedAt: 0,
  ...(count !== undefined && { count }),
});

let runs = 0;

/**
 * A run as the service makes one (durable/session-run.ts): it reads the stored transcript, starts
 * its record (moving an earlier layout into the snapshot), changes the transcript (`next` gets the
 * stored messages, the objects the agent starts from), writes it in a slot, and ends: the
 * transcript folded into the snapshot with its last slot, the record idle.
 */
async function runOnce(ctx: ObjectContext, next: (stored: AgentMessage[]) => AgentMessage[]) {
  const previous = await ctx.get<RunRecord>("run");
  const stored = await readStored(ctx, 0, { run: previous });
  const runId = `inv_${++runs}`;
  const writer = createTranscriptWriter(ctx, stored);
  const slots = createRunSlotWriter(ctx, runId, previous?.slotCount ?? 0);
  const recorder = createRunRecorder(ctx, { ...record(), runId, slotted: true });
  recorder.write(writer.start());
  const messages = next(stored.messages);
  writer.write(messages);
  slots.write({ turn: 1, count: writer.count, ...writer.take() });
  writer.fold();
  slots.write({ turn: 1, count: writer.count, ...writer.take() });
  recorder.write({
    state: "idle",
    count: writer.count,
    base: writer.count,
    endGeneration: writer.generation,
    slotCount: slots.count,
  });
  slots.clearStale();
  return messages;
}

async function expectEveryRead(ctx: ObjectContext, transcript: AgentMessage[]) {
  for (let from = 0; from <= transcript.length + 1; from++) {
    const slice = await readStored(ctx, from);
    expect(slice.count).toBe(transcript.length);
    expect(slice.from).toBe(Math.min(from, transcript.length));
    expect(slice.messages, `read from ${from}`).toEqual(transcript.slice(from));
  }
}

/** A run started on `ctx` as the service starts one: its writer, slots and record. */
async function startRun(ctx: ObjectContext, runId: string) {
  const previous = await ctx.get<RunRecord>("run");
  const stored = await readStored(ctx, 0, { run: previous });
  const writer = createTranscriptWriter(ctx, stored);
  const slots = createRunSlotWriter(ctx, runId, previous?.slotCount ?? 0);
  const recorder = createRunRecorder(ctx, { ...record(), runId, slotted: true });
  recorder.write(writer.start());
  return { stored, writer, slots, recorder };
}

describe("the stored transcript", () => {
  it("stores what a turn added in the run's slot, with its count and turn (one key a wait), and reads back from any index", async () => {
    const { ctx, writes, reads } = memoryState();
    const messages = [user("a"), user("b"), user("c")];
    const { writer, slots, recorder } = await startRun(ctx, "inv_1");
    expect(writes).toEqual(["set run"]);

    writes.length = 0;
    writer.write(messages.slice(0, 2));
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    expect(writes).toEqual(["set s/0"]);
    await expectEveryRead(ctx, messages.slice(0, 2));
    expect(await readStatus(ctx)).toMatchObject({ turn: 1, messageCount: 2 });

    writes.length = 0;
    expect(writer.write(messages.slice(0, 2))).toBe(false);
    writer.write(messages);
    slots.write({ turn: 2, count: writer.count, ...writer.take() });
    expect(writes).toEqual(["set s/1"]);
    await expectEveryRead(ctx, messages);
    expect(await readStatus(ctx)).toMatchObject({ turn: 2, messageCount: 3 });

    // The run's end folds the transcript into the snapshot with its last slot: one key holds it.
    writes.length = 0;
    expect(writer.fold()).toBe(true);
    slots.write({ turn: 2, count: writer.count, ...writer.take() });
    await expectEveryRead(ctx, messages);
    recorder.write({ state: "idle", count: writer.count, base: writer.count, slotCount: slots.count });
    slots.clearStale();
    expect(writes).toEqual(["set m/0", "set s/2", "set run"]);
    reads.length = 0;
    await expectEveryRead(ctx, messages);
    // An ended run's reads: its record and the snapshot, no slot.
    expect(reads.filter((key) => /^[mst]\/|\(keys\)/.test(key))).not.toContain("(keys)");
  });

  it("folds a last batch the run did not write before it ended: one write, not two", async () => {
    const { ctx, writes } = memoryState();
    const { writer, slots } = await startRun(ctx, "inv_1");
    const first = [user("a"), user("b")];
    writer.write(first);
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    writes.length = 0;
    const all = [...first, user("c"), user("d")];
    writer.write(all); // the last turn, and the run ends with no wait after it
    expect(writer.fold()).toBe(true);
    const last = writer.take();
    expect(last).toEqual({ base: 4 });
    slots.write({ turn: 2, count: writer.count, ...last });
    expect(writes).toEqual(["set m/0", "set s/1"]);
    await expectEveryRead(ctx, all);
  });

  it("the next run writes over the last run's slots without clearing them: readers skip them, and its end clears those it did not reach", async () => {
    const { ctx, state, writes } = memoryState();
    const one = await startRun(ctx, "inv_1");
    let messages: AgentMessage[] = [];
    for (let turn = 1; turn <= 3; turn++) {
      messages = [...messages, user(`q${turn}`)];
      one.writer.write(messages);
      one.slots.write({ turn, count: one.writer.count, ...one.writer.take() });
    }
    one.writer.fold();
    one.slots.write({ turn: 3, count: one.writer.count, ...one.writer.take() });
    one.recorder.write({ state: "idle", count: 3, base: 3, slotCount: one.slots.count });
    expect(slotIndexes([...state.keys()])).toEqual([0, 1, 2, 3]);

    writes.length = 0;
    const two = await startRun(ctx, "inv_2");
    // No clear as the run starts: the old slots stay, and no read takes them for this run's.
    expect(writes).toEqual(["set run"]);
    await expectEveryRead(ctx, messages);
    expect(await readStatus(ctx)).toMatchObject({ runId: "inv_2", turn: 0, messageCount: 3 });
    expect(await readRunSlots(ctx, "inv_2")).toEqual([]);
    const more = [...messages, user("r")];
    two.writer.write(more);
    two.slots.write({ turn: 1, count: two.writer.count, ...two.writer.take() });
    await expectEveryRead(ctx, more);
    expect((await readRunSlots(ctx, "inv_2")).map((slot) => slot.run)).toEqual(["inv_2"]);
    two.writer.fold();
    two.slots.write({ turn: 1, count: two.writer.count, ...two.writer.take() });
    two.recorder.write({ state: "idle", count: 4, base: 4, slotCount: two.slots.count });
    writes.length = 0;
    two.slots.clearStale();
    expect(writes).toEqual(["clear s/2", "clear s/3"]);
    await expectEveryRead(ctx, more);
  });

  it("reads a long session's transcript with one read, however many runs wrote it", async () => {
    const { ctx, reads } = memoryState();
    const transcript: AgentMessage[] = [];
    for (let turn = 0; turn < 50; turn++) {
      const added = [user(`q${turn}`), user(`a${turn}`), user(`r${turn}`), user(`s${turn}`)];
      transcript.push(...added);
      await runOnce(ctx, (stored) => [...stored, ...added]);
    }
    expect(transcript).toHaveLength(200);

    reads.length = 0;
    const whole = await readStored(ctx);
    expect(whole.messages).toEqual(transcript);
    expect(reads).toEqual(["run", "generation", "m/0"]);
    await expectEveryRead(ctx, transcript);

    // A run in progress: a follower reading from inside what it added reads its slots, not the snapshot.
    const { stored, writer, slots } = await startRun(ctx, "inv_long");
    const more = [...stored.messages, user("x"), user("y")];
    writer.write(more.slice(0, 201));
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    writer.write(more);
    slots.write({ turn: 2, count: writer.count, ...writer.take() });
    reads.length = 0;
    expect((await readStored(ctx, 201)).messages).toEqual(more.slice(201));
    expect(reads).not.toContain("m/0");
    await expectEveryRead(ctx, more);
  });

  it("a run's state reads and writes do not grow with the runs before it", async () => {
    const { ctx, reads, writes } = memoryState();
    const costs: number[] = [];
    for (let run = 1; run <= 10; run++) {
      reads.length = 0;
      writes.length = 0;
      // Three turns a run, each written as the service writes it, then the run's end.
      const { stored, writer, slots, recorder } = await startRun(ctx, `inv_${run}`);
      let messages = stored.messages;
      for (let turn = 0; turn < 3; turn++) {
        messages = [...messages, user(`q${run}.${turn}`), user(`a${run}.${turn}`)];
        writer.write(messages);
        slots.write({ turn, count: writer.count, ...writer.take() });
      }
      writer.fold();
      slots.write({ turn: 3, count: writer.count, ...writer.take() });
      recorder.write({ state: "idle", count: writer.count, base: writer.count, slotCount: slots.count });
      slots.clearStale();
      costs.push(reads.length + writes.length);
      expect((await readStored(ctx)).messages).toEqual(messages);
    }
    expect(Math.max(...costs.slice(2))).toBeLessThanOrEqual(costs[1]!);
  });

  it("rewrites a compacted transcript as the snapshot, and bumps the generation", async () => {
    const { ctx, state } = memoryState();
    await runOnce(ctx, () => [user("1"), user("2"), user("3")]);
    await runOnce(ctx, (stored) => [...stored, user("4"), user("5")]);
    await runOnce(ctx, (stored) => [...stored, user("6"), user("7"), user("8")]);
    expect([...state.keys()].filter((k) => k.startsWith("m/"))).toEqual(["m/0"]);

    // A compaction that keeps messages 1–4 and replaces the rest (from inside the snapshot).
    const compacted = await runOnce(ctx, (s) => [...s.slice(0, 4), user("summary"), s[7]!]);
    expect(state.get("generation")).toBe(1);
    await expectEveryRead(ctx, compacted);
    expect(compacted.map((m) => m.content)).toEqual(
      ["1", "2", "3", "4", "summary", "8"].map((text) => [{ type: "text", text }]),
    );

    // Inside what the run added: the snapshot is rewritten at the next slot, which says so.
    const { stored, writer, slots, recorder } = await startRun(ctx, "inv_compact");
    const a = [...stored.messages, user("9"), user("10")];
    writer.write(a);
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    const b = [...a, user("11"), user("12")];
    writer.write(b);
    slots.write({ turn: 2, count: writer.count, ...writer.take() });
    const c = [...b.slice(0, 9), user("summary 2")];
    writer.write(c);
    slots.write({ turn: 3, count: writer.count, ...writer.take() });
    expect(state.get("generation")).toBe(2);
    expect(state.get("m/0")).toEqual(c);
    await expectEveryRead(ctx, c);
    const d = [...c, user("13")];
    writer.write(d);
    slots.write({ turn: 4, count: writer.count, ...writer.take() });
    await expectEveryRead(ctx, d);
    writer.fold();
    slots.write({ turn: 4, count: writer.count, ...writer.take() });
    recorder.write({ state: "idle", count: writer.count, base: writer.count, slotCount: slots.count });
    await expectEveryRead(ctx, d);

    // Shorter than the snapshot: the snapshot is rewritten.
    const shorter = await runOnce(ctx, (s) => s.slice(0, 2));
    expect(state.get("generation")).toBe(3);
    expect(state.get("m/0")).toEqual(shorter);
    await expectEveryRead(ctx, shorter);
  });

  it("reads a session stored in format 1 and moves it into the snapshot as the next run starts", async () => {
    const old = [user("a"), user("b"), user("c")];
    const { ctx, state, writes } = memoryState({
      run: { ...record(), state: "idle" },
      count: 3,
      "m/0": old[0],
      "m/1": old[1],
      "m/2": old[2],
    });
    await expectEveryRead(ctx, old);
    expect(await readStatus(ctx)).toMatchObject({ messageCount: 3 });

    await startRun(ctx, "inv_2");
    // The record's first write moves the transcript into the current layout: one snapshot, the old keys gone.
    expect(writes).toEqual(["set m/0", "clear m/1", "clear m/2", "clear count", "set run"]);
    expect(state.has("count")).toBe(false);
    expect((state.get("run") as RunRecord).base).toBe(3);
    await expectEveryRead(ctx, old);

    const more = await runOnce(ctx, (stored) => [...stored, user("d"), user("e")]);
    await expectEveryRead(ctx, more);
    expect(await readStatus(ctx)).toMatchObject({ messageCount: 5 });
    const compacted = await runOnce(ctx, (s) => [s[0]!, user("summary"), s[4]!]);
    expect([...state.keys()].filter((k) => k.startsWith("m/")).sort()).toEqual(["m/0"]);
    await expectEveryRead(ctx, compacted);
  });

  it("reads a session stored with batches in tail slots (issue 44 before the run's slots), and moves it into the snapshot as the next run starts", async () => {
    const messages = [user("a"), user("b"), user("c"), user("d"), user("e")];
    // What the code before this change left mid-run (a run that never ended): snapshot, two tail slots.
    const { ctx, state, writes } = memoryState({
      run: { ...record(5), tail: [2, 4], tailKeys: 3 },
      "m/0": messages.slice(0, 2),
      "t/0": messages.slice(2, 4),
      "t/1": messages.slice(4),
      "t/2": [user("stale")],
    });
    await expectEveryRead(ctx, messages);
    // And as one ended, its last batches folded (kept for followers of the last run).
    const ended = memoryState({
      run: { ...record(5), state: "idle", tail: [], tailKeys: 2, folded: [2, 4] },
      "m/0": messages,
      "t/0": messages.slice(2, 4),
      "t/1": messages.slice(4),
    });
    await expectEveryRead(ended.ctx, messages);

    const { writer, slots } = await startRun(ctx, "inv_2");
    expect(writes).toEqual(["set m/0", "clear t/0", "clear t/1", "clear t/2", "set run"]);
    expect([...state.keys()].filter((k) => /^[mt]\//.test(k))).toEqual(["m/0"]);
    await expectEveryRead(ctx, messages);
    const more = [...messages, user("f")];
    writer.write(more);
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    await expectEveryRead(ctx, more);
  });

  it("a run's start reads the generation only when no ended run said it: none for a session that never ran", async () => {
    const { ctx, reads } = memoryState();
    await readStored(ctx, 0, { run: null });
    expect(reads).toEqual([]);
    await runOnce(ctx, () => [user("1"), user("2"), user("3")]);
    await runOnce(ctx, (s) => [s[0]!, user("summary")]);
    expect((await ctx.get<RunRecord>("run"))!.endGeneration).toBe(1);
    reads.length = 0;
    const stored = await readStored(ctx, 0, { run: await ctx.get<RunRecord>("run") });
    expect(stored.generation).toBe(1);
    expect(reads).toEqual(["run", "m/0"]);
    // A record of an earlier version says nothing: the key is read.
    const earlier = memoryState({ run: { ...record(0), state: "idle" }, generation: 2 });
    expect((await readStored(earlier.ctx, 0, { run: record(0) })).generation).toBe(2);
  });

  it("says how the last run ended from the run record, and from the lastRun key of a session stored before", async () => {
    const last = { runId: "inv_0", reason: "stop" as const, usage: {}, startedAt: 1, endedAt: 2 };
    const { ctx, reads } = memoryState({
      run: { ...record(0), runId: "inv_1", slotted: true, base: 0, last },
      lastRun: { ...last, runId: "stale" },
    });
    expect((await readStatus(ctx)).lastRun).toEqual(last);
    expect(reads).not.toContain("lastRun");
    const earlier = memoryState({ run: { ...record(0), state: "idle" }, lastRun: last });
    expect((await readStatus(earlier.ctx)).lastRun).toEqual(last);
  });

  it("a run after one that never ended (Restate killed it) reads what its slots held and moves it into the snapshot", async () => {
    const { ctx, writes } = memoryState({
      run: { ...record(1), runId: "inv_killed", slotted: true, base: 1 },
      "m/0": [user("a")],
      "s/0": { run: "inv_killed", turn: 1, count: 2, from: 1, messages: [user("b")] },
    });
    await expectEveryRead(ctx, [user("a"), user("b")]);
    const { writer, slots } = await startRun(ctx, "inv_next");
    expect(writes).toEqual(["set m/0", "set run"]);
    await expectEveryRead(ctx, [user("a"), user("b")]);
    writer.write([user("a"), user("b"), user("c")]);
    slots.write({ turn: 1, count: writer.count, ...writer.take() });
    await expectEveryRead(ctx, [user("a"), user("b"), user("c")]);
  });

  it("reads the run record once when the run passes the one it read, and gives back the same transcript", async () => {
    const { ctx, reads } = memoryState({
      run: { ...record(2), state: "idle" },
      "m/0": [user("a"), user("b")],
    });
    const previous = (await ctx.get<RunRecord>("run"))!;
    reads.length = 0;
    const stored = await readStored(ctx, 0, { run: previous });
    expect(stored.messages).toEqual([user("a"), user("b")]);
    expect(reads).not.toContain("run");
    expect(await readStored(ctx)).toEqual(stored);
  });
});

describe("the approval books", () => {
  const pending = { toolCallId: "t1", toolName: "x", args: {}, awakeableId: "a1" };

  it("a run that adds nothing to a book known empty clears nothing as it ends", () => {
    const { ctx, writes } = memoryState();
    createApprovalBook(ctx, "approvals", { storedEmpty: true }).clear();
    createApprovalBook(ctx, "clientCalls", { storedEmpty: true }).clear();
    expect(writes).toEqual([]);
  });

  it("clears what a run added, and a book not known empty (a run that did not end) always", () => {
    const { ctx, state, writes } = memoryState({ clientCalls: { t0: { ...pending, toolCallId: "t0" } } });
    const approvals = createApprovalBook(ctx, "approvals", { storedEmpty: true });
    approvals.add(pending);
    approvals.remove("t1");
    approvals.clear();
    createApprovalBook(ctx, "clientCalls").clear();
    expect(writes).toEqual(["set approvals", "set approvals", "clear approvals", "clear clientCalls"]);
    expect(state.has("clientCalls")).toBe(false);
  });
});
