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

// A session's stored transcript against a key/value state held in memory (no server): what each
// write costs in keys, and that every read, from any index, gives back the transcript written, in
// the current format (a batch per write, the count in the run record) and in format 1 (a key per
// message, a "count" key).

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

/**
 * A run as the service makes one: it reads the stored transcript, changes it (`next` gets the
 * stored messages, the objects the agent starts from), and writes it back with its count.
 */
async function runOnce(ctx: ObjectContext, next: (stored: AgentMessage[]) => AgentMessage[]) {
  const stored = await readStored(ctx);
  const writer = createTranscriptWriter(ctx, stored);
  const recorder = createRunRecorder(ctx, (await ctx.get<RunRecord>("run")) ?? record(stored.count));
  const messages = next(stored.messages);
  if (writer.write(messages)) recorder.update(writer.layout);
  writer.flush();
  recorder.flush();
  // As the run ends: its batches folded into the snapshot.
  if (writer.fold()) recorder.write(writer.layout);
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

describe("the stored transcript", () => {
  it("stores what a turn added under one key, counts it in the run record, and reads back from any index", async () => {
    const { ctx, writes, reads } = memoryState({ run: record(0) });
    const messages = [user("a"), user("b"), user("c")];
    const stored = await readStored(ctx);
    const writer = createTranscriptWriter(ctx, stored);
    const recorder = createRunRecorder(ctx, record(0));

    writer.write(messages.slice(0, 2));
    recorder.update({ ...writer.layout, turn: 1 });
    writer.flush();
    recorder.flush();
    recorder.flush();
    expect(writes).toEqual(["set m/0", "set run"]);

    writes.length = 0;
    expect(writer.write(messages.slice(0, 2))).toBe(false);
    writer.write(messages);
    recorder.update(writer.layout);
    writer.flush();
    recorder.flush();
    expect(writes).toEqual(["set t/0", "set run"]);
    await expectEveryRead(ctx, messages);

    // The run's end folds its batches into the snapshot: one key holds the transcript.
    writes.length = 0;
    expect(writer.fold()).toBe(true);
    recorder.write(writer.layout);
    expect(writes).toEqual(["set m/0", "set run"]);
    await expectEveryRead(ctx, messages);
    // A follower reading the run's messages reads its batch still, not the whole snapshot.
    reads.length = 0;
    expect((await readStored(ctx, 2)).messages).toEqual(messages.slice(2));
    expect(reads.filter((key) => /^[mt]\//.test(key))).toEqual(["t/0"]);

    // The next run's record no longer points there (its first write goes over that slot).
    const next = createTranscriptWriter(ctx, await readStored(ctx));
    createRunRecorder(ctx, record()).write(next.layout);
    reads.length = 0;
    expect((await readStored(ctx, 2)).messages).toEqual(messages.slice(2));
    expect(reads.filter((key) => /^[mt]\//.test(key))).toEqual(["m/0"]);
  });

  it("folds a last batch the run did not write before it ended: one write, not two", async () => {
    const { ctx, writes } = memoryState({ run: record(0) });
    const writer = createTranscriptWriter(ctx, await readStored(ctx));
    const recorder = createRunRecorder(ctx, record(0));
    const first = [user("a"), user("b")];
    writer.write(first);
    writer.flush();
    recorder.write(writer.layout);
    writes.length = 0;
    const all = [...first, user("c"), user("d")];
    writer.write(all); // the last turn, and the run ends with no wait after it
    expect(writer.fold()).toBe(true);
    writer.flush();
    recorder.write(writer.layout);
    expect(writes).toEqual(["set m/0", "set run"]);
    expect((await ctx.get<RunRecord>("run"))!.folded).toBeUndefined();
    await expectEveryRead(ctx, all);

    // A run whose earlier turn's batch was written: followers read every message still.
    const next = createTranscriptWriter(ctx, await readStored(ctx));
    const more = [...all, user("e")];
    next.write(more);
    next.flush();
    createRunRecorder(ctx, record()).write(next.layout);
    const last = [...more, user("f")];
    next.write(last);
    next.fold();
    createRunRecorder(ctx, record()).write(next.layout);
    await expectEveryRead(ctx, last);
  });

  it("reads nothing past the recorded count: a batch written before its count is not seen yet", async () => {
    const { ctx } = memoryState({ run: record(0) });
    const writer = createTranscriptWriter(ctx, await readStored(ctx));
    writer.write([user("a"), user("b")]);
    expect((await readStored(ctx)).messages).toEqual([]);
    createRunRecorder(ctx, record(0)).write({ count: 1 });
    expect((await readStored(ctx)).messages).toEqual([user("a")]);
    expect((await readStored(ctx, 1)).messages).toEqual([]);
  });

  it("reads a long session's transcript with one read, however many runs wrote it", async () => {
    const { ctx, reads } = memoryState({ run: record(0) });
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

    // A run in progress: a follower reading from inside its batches reads those alone.
    const stored = await readStored(ctx);
    const writer = createTranscriptWriter(ctx, stored);
    const recorder = createRunRecorder(ctx, (await ctx.get<RunRecord>("run"))!);
    const more = [...stored.messages, user("x"), user("y")];
    writer.write(more.slice(0, 201));
    writer.write(more);
    writer.flush();
    recorder.write(writer.layout);
    reads.length = 0;
    expect((await readStored(ctx, 201)).messages).toEqual(more.slice(201));
    expect(reads.filter((key) => /^[mt]\//.test(key))).toEqual(["t/1"]);
    await expectEveryRead(ctx, more);

    // A follower's poll with nothing new: no keys listed, no batch read.
    reads.length = 0;
    expect((await readStored(ctx, 202)).messages).toEqual([]);
    expect(reads).toEqual(["run", "generation"]);
  });

  it("a run's state reads and writes do not grow with the runs before it", async () => {
    const { ctx, reads, writes } = memoryState();
    const costs: number[] = [];
    for (let run = 1; run <= 10; run++) {
      reads.length = 0;
      writes.length = 0;
      // Three turns a run, each written as the service writes it, then the run's end.
      const stored = await readStored(ctx);
      const writer = createTranscriptWriter(ctx, stored);
      const recorder = createRunRecorder(ctx, (await ctx.get<RunRecord>("run")) ?? record(0));
      let messages = stored.messages;
      for (let turn = 0; turn < 3; turn++) {
        messages = [...messages, user(`q${run}.${turn}`), user(`a${run}.${turn}`)];
        if (writer.write(messages)) recorder.update(writer.layout);
        writer.flush();
        recorder.flush();
      }
      writer.fold();
      recorder.write({ ...writer.layout, state: "idle" });
      costs.push(reads.length + writes.length);
      expect((await readStored(ctx)).messages).toEqual(messages);
    }
    expect(Math.max(...costs.slice(2))).toBeLessThanOrEqual(costs[1]!);
  });

  it("rewrites a compacted transcript from the start of the batch it changed, and bumps the generation", async () => {
    const { ctx, state } = memoryState({ run: record(0) });
    const messageKeys = () => [...state.keys()].filter((k) => k.startsWith("m/")).sort();
    await runOnce(ctx, () => [user("1"), user("2"), user("3")]);
    await runOnce(ctx, (stored) => [...stored, user("4"), user("5")]);
    await runOnce(ctx, (stored) => [...stored, user("6"), user("7"), user("8")]);
    expect(messageKeys()).toEqual(["m/0"]);
    expect(state.has("t/0")).toBe(true); // the last run's slot: the next run writes over it

    // A compaction that keeps messages 1–4 and replaces the rest (from inside the snapshot).
    const compacted = await runOnce(ctx, (s) => [...s.slice(0, 4), user("summary"), s[7]!]);
    expect(state.get("generation")).toBe(1);
    await expectEveryRead(ctx, compacted);
    expect(compacted.map((m) => m.content)).toEqual(
      ["1", "2", "3", "4", "summary", "8"].map((text) => [{ type: "text", text }]),
    );

    // Inside a run's own batches: the batch it changed is rewritten from its start, the rest dropped.
    const stored = await readStored(ctx);
    const writer = createTranscriptWriter(ctx, stored);
    const recorder = createRunRecorder(ctx, (await ctx.get<RunRecord>("run"))!);
    const a = [...stored.messages, user("9"), user("10")];
    writer.write(a);
    const b = [...a, user("11"), user("12")];
    writer.write(b);
    const c = [...b.slice(0, 9), user("summary 2")];
    writer.write(c);
    writer.flush();
    recorder.write(writer.layout);
    expect(state.get("generation")).toBe(2);
    expect((state.get("run") as RunRecord).tail).toEqual([6, 8]);
    await expectEveryRead(ctx, c);
    writer.fold();
    recorder.write(writer.layout);
    await expectEveryRead(ctx, c);

    // Shorter than the snapshot: the snapshot is rewritten.
    const shorter = await runOnce(ctx, (s) => s.slice(0, 2));
    expect(state.get("generation")).toBe(3);
    expect(state.get("m/0")).toEqual(shorter);
    await expectEveryRead(ctx, shorter);
  });

  it("reads a session stored in format 1 and moves its count into the run record on the next write", async () => {
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

    const more = await runOnce(ctx, (stored) => [...stored, user("d"), user("e")]);
    // The first write moves the transcript into the current layout: one snapshot, the old keys gone.
    expect(writes).toEqual(["set m/0", "clear m/1", "clear m/2", "clear count", "set run"]);
    expect(state.has("count")).toBe(false);
    expect((state.get("run") as RunRecord).count).toBe(5);
    await expectEveryRead(ctx, more);
    expect(await readStatus(ctx)).toMatchObject({ messageCount: 5 });

    const compacted = await runOnce(ctx, (s) => [s[0]!, user("summary"), s[4]!]);
    expect([...state.keys()].filter((k) => k.startsWith("m/")).sort()).toEqual(["m/0"]);
    await expectEveryRead(ctx, compacted);
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
