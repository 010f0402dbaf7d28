import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { type WebSocket, WebSocketServer } from "ws";
import type { Agent } from "../agent/create-agent.js";
import { agentMachine } from "../machines/agent.machine.js";
import { layoutMachineGraph } from "./machine-graph.js";
import { readRecording } from "./recording.js";
import { followAgent, type VisualizerCommand, type VisualizerMessage } from "./wire.js";

/** Options of {@link visualize} and {@link visualizeRecording}. */
export interface VisualizeOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** Messages kept for pages that connect later (oldest dropped first). Default 20,000. */
  historyLimit?: number;
}

/** A running visualizer server. */
export interface VisualizerServer {
  /** The page, e.g. `http://127.0.0.1:43817/`. */
  readonly url: string;
  readonly port: number;
  /** Closes every page connection and the server; the agent is left alone. */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const MAX_COMMAND_BYTES = 64 * 1024;

/**
 * Serves the live visualizer page for an agent on 127.0.0.1: the statechart with the active state,
 * one timeline lane per tool call, the streaming text, the transcript, token usage, compactions, and
 * controls (steer or prompt, abort, approve / deny pending calls). Pages that connect late get the
 * history first. Open `url` in a browser; it works offline.
 *
 * @example
 * ```ts
 * const agent = createAgent({ provider, tools });
 * const server = await visualize(agent, { port: 0 });
 * console.log(`Watch it at ${server.url}`);
 * await agent.prompt("Refactor utils.ts");
 * await server.close();
 * ```
 */
export async function visualize(agent: Agent, options: VisualizeOptions = {}): Promise<VisualizerServer> {
  const historyLimit = options.historyLimit ?? 20_000;
  const history: string[] = [];
  const sockets = new Set<WebSocket>();
  const hello = (): VisualizerMessage => ({ kind: "hello", t: Date.now(), agentId: agent.id, mode: "live" });

  const broadcast = (message: VisualizerMessage) => {
    const data = JSON.stringify(message);
    history.push(data);
    if (history.length > historyLimit) history.splice(0, history.length - historyLimit);
    for (const socket of sockets) if (socket.readyState === socket.OPEN) socket.send(data);
  };
  const stopFollowing = followAgent(agent, broadcast);

  let site: Site;
  try {
    site = await serveSite({ port: options.port ?? 0 });
  } catch (error) {
    stopFollowing();
    throw error;
  }
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_COMMAND_BYTES });
  site.server.on("upgrade", (request, socket, head) => {
    if (request.url !== "/ws" || !site.trusted(request)) {
      socket.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      ws.on("error", () => sockets.delete(ws));
      ws.send(JSON.stringify(hello()));
      for (const data of history) ws.send(data);
      ws.on("message", (data) => {
        const reply = runCommand(agent, String(data));
        if (reply) ws.send(JSON.stringify(reply));
      });
    });
  });

  return {
    url: site.url,
    port: site.port,
    async close() {
      stopFollowing();
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await site.close();
    },
  };
}

/**
 * Serves the visualizer page in replay mode for a recording written by `recordEvents`: it opens at
 * `url` (which carries `?replay=recording.jsonl`) with next / previous / play controls. Only that one
 * file is served.
 *
 * @example
 * ```ts
 * const server = await visualizeRecording("runs/today.jsonl", { port: 0 });
 * console.log(`Replay at ${server.url}`);
 * ```
 */
export async function visualizeRecording(
  path: string,
  options: Pick<VisualizeOptions, "port"> = {},
): Promise<VisualizerServer> {
  await readRecording(path); // A broken file is reported here, with its line number, not in the page.
  const site = await serveSite({
    port: options.port ?? 0,
    extra: { "/recording.jsonl": async () => ({ type: "application/x-ndjson", body: await readFile(path) }) },
  });
  return {
    url: `${site.url}?replay=recording.jsonl`,
    port: site.port,
    close: site.close,
  };
}

/** Runs one page command; returns an error message for the page when it fails. */
export function runCommand(agent: Agent, data: string): VisualizerMessage | undefined {
  const fail = (message: string): VisualizerMessage => ({ kind: "error", t: Date.now(), message });
  let command: VisualizerCommand;
  try {
    command = JSON.parse(data) as VisualizerCommand;
  } catch {
    return fail("The command is not JSON");
  }
  try {
    switch (command?.kind) {
      case "steer":
      case "prompt": {
        if (typeof command.text !== "string" || command.text.trim() === "")
          return fail("Type a message first");
        if (command.kind === "steer" || agent.state !== "idle") agent.steer(command.text);
        // Lost a race with another prompt: the text still reaches the agent, as steering.
        else agent.prompt(command.text).catch(() => agent.steer(command.text));
        return undefined;
      }
      case "abort":
        agent.abort();
        return undefined;
      case "approve":
        if (typeof command.toolCallId !== "string") return fail("approve needs a toolCallId");
        agent.approve(command.toolCallId);
        return undefined;
      case "deny":
        if (typeof command.toolCallId !== "string") return fail("deny needs a toolCallId");
        agent.deny(
          command.toolCallId,
          typeof command.reason === "string" && command.reason ? command.reason : undefined,
        );
        return undefined;
      default:
        return fail(`Unknown command ${JSON.stringify((command as { kind?: unknown })?.kind)}`);
    }
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

type Asset = () => Promise<{ type: string; body: string | Buffer }>;

interface Site {
  server: Server;
  url: string;
  port: number;
  /** The request comes from this page (Host and Origin are ours), not from another site or a rebound name. */
  trusted(request: IncomingMessage): boolean;
  close(): Promise<void>;
}

/** The page's directory: next to this file in the source tree, or in the package when run from `dist/`. */
export function pageDirectory(): string {
  const candidates = [
    new URL("./page/", import.meta.url),
    new URL("../../visualizer/page/", import.meta.url),
  ];
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate);
    if (existsSync(`${path}index.html`)) return path;
  }
  throw new Error(
    `The visualizer page is missing (looked in ${candidates.map((c) => fileURLToPath(c)).join(", ")})`,
  );
}

let graphJson: string | undefined;

async function serveSite(options: { port: number; extra?: Record<string, Asset> }): Promise<Site> {
  const dir = pageDirectory();
  const file =
    (name: string, type: string): Asset =>
    async () => ({ type, body: await readFile(dir + name) });
  const assets: Record<string, Asset> = {
    "/": file("index.html", "text/html; charset=utf-8"),
    "/index.html": file("index.html", "text/html; charset=utf-8"),
    "/app.js": file("app.js", "text/javascript; charset=utf-8"),
    "/style.css": file("style.css", "text/css; charset=utf-8"),
    "/graph.json": async () => {
      graphJson ??= JSON.stringify(layoutMachineGraph(agentMachine));
      return { type: "application/json", body: graphJson };
    },
    ...options.extra,
  };

  let port = 0;
  const allowedHosts = () => [`${HOST}:${port}`, `localhost:${port}`];
  const trusted = (request: IncomingMessage) => {
    if (!allowedHosts().includes(request.headers.host ?? "")) return false;
    const origin = request.headers.origin;
    return origin === undefined || allowedHosts().some((host) => origin === `http://${host}`);
  };

  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? "/").split("?")[0]!;
    const asset = assets[path];
    if (!trusted(request)) {
      response.writeHead(403).end("Forbidden");
      return;
    }
    if (request.method !== "GET" || !asset) {
      response.writeHead(404, { "content-type": "text/plain" }).end("Not found");
      return;
    }
    asset().then(
      ({ type, body }) => {
        response.writeHead(200, { "content-type": type, "cache-control": "no-store" }).end(body);
      },
      (error: Error) => {
        response.writeHead(500, { "content-type": "text/plain" }).end(error.message);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(`The visualizer cannot listen on 127.0.0.1:${options.port}: the port is in use`)
          : error,
      ),
    );
    server.listen(options.port, HOST, () => {
      server.removeAllListeners("error");
      // A listening server's later errors must not crash the host process.
      server.on("error", () => undefined);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === "object" && address ? address.port : options.port;
  return {
    server,
    url: `http://${HOST}:${port}/`,
    port,
    trusted,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
