// The events a durable run records where they happen (issue 37): the service numbers its agent's
// committed events per run, writes them with the writes the run makes before each wait, bounds them
// per run, and serves them by run and seq; a handle passes them on unchanged, and with the live
// channel of the serving process a run's text arrives token by token. A real Restate server, the
// test agent served from this process.
import { lastValueFrom, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCallError } from "../core/agent-handle.js";
import { aiSdkProtocol, createSessionHost } from "../http.js";
import type { AgentEvent } from "../index.js";
import {
  type AgentServer,
  createAgentServices,
  createSessionClient,
  durableHandle,
  registerDeployment,
  type RestateServer,
  type SessionClient,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { durableTestAgent } from "./fixtures/durable-agent.js";
import { eventually, fastRetries, quietLogger } from "./fixtures/durable-harness.js";
import { sseData } from "./helpers.js";

let restate: RestateServer;
let server: AgentServer;
let client: SessionClient;
const published: { sessionId: string; event: AgentEvent }[] = [];

beforeAll(async () => {
  restate = await startRestateServer();
  const services = createAgentServices({
    // Sessions named "bounded-…" keep at most 6 events per run.
    agent: (sessionId) => ({
      ...durableTestAgent(),
      ...(sessionId.startsWith("bounded-") && { eventReplay: { maxEvents: 6 } }),
    }),
    retryPolicy: fastRetries,
  });
  services.events$.subscribe(({ sessionId, event }) => published.push({ sessionId, event }));
  server = await serveAgents({ services, logger: quietLogger });
  await registerDeployment({ adminUrl: restate.adminUrl, uri: server.url });
  client = createSessionClient({ url: restate.ingressUrl });
});

afterAll(async () => {
  await server?.close();
  await restate?.stop();
});

const user = (text: string) => ({ role: "user" as const, content: text, timestamp: Date.now() });
let sessions = 0;
const newSession = (prefix = "events") => `${prefix}-${Date.now()}-${sessions++}`;
const textDeltas = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type === "message_update" && e.kind === "text_delta");

describe("recorded events", () => {
  it("numbers a run's committed events from agent_start to agent_end; a streamed answer is one delta, not one per token", async () => {
    const id = newSession();
    const sent = await client.send(id, "slow stream");
    const result = await client.result(sent);
    const runId = sent.invocationId;
    const recorded = await client.events(id, { runId });
    expect(recorded).toMatchObject({ runId, ended: true, next: recorded.events.length });
    expect(recorded.events.map((e) => e.seq)).toEqual(recorded.events.map((_, i) => i));
    const events = recorded.events.map((e) => e.event);
    expect(events[0]).toEqual({ type: "agent_start" });
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: result.reason });
    // The process streamed the answer in many deltas; the run recorded its text once.
    const live = published.filter((p) => p.sessionId === id).map((p) => p.event);
    expect(textDeltas(live).length).toBeGreaterThan(10);
    const words = "word ".repeat(60);
    expect(textDeltas(events).map((e) => (e as { delta: string }).delta)).toEqual([words]);
    // Every message the run stored ended once among its events, in order.
    const ended = events.flatMap((e) => (e.type === "message_end" ? [e.message.id] : []));
    const transcript = await client.transcript(id);
    expect(ended).toEqual(transcript.map((m) => m.id));
    // From a seq: the same events from there.
    const later = await client.events(id, { runId, since: 3 });
    expect(later.events).toEqual(recorded.events.slice(3));
  });

  it("serves the current or last run only, and a run's bound: what it no longer keeps is a 410", async () => {
    const id = newSession();
    const first = await client.prompt(id, "tools");
    await client.prompt(id, "again");
    const error = await client.events(id, { runId: first.runId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentCallError);
    expect(error).toMatchObject({ status: 410, code: "events_unavailable" });

    const bounded = newSession("bounded");
    const run = await client.prompt(bounded, "tools");
    const evicted = await client.events(bounded, { runId: run.runId }).catch((e: unknown) => e);
    expect(evicted).toMatchObject({ status: 410, code: "events_unavailable" });
    expect((evicted as Error).message).toMatch(/no longer kept/);
    const { next } = await client.events(bounded, { runId: run.runId, since: 1_000 });
    expect(next).toBeGreaterThan(6);
    const kept = await client.events(bounded, { runId: run.runId, since: next - 1 });
    expect(kept.events).toEqual([{ seq: next - 1, event: expect.objectContaining({ type: "agent_end" }) }]);
  });

  it("the durable handle passes the recorded events on unchanged (no live channel)", async () => {
    const id = newSession();
    const handle = durableHandle(client, id, { pollIntervalMs: 20 });
    const { runId } = await handle.run(user("tools"));
    const followed = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    const recorded = await client.events(id, { runId });
    expect(followed).toEqual(recorded.events.map(({ seq, event }) => ({ runId, seq, event })));
  });

  it("a session written before events were recorded: its last run's events are unavailable, its messages read, and it runs again", async () => {
    const id = newSession("legacy");
    const messages = [
      { role: "user", content: "hello", timestamp: 1, id: "u-1" },
      {
        role: "assistant",
        content: [{ type: "text", text: "Hi." }],
        stopReason: "stop",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
        timestamp: 2,
        id: "a-1",
      },
    ];
    // The state today's code (before this change) writes for a finished run: no "events" in the run record.
    await writeState("AgentSession", id, {
      run: {
        state: "idle",
        runId: "inv_legacy",
        turn: 1,
        startedAt: 1,
        firstIndex: 0,
        generation: 0,
        count: 2,
      },
      "m/0": messages,
      lastRun: {
        runId: "inv_legacy",
        reason: "stop",
        usage: messages[1]!.usage,
        startedAt: 1,
        endedAt: 2,
      },
    });
    const handle = durableHandle(client, id, { pollIntervalMs: 20 });
    expect(await handle.status()).toMatchObject({ status: "idle", runId: "inv_legacy" });
    expect((await handle.messages()).map((m) => m.id)).toEqual(["u-1", "a-1"]);
    const error = await lastValueFrom(handle.eventsSince("inv_legacy", 0)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "events_unavailable" });
    const recorded = await client.events(id, { runId: "inv_legacy" }).catch((e: unknown) => e);
    expect(recorded).toMatchObject({ status: 410 });
    expect((recorded as Error).message).toMatch(/recorded no events/);
    // It resumes: a new run, with its events.
    const { runId } = await handle.run(user("again"));
    const events = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    expect(events.at(-1)?.event).toMatchObject({ type: "agent_end", reason: "stop" });
    expect((await handle.messages()).map((m) => m.id).slice(0, 2)).toEqual(["u-1", "a-1"]);
  });

  it("a session whose last run listed its event batches in the run record (before issue 44) serves them, and its next run clears them", async () => {
    const id = newSession("listed");
    const messages = [
      { role: "user", content: "hello", timestamp: 1, id: "u-1" },
      {
        role: "assistant",
        content: [{ type: "text", text: "Hi." }],
        stopReason: "stop",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
        timestamp: 2,
        id: "a-1",
      },
    ];
    const earlier: AgentEvent[] = [
      { type: "agent_start" },
      { type: "turn_start", turn: 1 },
      { type: "agent_end", messages: [], reason: "stop" } as unknown as AgentEvent,
    ];
    // What the code before issue 44 wrote for a finished run: the batches listed in the run record.
    await writeState("AgentSession", id, {
      run: {
        state: "idle",
        runId: "inv_listed",
        turn: 1,
        startedAt: 1,
        firstIndex: 0,
        generation: 0,
        count: 2,
        events: {
          next: 3,
          batches: [
            [0, 2, 128],
            [2, 1, 64],
          ],
        },
      },
      "m/0": messages,
      "e/0": earlier.slice(0, 2),
      "e/2": earlier.slice(2),
      lastRun: { runId: "inv_listed", reason: "stop", usage: messages[1]!.usage, startedAt: 1, endedAt: 2 },
    });
    expect(await client.events(id, { runId: "inv_listed" })).toEqual({
      runId: "inv_listed",
      events: earlier.map((event, seq) => ({ seq, event })),
      next: 3,
      ended: true,
    });
    expect((await client.events(id, { runId: "inv_listed", since: 2 })).events).toEqual([
      { seq: 2, event: earlier[2] },
    ]);
    // The next run clears them and records its own: every seq once, from 0, none of the old batches.
    const run = await client.prompt(id, "tools");
    const recorded = await client.events(id, { runId: run.runId });
    expect(recorded.events.map((e) => e.seq)).toEqual(recorded.events.map((_, i) => i));
    expect(recorded.next).toBe(recorded.events.length);
    expect(recorded.events[0]?.event).toEqual({ type: "agent_start" });
    expect(recorded.events.at(-1)?.event).toMatchObject({ type: "agent_end", reason: "stop" });
    const listed = await client.events(id, { runId: "inv_listed" }).catch((e: unknown) => e);
    expect(listed).toMatchObject({ status: 410 });
    expect((await client.transcript(id)).slice(0, 2).map((m) => m.id)).toEqual(["u-1", "a-1"]);
  });
});

describe("live channel", () => {
  it("a durable handle with the serving process's live channel gets the text token by token, before the message is stored, each once", async () => {
    const id = newSession();
    const handle = durableHandle(client, id, { pollIntervalMs: 50, live: [server.liveUrl!] });
    const { runId } = await handle.run(user("slow stream"));
    let storedAtFirstDelta: number | undefined;
    const events: AgentEvent[] = [];
    await new Promise<void>((resolve, reject) => {
      handle.eventsSince(runId, 0).subscribe({
        next: ({ event }) => {
          events.push(event);
          if (
            storedAtFirstDelta === undefined &&
            event.type === "message_update" &&
            event.kind === "text_delta"
          ) {
            void client.transcript(id).then((t) => (storedAtFirstDelta = t.length));
          }
        },
        error: reject,
        complete: resolve,
      });
    });
    // The run's end came live, maybe before Restate has its last write: the handle knows its messages.
    const transcript = await handle.messages();
    const answer = transcript.at(-1)!;
    expect(answer).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "word ".repeat(60) }],
    });
    // Many deltas, together the answer's text exactly (none twice, none lost).
    const deltas = textDeltas(events).map((e) => (e as { delta: string }).delta);
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join("")).toBe("word ".repeat(60));
    expect(storedAtFirstDelta).toBeLessThan(transcript.length);
    expect(events.filter((e) => e.type === "message_start" && e.message.id === answer.id)).toHaveLength(1);
  });

  it("through the session host (AI SDK UI stream): a durable thread's text arrives in several deltas before the message is stored", async () => {
    const id = newSession("host");
    const host = createSessionHost({
      durable: { url: restate.ingressUrl, pollIntervalMs: 100, live: [server.liveUrl!] },
      protocols: [aiSdkProtocol()],
      authorize: "none-local-only",
    });
    const response = await host.handle(
      new Request("http://localhost/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id,
          messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "slow stream" }] }],
        }),
      }),
    );
    expect(response.status).toBe(200);
    const deltas: string[] = [];
    const storedAtDelta: number[] = [];
    for await (const part of sseData<{ type: string; delta?: string }>(response)) {
      if (part.type !== "text-delta") continue;
      deltas.push(part.delta!);
      if (storedAtDelta.length < 3) storedAtDelta.push((await client.transcript(id)).length);
    }
    await host.close();
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.join("")).toBe("word ".repeat(60));
    // The answer is stored when its turn ends: the first deltas came while the transcript had the
    // prompt, the tool call and its result only.
    await eventually(async () => (await client.status(id)).state === "idle", "the run to be stored");
    const stored = await client.transcript(id);
    expect(stored.at(-1)).toMatchObject({ role: "assistant", content: [{ type: "text" }] });
    expect(storedAtDelta[0]).toBeLessThan(stored.length);
    expect(Math.max(...storedAtDelta)).toBeLessThan(stored.length);
  });

  it("falls back to the committed events when the live channel cannot be reached", async () => {
    const id = newSession();
    const handle = durableHandle(client, id, { pollIntervalMs: 20, live: ["http://127.0.0.1:1"] });
    const { runId } = await handle.run(user("slow stream"));
    const events = (await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()))).map((e) => e.event);
    expect(
      textDeltas(events)
        .map((e) => (e as { delta: string }).delta)
        .join(""),
    ).toBe("word ".repeat(60));
    expect(events.at(-1)).toMatchObject({ type: "agent_end", reason: "stop" });
  });
});

/** Sets a virtual object's whole state through Restate's admin API (values as JSON). */
async function writeState(service: string, key: string, state: Record<string, unknown>): Promise<void> {
  const newState = Object.fromEntries(
    Object.entries(state).map(([k, v]) => [k, [...new TextEncoder().encode(JSON.stringify(v))]]),
  );
  const response = await fetch(`${restate.adminUrl}/services/${service}/state`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ object_key: key, new_state: newState }),
  });
  expect(response.status, await response.text()).toBeLessThan(300);
  // The write is applied asynchronously: wait until the session reads it.
  for (let i = 0; i < 100; i++) {
    if (
      await client.status(key).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
