import type { ObjectContext, RestatePromise } from "@restatedev/restate-sdk";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../index.js";
import { createInboxBell, type DrainAnswer, type DrainRequest, type Ring } from "../durable/inbox-bell.js";
import type { InboxKind } from "../core/effect-journal.js";
import type { RestatePump } from "../durable/restate-pump.js";
import { takeWakeInput } from "../durable/wake-session.js";

// The run's side of the inbox doorbell, against an inbox simulated in memory (no server): which
// checks pay the inbox's round trip, and that a rung doorbell is acknowledged and never skipped.

function fakeRun() {
  const queues: Record<InboxKind, AgentMessage[]> = { steering: [], followUp: [] };
  let registered: string | undefined;
  const bells = new Map<string, (ring: Ring) => void>();
  const acks: string[] = [];
  const calls: (DrainRequest | { closeBell: string; ran?: boolean })[] = [];
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
    runId: "inv_run",
    drain: (request) => {
      calls.push(request);
      // As SessionInbox.drain: a woken run's input first, then the check's own take.
      const woken = request.wake ? takeWakeInput(queues, request.wake) : undefined;
      const taken = request.peek ? [] : queues[request.kind].splice(0, 1);
      if (request.bell) registered = request.bell.id;
      const answer: DrainAnswer = {
        messages: taken,
        waiting: { steering: queues.steering.length, followUp: queues.followUp.length },
        ...(woken && { input: woken.taken }),
      };
      return Promise.resolve(answer) as never;
    },
    closeBell: (id, ran) => {
      calls.push({ closeBell: id, ...(ran && { ran }) });
      if (registered === id) registered = undefined;
    },
  });
  /** What SessionInbox.steer / followUp do: queue, then ring the doorbell found (and forget it). */
  const send = async (kind: InboxKind, text: string) => {
    queues[kind].push({ role: "user", content: text, timestamp: 0 });
    const found = registered;
    registered = undefined;
    if (found) bells.get(found)!({ ack: `ack-for-${text}` });
    await new Promise((resolve) => setImmediate(resolve));
  };
  const drains = () => calls.filter((c) => "kind" in c && !c.peek);
  return { bell, send, calls, drains, acks, queues, registered: () => registered };
}

const texts = (messages: AgentMessage[]) => messages.map((m) => m.content);

describe("the inbox doorbell of a durable run", () => {
  it("hands the doorbell over with its first drain, then asks only when a message rang", async () => {
    const run = fakeRun();
    expect(await run.bell.open()).toEqual([]);
    for (let turn = 0; turn < 3; turn++) expect(await run.bell.drain("steering")).toEqual([]);
    expect(await run.bell.drain("followUp")).toEqual([]);
    // One drain as the run opens, none at the checks: nothing was queued and nothing rang.
    expect(run.calls).toEqual([{ kind: "steering", bell: { id: "bell-0", runId: "inv_run" } }]);

    await run.send("steering", "change of plan");
    expect(run.acks).toEqual(["ack-for-change of plan"]);
    expect(texts(await run.bell.drain("steering"))).toEqual(["change of plan"]);
    // The ring used the doorbell up: the drain hands over a new one.
    expect(run.calls.at(-1)).toEqual({ kind: "steering", bell: { id: "bell-1", runId: "inv_run" } });
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(await run.bell.drain("followUp")).toEqual([]);
    expect(run.drains()).toHaveLength(2);
  });

  it("a follow-up rings too, and is taken at the follow-up check", async () => {
    const run = fakeRun();
    run.bell.open();
    await run.bell.drain("steering");
    await run.send("followUp", "one more thing");
    // The steering check after a ring asks (a ring does not say its kind), and counts the follow-up.
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(texts(await run.bell.drain("followUp"))).toEqual(["one more thing"]);
    expect(await run.bell.drain("followUp")).toEqual([]);
    expect(run.drains().map((c) => ("kind" in c ? c.kind : ""))).toEqual([
      "steering",
      "steering",
      "followUp",
    ]);
  });

  it("keeps asking while an answer says messages wait", async () => {
    const run = fakeRun();
    run.bell.open();
    await run.bell.drain("steering");
    await run.send("steering", "one");
    await run.send("steering", "two"); // found no doorbell: the first rang it
    expect(run.acks).toEqual(["ack-for-one"]);
    expect(texts(await run.bell.drain("steering"))).toEqual(["one"]);
    expect(texts(await run.bell.drain("steering"))).toEqual(["two"]);
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(run.drains()).toHaveLength(3);
  });

  it("steering queued before the run is taken as it opens (for the prompt's turn), a follow-up at its check", async () => {
    const run = fakeRun();
    await run.send("steering", "early");
    await run.send("steering", "early too");
    await run.send("followUp", "later");
    expect(texts(await run.bell.open())).toEqual(["early"]);
    // The answer counted what still waits: the first checks ask for it.
    expect(texts(await run.bell.drain("steering"))).toEqual(["early too"]);
    expect(await run.bell.drain("steering")).toEqual([]);
    expect(texts(await run.bell.drain("followUp"))).toEqual(["later"]);
  });

  it("a run that ends tells the inbox to forget its doorbell, one way", async () => {
    const run = fakeRun();
    run.bell.open();
    await run.bell.drain("steering");
    run.bell.close();
    expect(run.calls.at(-1)).toEqual({ closeBell: "bell-0" });
    expect(run.registered()).toBeUndefined();
  });

  it("a woken run takes what it starts with and its first turn's steering in its opening round trip", async () => {
    const one = { steeringMode: "one-at-a-time", followUpMode: "one-at-a-time" } as const;
    const run = fakeRun();
    run.queues.steering.push(
      ...["event 1", "event 2"].map((content) => ({ role: "user" as const, content, timestamp: 0 })),
    );
    run.queues.followUp.push({ role: "user", content: "slot", timestamp: 0 });
    const opened = await run.bell.openWake(one);
    // The first event is the run's input, the second joins its first turn; the slot waits its check.
    expect(texts(opened.input)).toEqual(["event 1"]);
    expect(texts(opened.early)).toEqual(["event 2"]);
    expect(run.drains()).toHaveLength(1);
    expect(run.registered()).toBe("bell-0");
    expect(texts(await run.bell.drain("followUp"))).toEqual(["slot"]);

    // Nothing but follow-ups: the run starts with one (its mode's), and no steering was waiting.
    const slot = fakeRun();
    slot.queues.followUp.push(
      ...["a", "b"].map((content) => ({ role: "user" as const, content, timestamp: 0 })),
    );
    const woken = await slot.bell.openWake(one);
    expect(texts(woken.input)).toEqual(["a"]);
    expect(woken.early).toEqual([]);
    expect(slot.queues.followUp.map((m) => m.content)).toEqual(["b"]);

    // A run took the message first: the wake's input is empty (the wake is then a no-op).
    const late = fakeRun();
    expect(await late.bell.openWake({ ...one, followUpMode: "all" })).toEqual({ input: [], early: [] });
  });

  it("a run that ended says so as it forgets its doorbell (the inbox then knows the session exists)", async () => {
    const run = fakeRun();
    await run.bell.open();
    run.bell.close(true);
    expect(run.calls.at(-1)).toEqual({ closeBell: "bell-0", ran: true });
  });
});
