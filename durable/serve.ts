import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createEndpointHandler, type LoggerTransport } from "@restatedev/restate-sdk";
import type { AgentServices } from "./agent-services.js";
import { createLiveEncoder } from "./live-wire.js";
import { ensurePromiseWithResolvers } from "./polyfill.js";

/** Options of {@link serveAgents}. */
export interface ServeAgentsOptions {
  services: AgentServices;
  /** Default 0: a free port (read it from `server.port`). */
  port?: number;
  /** Default `127.0.0.1`. Bind wider only behind your network's protection: see docs/durable.md. */
  host?: string;
  /** Restate request identity keys (`publickeyv1_…`): when set, requests not signed by your Restate are refused. */
  identityKeys?: string[];
  /** Where the Restate SDK logs (default: the console, at the level `RESTATE_LOGGING` sets, INFO when unset). */
  logger?: LoggerTransport;
  /**
   * The live channel: an HTTP/1.1 server streaming (SSE) the events of the runs this process
   * serves, deltas included, to durable handles (`durableHandle(client, id, { live })`, the session
   * host's `durable.live`). Default: on, on a free port of `host` (read it from `server.liveUrl`);
   * `false` turns it off (followers then read committed events from Restate only).
   */
  live?: { port?: number } | false;
}

/** A running service endpoint. */
export interface AgentServer {
  /** The address to register with Restate, e.g. `http://127.0.0.1:9080`. */
  readonly url: string;
  readonly port: number;
  /** The live channel's address (give it to durable handles), when it is on. */
  readonly liveUrl: string | undefined;
  /** Stops accepting and closes open connections (runs in flight resume elsewhere or on restart). */
  close(): Promise<void>;
}

/**
 * Serves agent sessions over HTTP/2 (the protocol Restate uses to drive them), on 127.0.0.1 by
 * default: the SDK's own `listen()` binds every interface. Register the printed `url` once with
 * {@link registerDeployment}; a process restarted on the same address picks up its sessions' runs.
 *
 * @example
 * ```ts
 * const server = await serveAgents({ services, port: 9080 });
 * await registerDeployment({ adminUrl: "http://127.0.0.1:9070", uri: server.url });
 * ```
 */
export async function serveAgents(options: ServeAgentsOptions): Promise<AgentServer> {
  ensurePromiseWithResolvers();
  const handler = createEndpointHandler({
    services: options.services.services,
    ...(options.identityKeys && { identityKeys: options.identityKeys }),
    ...(options.logger && { logger: options.logger }),
  });
  const server = http2.createServer(handler);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const sessions = new Set<http2.Http2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  const port = (server.address() as AddressInfo).port;
  const live =
    options.live === false ? undefined : await serveLive(options.services, host, options.live?.port ?? 0);
  const address = (p: number) => `http://${host.includes(":") ? `[${host}]` : host}:${p}`;
  return {
    url: address(port),
    port,
    liveUrl: live && address(live.port),
    close: async () => {
      await Promise.all([
        live?.close(),
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const session of sessions) session.destroy();
        }),
      ]);
    },
  };
}

/**
 * The live channel: `GET /runs/<session id>/<run id>?since=<seq>` streams the run's entries
 * (durable/live-runs.ts) as server-sent events, one JSON entry each, until the attempt this process
 * runs closes; 404 when this process does not serve that run.
 */
async function serveLive(
  services: AgentServices,
  host: string,
  port: number,
): Promise<{ port: number; close(): Promise<void> }> {
  const loopback = LOOPBACK.has(host);
  const server = http.createServer((request, response) => {
    // Bound to this machine, it answers this machine's names only: a page whose name was rebound
    // to 127.0.0.1 (DNS rebinding) reads no run's text.
    if (loopback && !LOOPBACK.has(hostName(request.headers.host ?? ""))) {
      response.writeHead(403, { "content-type": "text/plain" }).end("not a loopback host");
      return;
    }
    const url = new URL(request.url ?? "/", "http://live");
    const match = /^\/runs\/([^/]+)\/([^/]+)$/.exec(url.pathname);
    const since = Number(url.searchParams.get("since") ?? 0);
    if (request.method !== "GET" || !match || !Number.isInteger(since) || since < 0) {
      response.writeHead(400, { "content-type": "text/plain" }).end("GET /runs/<session>/<run>?since=<seq>");
      return;
    }
    const entries = services.live.follow(decodeURIComponent(match[1]!), decodeURIComponent(match[2]!), since);
    if (!entries) {
      response.writeHead(404, { "content-type": "text/plain" }).end("this process does not serve that run");
      return;
    }
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
      connection: "keep-alive",
    });
    response.flushHeaders();
    const encode = createLiveEncoder();
    const subscription = entries.subscribe({
      next: (entry) => {
        let data: string;
        try {
          data = encode(entry);
        } catch {
          // Only a live-only event can hold what JSON cannot (a tool's partial result with a BigInt:
          // what a run stores is checked): skipped, rather than thrown where nothing catches it.
          return;
        }
        response.write(`data: ${data}\n\n`);
      },
      complete: () => response.end(),
    });
    response.once("close", () => subscription.unsubscribe());
  });
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

/** Options of {@link registerDeployment}. */
export interface RegisterDeploymentOptions {
  /** The Restate admin API, e.g. `http://127.0.0.1:9070`. */
  adminUrl: string;
  /** The service endpoint's address as Restate reaches it. */
  uri: string;
  /** Replace a deployment already registered at this address (needed when its handlers changed). */
  force?: boolean;
}

/**
 * Registers a service endpoint with Restate (`POST /deployments`), which discovers its services.
 * Register each address once: a second address for the same services becomes a new deployment
 * that takes new invocations, while runs already started stay pinned to the first (docs/durable.md).
 *
 * @example
 * ```ts
 * const { id, services } = await registerDeployment({ adminUrl, uri: server.url });
 * ```
 */
export async function registerDeployment(
  options: RegisterDeploymentOptions,
): Promise<{ id: string; services: string[] }> {
  const response = await fetch(new URL("/deployments", options.adminUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: options.uri, force: options.force ?? false }),
  });
  const text = await response.text();
  if (!response.ok) {
    throw new Error(`Restate refused the deployment ${options.uri} (HTTP ${response.status}): ${text}`);
  }
  const body = JSON.parse(text) as { id: string; services: { name: string }[] };
  return { id: body.id, services: body.services.map((s) => s.name) };
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"]);

/** The name of a Host header, without its port. */
function hostName(header: string): string {
  return header.startsWith("[") ? header.slice(0, header.indexOf("]") + 1) : header.split(":")[0]!;
}
