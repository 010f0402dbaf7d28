// A durable session as an AgentHandle (core/agent-handle.ts), on a real Restate server with the test
// agent served from this process: a run and its events, approvals with the contract's refusals, a
// second run refused while one is active, and what a run that is not kept answers.
import { firstValueFrom, lastValueFrom, tap, toArray } from "rxjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentCallError } from "../core/agent-handle.js";
import {
  type AgentServer,
  createAgentServices,
  createSessionClient,
  durableHandle,
  registerDeployment,
  type RestateServer,
  SessionCallError,
  type SessionClient,
  serveAgents,
  startRestateServer,
} from "../restate.js";
import { durableTestAgent } from "./fixtures/durable-agent.js";
import { eventually, fastRetries, quietLogger } from "./fixtures/durable-harness.js";

let restate: RestateServer;
let server: AgentServer;
let client: SessionClient;

beforeAll(async () => {
  restate = await startRestateServer();
  const services = createAgentServices({ agent: durableTestAgent(), retryPolicy: fastRetries });
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
const newSession = () => `handle-${Date.now()}-${sessions++}`;

/** The client, counting its reads of sessions (`updates`, the one read a durable handle makes). */
function countingReads(inner: SessionClient): { counted: SessionClient; reads: { count: number } } {
  const reads = { count: 0 };
  const counted: SessionClient = {
    ...inner,
    updates: (...args) => {
      reads.count += 1;
      return inner.updates(...args);
    },
  };
  return { counted, reads };
}

async function refusal(call: Promise<unknown>): Promise<AgentCallError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AgentCallError);
  return error as AgentCallError;
}

describe("durableHandle", () => {
  it("runs a session and follows its events from agent_start to agent_end; the transcript agrees", async () => {
    const handle = durableHandle(client, newSession(), { pollIntervalMs: 20 });
    const { runId } = await handle.run(user("tools"));
    const events = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events[0]!.event.type).toBe("agent_start");
    const end = events.at(-1)!.event;
    expect(end.type).toBe("agent_end");
    const messages = await handle.messages();
    expect(end.type === "agent_end" && end.messages.map((m) => m.id)).toEqual(messages.map((m) => m.id));
    expect(messages.at(-1)).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Both noted." }],
    });
    expect(await handle.status()).toMatchObject({ status: "idle", runId, pendingApprovals: [] });
  });

  it("waits for an approval; refuses an answer to a call that does not wait, and a second run", async () => {
    const handle = durableHandle(client, newSession(), { pollIntervalMs: 20 });
    const { runId } = await handle.run(user("approval"));
    const status = await eventually(async () => {
      const s = await handle.status();
      return s.pendingApprovals.length > 0 ? s : undefined;
    }, "the approval to wait");
    expect(status).toMatchObject({
      status: "waiting",
      runId,
      pendingApprovals: [{ toolCallId: "g1", toolName: "guarded" }],
    });
    expect((await refusal(handle.check([{ toolCallId: "nope", approve: {} }]))).code).toBe("not_found");
    expect((await refusal(handle.run(user("again")))).code).toBe("busy");
    await handle.check([{ toolCallId: "g1", approve: {} }]);
    const ended = lastValueFrom(handle.eventsSince(runId, 0));
    await handle.answer([{ toolCallId: "g1", approve: {} }]);
    expect((await ended).event).toMatchObject({ type: "agent_end", reason: "stop" });
    // Decided once: a second answer to it is refused.
    expect((await refusal(handle.answer([{ toolCallId: "g1", deny: {} }]))).code).toBe("not_found");
  });

  it("a run that is not kept: eventsSince errors with events_unavailable", async () => {
    const handle = durableHandle(client, newSession(), { pollIntervalMs: 20 });
    await handle.run(user("hello"));
    const error = await firstValueFrom(handle.eventsSince("inv_not_a_run", 0)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AgentCallError);
    expect((error as AgentCallError).code).toBe("events_unavailable");
  });

  it("reads the session once to check and start a run, and not at its end: the run's events bring the view up to date", async () => {
    const { counted, reads } = countingReads(client);
    let readsAtSend = -1;
    const handle = durableHandle(
      {
        ...counted,
        send: (...args: Parameters<SessionClient["send"]>) => {
          readsAtSend = reads.count;
          return client.send(...args);
        },
      },
      newSession(),
      { pollIntervalMs: 100, live: [server.liveUrl!] },
    );
    expect(await handle.status()).toMatchObject({ status: "idle" });
    // The host's order: it reads the thread to check the request, then starts the run.
    const { runId } = await handle.run(user("tools"));
    expect(readsAtSend).toBe(1);
    const events = await lastValueFrom(handle.eventsSince(runId, 0).pipe(toArray()));
    const end = events.at(-1)!.event;
    expect(end.type).toBe("agent_end");
    const readsAtEnd = reads.count;
    const [messages, status] = await Promise.all([handle.messages(), handle.status()]);
    expect(reads.count).toBe(readsAtEnd);
    expect(status).toMatchObject({ status: "idle", runId, pendingApprovals: [] });
    expect(end.type === "agent_end" && end.messages.map((m) => m.id)).toEqual(messages.map((m) => m.id));
    // What Restate stores (its last write a moment after agent_end) is that view.
    const stored = await eventually(async () => {
      const transcript = await client.transcript(handle.id);
      return transcript.length === messages.length ? transcript : undefined;
    }, "the transcript to be stored");
    expect(JSON.parse(JSON.stringify(stored))).toEqual(JSON.parse(JSON.stringify(messages)));
  });

  it("reads nothing of Restate while the live channel brings a run's events", async () => {
    const { counted, reads } = countingReads(client);
    const handle = durableHandle(counted, newSession(), { pollIntervalMs: 100, live: [server.liveUrl!] });
    // A quick call, then 60 text deltas 40 ms apart: polling every 100 ms would read ~24 times.
    const { runId } = await handle.run(user("slow stream"));
    let readsAtStart = -1;
    const events = await lastValueFrom(
      handle.eventsSince(runId, 0).pipe(
        tap(({ event }) => {
          if (event.type === "agent_start") readsAtStart = reads.count;
        }),
        toArray(),
      ),
    );
    expect(events.at(-1)!.event).toMatchObject({ type: "agent_end", reason: "stop" });
    expect(events.filter(({ event }) => event.type === "message_update").length).toBeGreaterThan(20);
    // A stall of the loaded machine may let a poll through; reading on each interval would be ~24.
    expect(reads.count - readsAtStart).toBeLessThan(6);
  });

  it("runs back to back with no read between them: the transcript has every run's messages", async () => {
    // No poll in a run: what the handle knows of the runs before comes from their events.
    const handle = durableHandle(client, newSession(), { pollIntervalMs: 10_000, live: [server.liveUrl!] });
    for (const text of ["one", "two", "three"]) {
      const { runId } = await handle.run(user(text));
      await lastValueFrom(handle.eventsSince(runId, 0));
    }
    const messages = await handle.messages();
    expect(messages.map((m) => (m.role === "user" ? m.content : "answer"))).toEqual([
      "one",
      "answer",
      "two",
      "answer",
      "three",
      "answer",
    ]);
    const stored = await eventually(async () => {
      const transcript = await client.transcript(handle.id);
      return transcript.length === messages.length ? transcript : undefined;
    }, "the transcript to be stored");
    expect(stored.map((m) => m.id)).toEqual(messages.map((m) => m.id));
  });

  it("a run the service refuses before it begins is refused at once with its reason; the session stays usable", async () => {
    const handle = durableHandle(client, newSession(), { pollIntervalMs: 20 });
    const started = Date.now();
    // On a session that never ran, and on one with a run behind it.
    const first = await refusal(handle.run({ role: "user", content: [], timestamp: Date.now() }));
    expect(first).toMatchObject({
      status: 400,
      message: expect.stringMatching(/Invalid prompt: content has no parts/),
    });
    const { runId } = await handle.run(user("hello"));
    await lastValueFrom(handle.eventsSince(runId, 0));
    const again = await refusal(handle.run({ role: "user", content: " ", timestamp: Date.now() }));
    expect(again).toMatchObject({
      status: 400,
      message: expect.stringMatching(/Invalid prompt: the text is empty/),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect((await handle.status()).status).toBe("idle");
    // A message id as long as the session host takes (256 characters) runs.
    const long = await handle.run({ ...user("hello"), id: "m".repeat(256) });
    await lastValueFrom(handle.eventsSince(long.runId, 0));
    const messages = await handle.messages();
    expect(messages.filter((m) => m.role === "user").map((m) => m.id?.length)).toEqual([
      expect.any(Number),
      256,
    ]);
  });

  it("SessionCallError is an AgentCallError with the contract's code", async () => {
    const error = await client.approve(newSession(), "x").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionCallError);
    expect(error).toBeInstanceOf(AgentCallError);
    expect(error).toMatchObject({ status: 404, code: "not_found" });
  });
});
