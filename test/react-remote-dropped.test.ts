// @vitest-environment happy-dom
// A remote thread's store whose run response is cut mid-answer (a proxy's idle timeout, a network
// blip): the run goes on on the host, so the page must follow it to its end from where it was, with
// no text lost or doubled, and `prompt` must resolve with the run's outcome.
import { afterEach, expect, it } from "vitest";
import { scripted } from "../browser.js";
import { agentMachineProtocol, createSessionHost, type SessionHost } from "../http.js";
import { createRemoteAgentStore } from "../react.js";

const hosts: SessionHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

/** A body that passes `bytes` bytes of `body` through, then ends (`"eof"`) or fails (`"error"`). */
function cutAfter(body: ReadableStream<Uint8Array>, bytes: number, how: "eof" | "error") {
  const reader = body.getReader();
  let passed = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      const room = bytes - passed;
      passed += value.length;
      if (room >= value.length) return controller.enqueue(value);
      if (room > 0) controller.enqueue(value.slice(0, room));
      void reader.cancel();
      if (how === "eof") controller.close();
      else controller.error(new TypeError("network error"));
    },
  });
}

for (const how of ["eof", "error"] as const) {
  it(`a run response cut mid-answer (${how}): the page follows the run to its end, prompt resolves`, async () => {
    const text = "A long answer that streams in small pieces, long enough to be cut halfway. ".repeat(4);
    const host = createSessionHost({
      agent: { provider: scripted([{ text, chunkSize: 8, delayMs: 5 }]) },
      basePath: "/api",
      protocols: [agentMachineProtocol()],
      authorize: "none-local-only",
    });
    hosts.push(host);
    let cut = false;
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(new URL(String(input), "http://localhost"), init);
      const response = await host.handle(request);
      if (cut || request.method !== "POST" || !request.url.endsWith("/run") || !response.body)
        return response;
      cut = true;
      return new Response(cutAfter(response.body, 2500, how), response);
    };
    const store = createRemoteAgentStore({ url: "http://localhost/api", threadId: "t1", fetch });
    store.subscribe(() => undefined);
    const outcome = await Promise.race([
      store.actions.prompt("Tell me"),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 4000)),
    ]);
    expect(cut).toBe(true);
    expect(outcome).toMatchObject({ reason: "stop" });
    const view = store.getSnapshot();
    expect(view.state).toBe("idle");
    expect(view.error).toBeUndefined();
    expect(view.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(view.messages[1]!.content).toEqual([{ type: "text", text }]);
  });
}
