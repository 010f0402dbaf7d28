import type { ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import { createInboxBell, type DrainAnswer, type DrainRequest, type Ring } from "../durable/inbox-bell.js";
import type { RestatePump } from "../durable/restate-pump.js";

// The run's side of the inbox doorbell, against an inbox simulated in memory (no server): which
// checks pay the inbox's round trip, and that a rung doorbell is acknowledged and never skipped.

function fakeRun() {
  const queue: AgentMessage[] = [];
  let registered: string | undefined;
  const bells = new Map<string, (ring: Ring) => void>();
  const acks: string[] = [];
  const calls: DrainRequest[] = [];
  let next = 0;
  const ctx = {
    awakeable: () => {
      const id = `bell-${next++}`;
      const promise = new Promise<Ring>((resolve) => bells.set(id, resolve));
      return { id, promise };
    },
    resolveAwakeable: (id: string) => acks.push(id),
  } as unknown as ObjectContext;
  const pump: RestatePump = {
    track: <T>(promise: RestatePromise<T>) => promise as unknown as Promise<T>,
    failed: new Promise<never>(() => {}),
  };
  const bell = createInboxBell(ctx, pump, {
    drain: (request) => {
      calls.push(request);
      const taken = request.peek ? [] : queue.splice(0, 1);
      if (request.bell && queue.length === 0) registered = request.bell;
      if (request.close && registered === request.close) registered = undefined;
      return Promise.resolve({ messages: taken, waiting: queue.length } satisfies DrainAnswer) as never;
    },
    closeBell: (id) => {
      calls.push({ kind: "steering", close: id });
      if (registered === id) registered = undefined;
      return Promise.resolve() as never;
    },
  });
  /** What SessionInbox.steer does: queue, then ring the doorbell it finds (and forget it). */
  const steer = async (text: string) => {
    queue.push({ role: "user", content: text, timestamp: 0 });
    const found = registered;
    registered = undefined;
    if (found) bells.get(found)!({ ack: `ack-for-${text}` });
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { bell, steer, calls, acks, registered: () => registered };
}

const texts = (messages: AgentMessage[]) => messages.map((m) => m.content);

describe("the inbox doorbell of a durable run", () => {
  it("asks the inbox at the first check after a peek, then only when a steer rang", async () => {
    const run = fakeRun();
    run.bell.open();
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(await run.bell.drain("steering")).toEqual([]);
    // One peek, no drain: nothing was queued and nothing rang.
    expect(run.calls).toEqual([{ kind: "steering", peek: true, bell: "bell-0" }]);
    expect(run.registered()).toBe("bell-0");

    await run.steer("change of plan");
    expect(run.acks).toEqual(["ack-for-change of plan"]);
    expect(texts(await run.bell.drain("steering"))).toEqual(["change of plan"]);
    expect(run.calls.at(-1)).toEqual({ kind: "steering", bell: "bell-1" });
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(run.calls).toHaveLength(2);
  });

  it("keeps asking while a drain leaves messages, and takes the doorbell back at the follow-up check", async () => {
    const run = fakeRun();
    run.bell.open();
    await run.bell.drain("steering");
    await run.steer("one");
    await run.steer("two"); // found no doorbell: the first steer rang it
    expect(texts(await run.bell.drain("steering"))).toEqual(["one"]);
    expect(texts(await run.bell.drain("steering"))).toEqual(["two"]);
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(run.calls.filter((c) => !c.peek)).toHaveLength(2);

    await run.bell.drain("followUp");
    expect(run.calls.at(-1)).toEqual({ kind: "followUp", close: "bell-1" });
    expect(run.registered()).toBeUndefined();
    await run.bell.close(); // nothing left to take back: no call
    expect(run.calls.at(-1)?.kind).toBe("followUp");
    // After the follow-up check the next steering check asks again (the run took a follow-up).
    await run.bell.drain("steering");
    expect(run.calls.at(-1)).toEqual({ kind: "steering", bell: "bell-1" });
  });

  it("a steer queued before the run started is taken at the first check", async () => {
    const run = fakeRun();
    await run.steer("early");
    run.bell.open();
    expect(texts(await run.bell.drain("steering"))).toEqual(["early"]);
  });

  it("a run that ends without a follow-up check takes its doorbell back", async () => {
    const run = fakeRun();
    run.bell.open();
    await run.bell.drain("steering");
    await run.bell.close();
    expect(run.calls.at(-1)).toEqual({ kind: "steering", close: "bell-0" });
    expect(run.registered()).toBeUndefined();
  });
});
