import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createSessionClient, type SessionUpdate } from "../restate.js";

// client.follow against a stand-in for Restate's ingress on 127.0.0.1 that fails over (answers 503
// for a while), as a cluster's surviving node can while the partition finds a new leader.

let server: Server | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

const status = (state: "running" | "idle", messageCount: number) => ({
  sessionId: "s",
  state,
  runId: "inv_1",
  turn: 1,
  messageCount,
  generation: 0,
  pendingApprovals: [],
  ...(state === "idle" && {
    lastRun: { runId: "inv_1", reason: "stop", usage: {}, startedAt: 0, endedAt: 1 },
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
      { status: 200, body: status("running", 1) },
      { status: 200, body: { generation: 0, count: 1, from: 0, messages: [message("one")] } },
      { status: 503 },
      { status: 503 },
      { status: 200, body: status("idle", 2) },
      { status: 503 },
      { status: 200, body: { generation: 0, count: 2, from: 1, messages: [message("two")] } },
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
    expect(paths.filter((p) => p.endsWith("/messages"))).toHaveLength(3);
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
  });
});
