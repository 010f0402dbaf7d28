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

/**
 * Methods the Fetch standard forbids in a `Request` (it throws on them): nothing is served with
 * them, so they get 405 here instead of failing as a server error.
 */
const FORBIDDEN_METHODS = new Set(["CONNECT", "TRACE", "TRACK"]);

/**
 * How long a connection is kept after answering a request whose body was not read to its end
 * (413, a refusal before reading): the rest is read and thrown away so the client gets the answer
 * rather than a reset, and the connection is closed if the body has not ended by then.
 */
const LINGER_MS = 5_000;

async function serveOne(handler: FetchHandler, req: IncomingMessage, res: ServerResponse): Promise<void> {
  res.once("finish", () => drainUnread(req));
  if (FORBIDDEN_METHODS.has(req.method ?? "")) {
    res.writeHead(405, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(
      JSON.stringify({ error: { code: "method_not_allowed", message: `${req.method} is not allowed here` } }),
    );
    return;
  }
  const url = requestUrlOf(req);
  if (url === undefined) {
    res.writeHead(400, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(
      JSON.stringify({
        error: { code: "bad_request", message: "the request's Host header or target is not a valid URL" },
      }),
    );
    return;
  }
  const controller = new AbortController();
  res.on("close", () => controller.abort());
  const response = await handler(toRequest(req, url, controller.signal));
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
  if (isJson(response)) {
    // A whole body: the headers go with it, in one write, not a write of their own.
    await pipeBody(response.body, res, true);
  } else {
    // A stream (events, NDJSON): the client learns it is open before its first chunk.
    res.flushHeaders();
    await pipeBody(response.body, res);
  }
}

function isJson(response: Response): boolean {
  return response.headers.get("content-type")?.toLowerCase().startsWith("application/json") ?? false;
}

/**
 * Writes a response body as the client reads it: the next chunk is taken from the body only once
 * the socket took the last one (the host's bound on what waits for a slow client then holds). A
 * body that errors (the host dropped a client that read too slowly) cuts the connection, so the
 * client sees a broken response, never a complete one, and reconnects.
 */
async function pipeBody(body: ReadableStream<Uint8Array>, res: ServerResponse, whole = false): Promise<void> {
  const reader = body.getReader();
  let failed = false;
  let wake: (() => void) | undefined;
  // One listener each for the whole response (not one per wait: a slow reader waits thousands of times).
  const resume = (): void => {
    const waiting = wake;
    wake = undefined;
    waiting?.();
  };
  const stop = (): void => {
    reader.cancel().catch(() => undefined);
    resume();
  };
  res.on("drain", resume);
  res.on("close", stop);
  reader.closed.catch(() => {
    failed = true;
    resume();
  });
  // For a whole body, each chunk is written once the next one is read, so the last goes out with
  // the end of the response (one write for a body of one chunk, headers included).
  let held: Uint8Array | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunk = whole ? held : value;
      if (whole) held = value;
      if (chunk && !res.write(chunk) && !failed && !res.destroyed) await new Promise<void>((r) => (wake = r));
      if (res.destroyed || failed) break;
    }
  } catch {
    failed = true;
  } finally {
    res.off("drain", resume);
    res.off("close", stop);
  }
  if (failed) res.destroy();
  else if (res.destroyed) stop();
  else if (held) res.end(held);
  else res.end();
}

/**
 * After the answer went out: a request body nobody read to its end is read and thrown away, so
 * the client (still sending it) reads the answer instead of a reset; the connection closes if the
 * body does not end within {@link LINGER_MS}.
 */
function drainUnread(req: IncomingMessage): void {
  if (req.complete || req.destroyed) return;
  const timer = setTimeout(() => req.socket?.destroy(), LINGER_MS);
  timer.unref?.();
  const done = (): void => clearTimeout(timer);
  req.once("end", done);
  req.once("close", done);
  // The body stream's reader, if a route started one, is done with it.
  req.removeAllListeners("data");
  req.resume();
}

/** A `Host` header as RFC 9110 has it: a name or an IP literal, and a port; nothing else. */
const HOST_HEADER = /^(?:[a-z0-9._-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The URL a request was sent to, from its `Host` header and its target (an absolute target's own
 * host wins over the header, as RFC 9112 says), or `undefined` when they make none: a `Host`
 * with a path, credentials or spaces in it, a target that is neither a path nor an http URL.
 * The host's checks (loopback, same origin) read this URL, so it must be the one the client named.
 */
function requestUrlOf(req: Pick<IncomingMessage, "headers" | "url">): string | undefined {
  const target = (req as { originalUrl?: string }).originalUrl ?? req.url ?? "/";
  if (target.startsWith("/")) {
    const host = req.headers.host ?? "localhost";
    if (!HOST_HEADER.test(host)) return undefined;
    return parsedUrl(`http://${host}${target}`);
  }
  const absolute = parsedUrl(target);
  if (absolute === undefined || !/^https?:\/\/[^/@]*(?:[/?#]|$)/i.test(target)) return undefined;
  const { host, pathname, search } = new URL(absolute);
  return HOST_HEADER.test(host) ? `http://${host}${pathname}${search}` : undefined;
}

function parsedUrl(text: string): string | undefined {
  try {
    return new URL(text).href;
  } catch {
    return undefined;
  }
}

function toRequest(req: IncomingMessage, url: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(key, v);
    else headers.set(key, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(url, {
    method: req.method,
    headers,
    signal,
    ...(hasBody ? { body: bodyOf(req), duplex: "half" } : {}),
  } as RequestInit);
}

/**
 * The request's body as a web stream, read only when a route reads it (a request refused before
 * that is never read). Cancelling it (a body over the size limit) stops reading without cutting
 * the connection: the answer goes out first (see drainUnread).
 */
// No node:stream import: the entry stays loadable where only web streams exist.
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let listening = false;
  let onData: (chunk: Buffer) => void = () => undefined;
  let onEnd: () => void = () => undefined;
  let onClose: () => void = () => undefined;
  const stop = (): void => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onClose);
    req.off("close", onClose);
    req.pause();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onData = (chunk) => {
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        };
        onEnd = () => {
          stop();
          controller.close();
        };
        onClose = () => {
          if (req.complete) return;
          stop();
          controller.error(new Error("the client closed the connection before the request body ended"));
        };
      },
      pull() {
        if (!listening) {
          listening = true;
          req.on("data", onData);
          req.once("end", onEnd);
          req.once("error", onClose);
          req.once("close", onClose);
        }
        req.resume();
      },
      cancel() {
        stop();
      },
    },
    // Nothing is read ahead: the first read of a route starts the body flowing.
    { highWaterMark: 0 },
  );
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
