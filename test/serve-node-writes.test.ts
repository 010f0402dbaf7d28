// serveNode's writes to the socket: a JSON answer goes out in one write (headers and body
// together), where each write is a system call of its own; a stream still sends its headers before
// its first chunk. Each MCP or A2A call over HTTP is such a JSON answer.
import { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { serveNode, type NodeServer } from "../http.js";

const servers: NodeServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

/** Counts the socket writes (write and writev) the server makes while `run` runs. */
async function countingWrites<T>(run: () => Promise<T>): Promise<{ value: T; writes: number }> {
  const proto = Socket.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const write = proto._writeGeneric!;
  let writes = 0;
  proto._writeGeneric = function (this: Socket, ...args: unknown[]) {
    // Only the server's side: the client's requests come from undici's own sockets too.
    if ((this as { server?: unknown }).server) writes++;
    return write.apply(this, args);
  };
  try {
    const value = await run();
    return { value, writes };
  } finally {
    proto._writeGeneric = write;
  }
}

describe("serveNode's writes", () => {
  it("sends a JSON answer in one write: headers and body together", async () => {
    const server = await serveNode(async () =>
      Response.json({ jsonrpc: "2.0", id: 1, result: { ok: true } }),
    );
    servers.push(server);
    await fetch(server.url).then((r) => r.text()); // the connection is open and warm
    const { value, writes } = await countingWrites(() => fetch(server.url).then((r) => r.json()));
    expect(value).toEqual({ jsonrpc: "2.0", id: 1, result: { ok: true } });
    expect(writes).toBe(1);
  });

  it("still sends a stream's headers before its first chunk", async () => {
    let send: ((text: string) => void) | undefined;
    let end: (() => void) | undefined;
    const server = await serveNode(
      async () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              send = (text) => controller.enqueue(new TextEncoder().encode(text));
              end = () => controller.close();
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        ),
    );
    servers.push(server);
    // fetch resolves on the headers: before any event was sent.
    const response = await fetch(server.url);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    send!("data: one\n\n");
    end!();
    expect(await response.text()).toBe("data: one\n\n");
  });
});
