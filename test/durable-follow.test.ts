import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { EventsUnavailableError } from "../index.js";
import { createSessionClient, type SessionUpdate } from "../restate.js";

// client.follow against a stand-in for Restate's ingress on 127.0.0.1: one that fails over (answers
// 503 for a while), as a cluster's surviving node can while the partition finds a new leader, and
// one that answers from a session's state, to resume a run from a seq and to count polls.

let server: Server | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

const status = (state: "running" | "idle", messageCount: number, runId = "inv_1") => ({
  sessionId: "s",
  state,
  runId,
  turn: 1,
  messageCount,
  generation: 0,
  pendingApprovals: [],
  pendingToolCalls: [],
  ...(state === "idle" && {
    lastRun: { runId, reason: "stop", usage: {}, startedAt: 0, endedAt: 1 },
  }),
});
const message = (text: string) => ({ role: "user", content: text, timestamp: 1 });

/** An ingress whose answers are scripted per call, in order. */
async function ingress(
  answers: { status: number; body?: unknown }[],
): Promise<{ url: string; paths: string[] }> {
  const paths: string[] = [];
  server = createServer((request, response) => {
    paths.push(request.url ?? "");
    request.resume();
    request.on("end", () => {
      const answer = answers.shift() ?? { status: 500, body: { message: "no more answers" } };
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(JSON.stringify(answer.body ?? { message: "unavailable" }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, paths };
}

async function collect(iterable: AsyncIterable<SessionUpdate>): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  for await (const update of iterable) updates.push(update);
  return updates;
}

describe("following a session through a node that fails over", () => {
  it("retries polls that fail with a 5xx and misses no message", async () => {
    const { url, paths } = await ingress([
      { status: 200, body: { status: status("running", 1), from: 0, messages: [message("one")] } },
      { status: 503 },
      { status: 503 },
      { status: 200, body: { status: status("idle", 2), from: 1, messages: [message("two")] } },
    ]);
    const client = createSessionClient({ url });
    const updates = await collect(
      client.follow("s", { intervalMs: 5, until: (s) => s.lastRun?.runId === "inv_1" }),
    );
    expect(updates.flatMap((u) => (u.type === "message" ? [[u.index, u.message.content]] : []))).toEqual([
      [0, "one"],
      [1, "two"],
    ]);
    expect(updates.at(-1)).toMatchObject({ type: "status", status: { state: "idle" } });
    // One call per poll: status and messages come together.
    expect(paths).toEqual(Array.from({ length: 4 }, () => "/AgentSession/s/updates"));
  });

  it("gives up after retryForMs of failures, and at once on a refusal (4xx other than 404)", async () => {
    const failing = await ingress(Array.from({ length: 1000 }, () => ({ status: 503 })));
    const client = createSessionClient({ url: failing.url });
    await expect(collect(client.follow("s", { intervalMs: 5, retryForMs: 50 }))).rejects.toThrow();
    server?.close();

    const refusing = await ingress([{ status: 400, body: { message: "Invalid request: bad" } }]);
    await expect(
      collect(createSessionClient({ url: refusing.url }).follow("s", { intervalMs: 5 })),
    ).rejects.toThrow(/bad/);
    expect(refusing.paths).toHaveLength(1);
    server?.close();

    // A 404 that is not "this session never ran" (services too old to have `updates`) is no wait.
    const old = await ingress([
      { status: 404, body: { message: "Handler 'AgentSession/updates' not found" } },
    ]);
    await expect(
      collect(createSessionClient({ url: old.url }).follow("s", { intervalMs: 5 })),
    ).rejects.toThrow(/not found/);
  });
});

/** An ingress that answers each call from what `answer` returns for its path and JSON body. */
async function answering(
  answer: (path: string, body: unknown) => { status: number; body?: unknown },
): Promise<{ url: string; calls: { path: string; body: unknown }[] }> {
  const calls: { path: string; body: unknown }[] = [];
  server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk: Buffer) => (text += chunk.toString()));
    request.on("end", () => {
      const body = text ? (JSON.parse(text) as unknown) : undefined;
      calls.push({ path: request.url ?? "", body });
      const reply = answer(request.url ?? "", body);
      response.writeHead(reply.status, { "content-type": "application/json" });
      response.end(JSON.stringify(reply.body ?? { message: "unavailable" }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, calls };
}

describe("resuming a run from a seq", () => {
  const transcript = ["earlier", "question", "answer", "tool result", "final"].map(message);

  it("yields the run's messages from the seq asked for with their seq, then live ones, and ends with the run", async () => {
    let polls = 0;
    const { url, calls } = await answering((path, body) => {
      if (!path.endsWith("/updates")) return { status: 500 };
      polls++;
      const { from = 0, since } = body as { from?: number; since?: number };
      // The run started at index 1; it stores its last message after the second poll, then ends.
      const count = polls < 3 ? 4 : 5;
      const start = since !== undefined ? 1 + since : from;
      return {
        status: 200,
        body: {
          status: status(polls < 4 ? "running" : "idle", count),
          runStart: 1,
          from: start,
          messages: transcript.slice(start, count),
        },
      };
    });
    const updates = await collect(
      createSessionClient({ url }).follow("s", { runId: "inv_1", since: 2, intervalMs: 5 }),
    );
    expect(calls[0]!.body).toEqual({ runId: "inv_1", since: 2 });
    expect(calls.slice(1).map((c) => c.body)).toEqual([{ from: 4 }, { from: 4 }, { from: 5 }]);
    expect(
      updates.flatMap((u) => (u.type === "message" ? [[u.seq, u.runId, u.index, u.message.content]] : [])),
    ).toEqual([
      [2, "inv_1", 3, "tool result"],
      [3, "inv_1", 4, "final"],
    ]);
    // It ended by itself when the run did, after the final status.
    expect(updates.at(-1)).toMatchObject({ type: "status", status: { state: "idle", runId: "inv_1" } });
  });

  it("a run no longer kept throws EventsUnavailableError with the transcript; a run not started yet is waited for", async () => {
    const gone = await answering((path) => {
      if (path.endsWith("/updates"))
        return { status: 410, body: { message: 'Run "inv_0" is not the current or last run' } };
      if (path.endsWith("/status")) return { status: 200, body: status("idle", 5) };
      if (path.endsWith("/transcript")) return { status: 200, body: transcript };
      if (path.endsWith("/output")) return { status: 200, body: {} };
      return { status: 500 };
    });
    const error = await collect(
      createSessionClient({ url: gone.url }).follow("s", { runId: "inv_0", since: 3 }),
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EventsUnavailableError);
    expect(error).toMatchObject({ runId: "inv_0", seq: 3, messages: transcript });
    expect((error as Error).message).toMatch(/not the current or last run/);
    server?.close();

    // Sent, not started yet (the invocation has no output): waited for until it is the session's run.
    let started = false;
    const queued = await answering((path) => {
      if (path.endsWith("/updates")) {
        if (!started) return { status: 410, body: { message: 'Run "inv_2" is not the current or last run' } };
        return {
          status: 200,
          body: {
            status: status("idle", 2, "inv_2"),
            runStart: 1,
            from: 1,
            messages: transcript.slice(1, 2),
          },
        };
      }
      if (path.endsWith("/status")) return { status: 200, body: status("idle", 1) };
      if (path.endsWith("/output")) {
        started = true;
        return { status: 470, body: { message: "not ready" } };
      }
      return { status: 500 };
    });
    const updates = await collect(
      createSessionClient({ url: queued.url }).follow("s", { runId: "inv_2", intervalMs: 5 }),
    );
    expect(updates.flatMap((u) => (u.type === "message" ? [[u.seq, u.message.content]] : []))).toEqual([
      [0, "question"],
    ]);
  });

  it("polls less often while nothing changes (doubling the pause up to maxIntervalMs)", async () => {
    let polls = 0;
    const { url } = await answering(() => {
      polls++;
      return { status: 200, body: { status: status("running", 1), runStart: 0, from: 1, messages: [] } };
    });
    const controller = new AbortController();
    const following = collect(
      createSessionClient({ url }).follow("s", {
        intervalMs: 20,
        maxIntervalMs: 160,
        signal: controller.signal,
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    controller.abort();
    await following;
    // At a fixed 20 ms it would be ~40 polls; doubling to 160 ms makes it 20+40+80+160×4 ≈ 8.
    expect(polls).toBeLessThanOrEqual(10);
    expect(polls).toBeGreaterThanOrEqual(3);
  });
});
