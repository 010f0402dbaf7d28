// Issue 23 item 6: the events of a run are numbered and kept (bounded), so a consumer that lost
// its connection asks for "run R from seq N, then live".
import { firstValueFrom, toArray } from "rxjs";
import { describe, expect, it } from "vitest";
import {
  type AgentEvent,
  createAgent,
  EventsUnavailableError,
  scripted,
  type SequencedEvent,
} from "../index.js";
import { approxEventBytes, RunEventLog } from "../agent/event-log.js";
import { record, sleepTool } from "./helpers.js";

/** An agent whose run waits in a 60 ms tool call between two answers. */
function slowAgent(options: { eventReplay?: { maxEvents?: number; maxBytes?: number } | false } = {}) {
  return createAgent({
    provider: scripted([
      { text: "let me wait", toolCalls: [{ id: "w", name: "wait", arguments: { ms: 60, label: "w" } }] },
      { text: "waited" },
    ]),
    tools: [sleepTool()],
    ...options,
  });
}

/** Resolves at the first event `match` accepts. */
function eventMatching(
  events$: { subscribe: (f: (e: AgentEvent) => void) => { unsubscribe(): void } },
  match: (e: AgentEvent) => boolean,
) {
  return new Promise<void>((resolve) => {
    const sub = events$.subscribe((e) => {
      if (match(e)) {
        queueMicrotask(() => sub.unsubscribe());
        resolve();
      }
    });
  });
}

describe("replayable events", () => {
  it("a consumer that joins mid-run gets the run's events from seq 0, then the live ones, to agent_end", async () => {
    const agent = slowAgent();
    const all = record(agent);
    const done = agent.prompt("go");
    await eventMatching(agent.events$, (e) => e.type === "tool_execution_start");
    const runId = agent.runId!;
    expect(runId).toEqual(expect.any(String));
    const joined = firstValueFrom(agent.eventsSince(runId, 0).pipe(toArray()));
    await done;
    const got = await joined;

    // Exactly the events of the run, the same objects, in order, numbered 0, 1, 2, ...
    expect(got.map((e) => e.event)).toEqual(all);
    expect(got.map((e) => e.seq)).toEqual(all.map((_, i) => i));
    expect(got.every((e) => e.runId === runId)).toBe(true);
    expect(got[0]!.event.type).toBe("agent_start");
    expect(got.at(-1)!.event.type).toBe("agent_end");
  });

  it("resumes from the sequence after the last one seen", async () => {
    const agent = slowAgent();
    const seen: SequencedEvent[] = [];
    agent.events$.subscribe((e) => {
      if (e.type === "agent_start") {
        // Subscribed in agent_start's own delivery: the first event is agent_start, seq 0.
        const sub = agent.eventsSince(agent.runId!, 0).subscribe((s) => {
          seen.push(s);
          // The "connection" drops after the assistant's first message ends.
          if (s.event.type === "message_end" && s.event.message.role === "assistant") sub.unsubscribe();
        });
      }
    });
    const done = agent.prompt("go");
    await eventMatching(agent.events$, (e) => e.type === "tool_execution_start");
    const last = seen.at(-1)!;
    const resumed = firstValueFrom(agent.eventsSince(last.runId, last.seq + 1).pipe(toArray()));
    await done;
    const rest = await resumed;
    const whole = [...seen, ...rest];
    expect(whole.map((s) => s.seq)).toEqual(whole.map((_, i) => i));
    expect(rest[0]!.seq).toBe(last.seq + 1);
    expect(whole.at(-1)!.event.type).toBe("agent_end");
  });

  it("past the buffer's bound, the consumer is told to resynchronise from the messages", async () => {
    const agent = slowAgent({ eventReplay: { maxEvents: 4 } });
    const done = agent.prompt("go");
    await eventMatching(agent.events$, (e) => e.type === "tool_execution_start");
    const runId = agent.runId!;
    let error: unknown;
    try {
      agent.eventsSince(runId, 0);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(EventsUnavailableError);
    const unavailable = error as EventsUnavailableError;
    expect(unavailable.message).toMatch(/no longer kept.*resynchronise from the messages/);
    expect(unavailable.oldestSeq).toBeGreaterThan(0);
    expect(unavailable.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    // From the oldest kept on, it works.
    const tail = firstValueFrom(agent.eventsSince(runId, unavailable.oldestSeq!).pipe(toArray()));
    await done;
    const events = await tail;
    expect(events[0]!.seq).toBe(unavailable.oldestSeq);
    expect(events.at(-1)!.event.type).toBe("agent_end");
  });

  it("the byte budget bounds a run of long deltas", async () => {
    const long = "x".repeat(20_000);
    const agent = createAgent({
      provider: scripted([{ text: long, chunkSize: 1_000 }, { text: "two" }]),
      eventReplay: { maxBytes: 10_000 },
    });
    const all = record(agent);
    let runId = "";
    agent.events$.subscribe((e) => {
      if (e.type === "agent_start") runId = agent.runId!;
    });
    await agent.prompt("go");
    // Each 1,000-character delta costs about 2 KB: only the last few events are kept.
    expect(() => agent.eventsSince(runId, 0)).toThrow(EventsUnavailableError);
    expect(all.length).toBeGreaterThan(5);
  });

  it("bad requests are refused clearly and change nothing", async () => {
    const agent = slowAgent();
    const done = agent.prompt("go");
    await eventMatching(agent.events$, (e) => e.type === "tool_execution_start");
    const runId = agent.runId!;
    expect(() => agent.eventsSince("no-such-run", 0)).toThrow(EventsUnavailableError);
    expect(() => agent.eventsSince("no-such-run", 0)).toThrow(/not this agent's current or last run/);
    expect(() => agent.eventsSince(runId, -1)).toThrow(RangeError);
    expect(() => agent.eventsSince(runId, 1.5)).toThrow(RangeError);
    expect(() => agent.eventsSince(runId, 10_000)).toThrow(/not reached yet/);
    await done;
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });

  it("an idle agent keeps its last run's id; the run's events only when a consumer followed them", async () => {
    for (const hibernate of ["manual", "whenIdle"] as const) {
      const agent = createAgent({ provider: scripted([{ text: "one" }, { text: "two" }]), hibernate });
      await agent.prompt("one");
      const first = agent.runId!;
      await new Promise((resolve) => setImmediate(resolve)); // it rests (or hibernates) now
      expect(agent.runId).toBe(first);
      // Nobody asked for them: they went with the actor (an idle agent costs its transcript alone).
      expect(() => agent.eventsSince(first, 0)).toThrow(/no longer kept .*went idle/);
      const seen: number[] = [];
      const done = agent.prompt("two");
      const second = agent.runId!;
      agent.eventsSince(second, 0).subscribe(({ seq }) => seen.push(seq));
      await done;
      await new Promise((resolve) => setImmediate(resolve));
      expect(agent.hibernated).toBe(hibernate === "whenIdle");
      const again: number[] = [];
      agent.eventsSince(second, 0).subscribe(({ seq }) => again.push(seq));
      expect(again).toEqual(seen);
    }
  });

  it("each run has its own id; with eventReplay: false nothing is kept", async () => {
    const agent = slowAgent();
    await agent.prompt("one");
    const first = agent.runId;
    await agent.prompt("two");
    expect(agent.runId).not.toBe(first);

    const none = slowAgent({ eventReplay: false });
    await none.prompt("go");
    expect(none.runId).toBeUndefined();
    expect(() => createAgent({ provider: scripted([]), eventReplay: { maxEvents: 0 } })).toThrow(
      /eventReplay.maxEvents/,
    );
  });
});

describe("the replay buffer's bookkeeping (RunEventLog)", () => {
  it("keeps exactly the newest events within both bounds, through growth, wrapping and byte evictions", () => {
    // Events of varied sizes (a delta's text counts), against a plain list that drops from the front.
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (const limits of [
      { maxEvents: 5, maxBytes: 1_000_000 },
      { maxEvents: 50, maxBytes: 2_000 },
      { maxEvents: 8, maxBytes: 600 },
    ]) {
      const log = new RunEventLog("run", limits);
      const kept: { seq: number; event: AgentEvent; bytes: number }[] = [];
      for (let seq = 0; seq < 400; seq++) {
        const event = {
          type: "message_update",
          kind: "text_delta",
          delta: "x".repeat(Math.floor(random() * 120)),
        } as unknown as AgentEvent;
        expect(log.record(event)).toBe(seq);
        kept.push({ seq, event, bytes: approxEventBytes(event) });
        const total = () => kept.reduce((sum, k) => sum + k.bytes, 0);
        while (kept.length > 1 && (kept.length > limits.maxEvents || total() > limits.maxBytes)) kept.shift();
        expect(log.oldestSeq).toBe(kept[0]!.seq);
        expect(log.bytes).toBe(total());
        const from = kept[0]!.seq + Math.floor(random() * kept.length);
        expect(log.since(from)).toEqual(kept.filter((k) => k.seq >= from).map((k) => k.event));
        if (kept[0]!.seq > 0) expect(log.since(kept[0]!.seq - 1)).toBeUndefined();
      }
    }
  });
});
