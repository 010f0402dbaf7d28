// The session host's durable option without a Restate server: how it is configured, and what a
// request gets when Restate's ingress cannot be reached (the slow suite runs it against a real one).
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { createSessionHost } from "../http.js";
import { scripted } from "../index.js";

describe("createSessionHost({ durable })", () => {
  it("takes either agent or durable, and no store with durable", () => {
    expect(() => createSessionHost({ authorize: "none-local-only" })).toThrow(/either agent .* or durable/);
    expect(() =>
      createSessionHost({
        agent: { provider: scripted([]) },
        durable: { url: "http://127.0.0.1:1" },
        authorize: "none-local-only",
      }),
    ).toThrow(/either agent .* or durable/);
    expect(() =>
      createSessionHost({
        durable: { url: "http://127.0.0.1:1" },
        store: { load: () => undefined, save: () => undefined },
        authorize: "none-local-only",
      }),
    ).toThrow(/keeps its threads in Restate/);
  });

  it("answers 503 with the reason when Restate's ingress cannot be reached, and the host keeps serving", async () => {
    const port = await closedPort();
    const host = createSessionHost({
      durable: { url: `http://127.0.0.1:${port}` },
      basePath: "/api",
      authorize: "none-local-only",
    });
    for (const request of [
      new Request("http://localhost/api/threads/t1"),
      new Request("http://localhost/api/chat", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          id: "t1",
          messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }],
        }),
      }),
    ]) {
      const response = await host.handle(request);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("durable_unavailable");
      expect(body.error.message).toContain(`127.0.0.1:${port}: ECONNREFUSED`);
    }
    // Routes that need no thread still answer.
    expect((await host.handle(new Request("http://localhost/api/nope"))).status).toBe(404);
    await host.close();
  });

  it("the auth hook runs before Restate is asked anything", async () => {
    let asked = 0;
    const host = createSessionHost({
      durable: {
        url: "http://127.0.0.1:1",
        headers: { "x-probe": "1" },
      },
      authorize: () => {
        asked++;
        return false;
      },
    });
    const response = await host.handle(new Request("http://localhost/threads/t1"));
    expect(response.status).toBe(403);
    expect(asked).toBe(1);
    await host.close();
  });
});

/** A port on 127.0.0.1 nothing listens on (one the system just gave out and took back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
