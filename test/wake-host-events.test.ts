// The session host's webhook route: an event for a thread, behind authorize, deduplicated by the
// sender's id, waking the thread. Driven through the web-standard handler.
import { afterEach, describe, expect, it } from "vitest";
import { createSessionHost, type SessionHost, type SessionHostOptions } from "../http.js";
import { scripted } from "../index.js";

const hosts: SessionHost[] = [];
afterEach(async () => {
  while (hosts.length) await hosts.pop()!.close();
});

function makeHost(more: Partial<SessionHostOptions> = {}) {
  const provider = scripted(() => ({ text: "ok" }));
  const host = createSessionHost({
    agent: { provider },
    basePath: "/api",
    authorize: "none-local-only",
    ...more,
  });
  hosts.push(host);
  return { host, provider };
}

const post = (host: SessionHost, path: string, body: unknown, headers: Record<string, string> = {}) =>
  host.handle(
    new Request(`http://localhost/api${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    }),
  );
const chat = (id: string, text: string) => ({
  id,
  trigger: "submit-message",
  messages: [{ id: "u1", role: "user", parts: [{ type: "text", text }] }],
});

async function status(host: SessionHost, id: string) {
  for (;;) {
    const body = (await (await host.handle(new Request(`http://localhost/api/threads/${id}`))).json()) as {
      state: string;
      messages: { role: string; content: unknown; source?: string; id?: string }[];
    };
    if (body.state === "idle") return body;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("POST /threads/:id/events", () => {
  it("wakes an idle thread with the event (source event), and a retry with the same id does nothing", async () => {
    const { host, provider } = makeHost();
    await (await post(host, "/chat", chat("t1", "hello"))).text();
    const event = { id: "gh_81", text: "CI failed on main" };
    const first = await post(host, "/threads/t1/events", event);
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ started: true, id: "event_gh_81" });
    const after = await status(host, "t1");
    expect(after.messages.at(-2)).toMatchObject({
      role: "user",
      source: "event",
      content: "CI failed on main",
    });
    expect(provider.requests).toHaveLength(2);

    const again = await post(host, "/threads/t1/events", event);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ duplicate: true, id: "event_gh_81" });
    expect((await status(host, "t1")).messages).toHaveLength(4);
    expect(provider.requests).toHaveLength(2);
  });

  it("an event for an unknown thread is 404 and creates none; bad bodies are 400", async () => {
    const { host, provider } = makeHost();
    const unknown = await post(host, "/threads/nobody/events", { id: "1", text: "hi" });
    expect(unknown.status).toBe(404);
    expect((await host.handle(new Request("http://localhost/api/threads/nobody"))).status).toBe(404);
    await (await post(host, "/chat", chat("t1", "hello"))).text();
    expect((await post(host, "/threads/t1/events", { text: "no id" })).status).toBe(400);
    expect((await post(host, "/threads/t1/events", { id: "2", text: "" })).status).toBe(400);
    expect((await post(host, "/threads/t1/events", { id: "3", text: "x", queue: "now" })).status).toBe(400);
    expect(provider.requests).toHaveLength(1);
  });

  it("sits behind authorize like every route", async () => {
    const { host, provider } = makeHost({ authorize: (request) => request.headers.get("x-key") === "k" });
    await (await post(host, "/chat", chat("t1", "hello"), { "x-key": "k" })).text();
    expect((await post(host, "/threads/t1/events", { id: "1", text: "hi" })).status).toBe(403);
    expect(provider.requests).toHaveLength(1);
    expect((await post(host, "/threads/t1/events", { id: "1", text: "hi" }, { "x-key": "k" })).status).toBe(
      202,
    );
  });

  it("refuses what a hostile page or a stranger sends: another site, a form's body, a name that is not loopback", async () => {
    const { host, provider } = makeHost();
    await (await post(host, "/chat", chat("t1", "hello"))).text();
    const crossSite = await post(
      host,
      "/threads/t1/events",
      { id: "1", text: "hi" },
      { origin: "https://evil.example", "sec-fetch-site": "cross-site" },
    );
    expect(crossSite.status).toBe(403);
    expect(await crossSite.json()).toMatchObject({ error: { code: "cross_site" } });
    expect((await post(host, "/threads/t1/events", { id: "2", text: "hi" }, { origin: "null" })).status).toBe(
      403,
    );
    // A form or a no-cors fetch: text/plain goes cross-site without a preflight.
    expect(
      (await post(host, "/threads/t1/events", { id: "3", text: "hi" }, { "content-type": "text/plain" }))
        .status,
    ).toBe(415);
    // No identity check (none-local-only): a rebound DNS name is refused.
    const rebound = await host.handle(
      new Request("http://evil.example/api/threads/t1/events", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "4", text: "hi" }),
      }),
    );
    expect(rebound.status).toBe(403);
    expect((await status(host, "t1")).messages).toHaveLength(2);
    expect(provider.requests).toHaveLength(1);
  });
});
