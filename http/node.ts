// Serving a web-standard handler on Node's http server (and so in Express, Fastify's raw mode,
// Koa): the request becomes a `Request`, the `Response` is written back as it streams. A client
// that goes away cancels the response body, which only detaches it from the agent's run.
import type { IncomingMessage, Server, ServerResponse } from "node:http";

/** A web-standard request handler (`createSessionHost(...).handle`). */
export type FetchHandler = (request: Request) => Promise<Response>;

/**
 * A Node `(req, res)` listener around a web-standard handler: use it with `http.createServer` or
 * as Express middleware (`app.use("/api", toNodeListener(host.handle))` keeps the full path in
 * `req.originalUrl`, which is what is handed on).
 *
 * @example
 * ```ts
 * import { createServer } from "node:http";
 * createServer(toNodeListener(host.handle)).listen(3000);
 * ```
 */
export function toNodeListener(
  handler: FetchHandler,
): (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => void {
  return (req, res, next) => {
    serveOne(handler, req, res).catch((error: unknown) => {
      if (next) return next(error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: { code: "internal_error", message: "the request failed on the server" } }),
      );
    });
  };
}

async function serveOne(handler: FetchHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const response = await handler(toRequest(req, controller.signal));
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Streaming responses go out as they are written: no buffering by Nagle's algorithm.
  res.socket?.setNoDelay(true);
  res.flushHeaders();
  const reader = response.body.getReader();
  const stop = (): void => {
    reader.cancel().catch(() => undefined);
  };
  res.on("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value))
        await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
      if (res.destroyed) break;
    }
  } finally {
    res.off("close", stop);
    if (res.destroyed) stop();
    else res.end();
  }
}

function toRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const host = req.headers.host ?? "localhost";
  const path = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else headers.set(key, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${host}${path}`, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: bodyOf(req), duplex: "half" } : {}),
  } as RequestInit);
}

// No node:stream import: the entry stays loadable where only web streams exist.
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  const chunks = req[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = (await chunks.next()) as IteratorResult<Buffer>;
      if (done) controller.close();
      else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    },
    cancel() {
      req.destroy();
    },
  });
}

/** Options of {@link serveNode}. */
export interface ServeNodeOptions {
  /** Default 0: a free port (read it from the result). */
  port?: number;
  /** Default `"127.0.0.1"`. */
  hostname?: string;
}

/** A running Node server for a handler. */
export interface NodeServer {
  readonly server: Server;
  readonly port: number;
  /** `http://hostname:port` */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves a web-standard handler on Node's http server in one call.
 *
 * @example
 * ```ts
 * const { url } = await serveNode(host.handle, { port: 3000 });
 * ```
 */
export async function serveNode(handler: FetchHandler, options: ServeNodeOptions = {}): Promise<NodeServer> {
  const { createServer } = await import("node:http");
  const hostname = options.hostname ?? "127.0.0.1";
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, hostname, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : (options.port ?? 0);
  return {
    server,
    port,
    url: `http://${hostname}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
