import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { basename } from "node:path";
import type { WebSocket } from "ws";
import { toolCallMachine } from "../actors/tool-call.machine.js";
import type { Agent } from "../agent/create-agent.js";
import { agentMachine } from "../machines/agent.machine.js";
import { toolExecutionMachine } from "../machines/tool-execution.machine.js";
import { layoutMachineGraph } from "./machine-graph.js";
import { followWakes, type LaterSource, type WakeSource } from "./next-wake.js";
import { importPageModule, pageDirectory } from "./page-directory.js";
import { carriesToken, refuseUpgrade } from "./page-gate.js";
import { sendOrDrop } from "./send-or-drop.js";
import { previewForPage } from "./preview.js";
import { readRecording } from "./recording.js";
import { followAgent, type VisualizerCommand, type VisualizerMessage } from "./wire.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeFs = () => process.getBuiltinModule("node:fs");
const nodeFsPromises = () => process.getBuiltinModule("node:fs/promises");

/** Options of {@link visualize} and {@link visualizeRecording}. */
export interface VisualizeOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /**
   * Messages kept word for word for pages that connect later (oldest dropped first). Default 20,000.
   * What is dropped is not lost to them: it is folded into the state a late page starts from (the
   * current state, the transcript, pending approvals, the lanes of recent turns).
   */
  historyLimit?: number;
  /**
   * The secret a client must present (`?token=` in `url`) to connect. Default: 32 random bytes,
   * new for each server. Pass your own to keep one URL across restarts.
   */
  token?: string;
  /** Largest command the page may send (a steering message with a pasted log, say). Default 16 MiB. */
  maxCommandBytes?: number;
  /**
   * Bytes a page's connection may have waiting to be sent before it is closed: a page that reads
   * slower than the agent talks (or not at all) would otherwise make the server buffer without
   * bound. A closed page reconnects and starts again from the history. Default 32 MiB.
   */
  maxClientBufferBytes?: number;
  /**
   * Messages a page that connects late gets word for word (for its time travel); everything before
   * them reaches it folded into the state it starts from, so a tab opened on a long run is usable at
   * once. Default 2,000.
   */
  latePageMessages?: number;
  /**
   * The process's scheduler (`createScheduler` of agent-machine/wake): the page then shows when a
   * schedule next wakes the agent, and which. (What woke a run the page reads from its messages.)
   */
  scheduler?: WakeSource;
  /**
   * The process's tools that answer later (`createLaterResults` of agent-machine/wake): the page then
   * lists the results the agent waits for, each of which wakes it.
   */
  laterResults?: LaterSource;
  /**
   * The id `scheduler` and `laterResults` know the agent by: the key of their `agents` directory.
   * Default `agent.id` (give `createAgent` the same `id` as its key and leave this out).
   */
  agentId?: string;
}

/** A running visualizer server. */
export interface VisualizerServer {
  /** The page with its access token, e.g. `http://127.0.0.1:43817/?token=…`: open this one. */
  readonly url: string;
  readonly port: number;
  /** The access token in `url`. */
  readonly token: string;
  /** Closes every page connection and the server; the agent is left alone. */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const DEFAULT_MAX_COMMAND_BYTES = 16 * 1024 * 1024;
const DEFAULT_MAX_CLIENT_BUFFER_BYTES = 32 * 1024 * 1024;

/** The page's model (visualizer/page/model.js), shared with the server to fold dropped history. */
type PageModelModule = typeof import("./page/model.js");

/**
 * Serves the live visualizer page for an agent on 127.0.0.1: the statechart with the active state,
 * one timeline lane per tool call, the streaming text, the transcript, token usage, compactions, and
 * controls (steer or prompt, abort, approve / deny pending calls). Pages that connect late get the
 * current state and the history first. Open `url` (it carries the access token) in a browser; it
 * works offline.
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
  const historyLimit = Math.max(1, options.historyLimit ?? 20_000);
  const maxCommandBytes = options.maxCommandBytes ?? DEFAULT_MAX_COMMAND_BYTES;
  const maxClientBufferBytes = options.maxClientBufferBytes ?? DEFAULT_MAX_CLIENT_BUFFER_BYTES;
  const latePageMessages = Math.max(1, options.latePageMessages ?? 2_000);
  const pageModel = await loadPageModel();
  const history: string[] = [];
  // What fell out of `history`, folded: the model a late page starts from before replaying `history`.
  const before = pageModel.emptyModel();
  let dropped = 0;
  // The model after the first `lateAt` messages (absolute count): what a late page starts from. It
  // moves forward only when a page connects, so a server nobody watches late pays nothing for it.
  let late = pageModel.emptyModel();
  let lateAt = 0;
  const startFor = () => {
    const target = Math.max(dropped, dropped + history.length - latePageMessages);
    if (lateAt < dropped) {
      late = pageModel.cloneModel(before);
      lateAt = dropped;
    }
    for (; lateAt < target; lateAt++)
      pageModel.apply(late, JSON.parse(history[lateAt - dropped]!) as VisualizerMessage);
    return { model: late, from: lateAt - dropped };
  };
  const sockets = new Set<WebSocket>();
  const hello = (): VisualizerMessage => ({
    kind: "hello",
    t: Date.now(),
    agentId: agent.id,
    mode: "live",
    maxCommandBytes,
  });

  const broadcast = (message: VisualizerMessage) => {
    const data = JSON.stringify(previewForPage(message));
    history.push(data);
    while (history.length > historyLimit) {
      pageModel.apply(before, JSON.parse(history.shift()!) as VisualizerMessage);
      dropped++;
    }
    for (const socket of sockets) {
      // A page that cannot keep up is closed; it reconnects and replays the history.
      if (!sendOrDrop(socket, data, maxClientBufferBytes) && socket.readyState !== socket.CONNECTING)
        sockets.delete(socket);
    }
  };
  const stopFollowingAgent = followAgent(agent, broadcast);
  // A run may make, fire or end a schedule (the agent's own schedule tool): look again when it ends.
  const { scheduler, laterResults } = options;
  const wakes =
    (scheduler || laterResults) &&
    followWakes({ scheduler, laterResults }, options.agentId ?? agent.id, broadcast);
  const runEnds = wakes && agent.events$.subscribe((event) => event.type === "agent_end" && wakes.check());
  const stopFollowing = () => {
    stopFollowingAgent();
    runEnds?.unsubscribe();
    wakes?.stop();
  };

  let site: Site;
  try {
    site = await serveSite({ port: options.port ?? 0, token: options.token });
  } catch (error) {
    stopFollowing();
    throw error;
  }
  // ws is loaded when a page is served, not with agent-machine: a cold start pays for each module.
  const { WebSocketServer } = await import("ws");
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxCommandBytes });
  site.server.on("upgrade", (request, socket, head) => {
    if (pathOf(request) !== "/ws" || !site.trusted(request) || !site.authorized(request)) {
      return refuseUpgrade(socket);
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      sockets.add(ws);
      ws.on("close", () => sockets.delete(ws));
      ws.on("error", () => sockets.delete(ws));
      // The greeting is sent whatever the page has waiting (it waits for nothing yet); a socket whose
      // send throws is dropped here, as in `broadcast`, rather than throwing out of the upgrade.
      const greet = (data: string) => sendOrDrop(ws, data, Number.POSITIVE_INFINITY);
      if (!greet(JSON.stringify(hello()))) return void sockets.delete(ws);
      const start = startFor();
      if (lateAt > 0) {
        const catchUp: VisualizerMessage = {
          kind: "catch_up",
          t: Date.now(),
          model: pageModel.serializeModel(start.model),
          dropped: lateAt,
        };
        if (!greet(JSON.stringify(catchUp))) return void sockets.delete(ws);
      }
      // Already JSON: joined into one message, not parsed again.
      if (start.from < history.length) {
        const backlog = `{"kind":"backlog","t":${Date.now()},"messages":[${history.slice(start.from).join(",")}]}`;
        if (!greet(backlog)) return void sockets.delete(ws);
      }
      if (!greet(JSON.stringify({ kind: "caught_up", t: Date.now() } satisfies VisualizerMessage)))
        return void sockets.delete(ws);
      ws.on("message", (data) => {
        const reply = runCommand(agent, String(data));
        if (reply) sendOrDrop(ws, JSON.stringify(reply), maxClientBufferBytes);
      });
    });
  });

  return {
    url: site.url,
    port: site.port,
    token: site.token,
    async close() {
      stopFollowing();
      for (const socket of sockets) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await site.close();
    },
  };
}

/**
 * Serves the visualizer page in replay mode for a recording written by `recordEvents` (or a CLI
 * session log): it opens at `url` with next / previous / play controls and the file's name. Only that
 * one file is served, to holders of the token in `url`.
 *
 * @example
 * ```ts
 * const server = await visualizeRecording("runs/today.jsonl", { port: 0 });
 * console.log(`Replay at ${server.url}`);
 * ```
 */
export async function visualizeRecording(
  path: string,
  options: Pick<VisualizeOptions, "port" | "token"> = {},
): Promise<VisualizerServer> {
  await readRecording(path); // A broken file is reported here, with its line number, not in the page.
  const route = `/recordings/${encodeURIComponent(basename(path))}`;
  const site = await serveSite({
    port: options.port ?? 0,
    token: options.token,
    data: {
      [route]: async () => ({ type: "application/x-ndjson", body: await nodeFsPromises().readFile(path) }),
    },
  });
  return {
    url: `${site.url}&replay=${encodeURIComponent(route.slice(1))}`,
    port: site.port,
    token: site.token,
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
        // Edited arguments are checked against the tool's schema by the agent (an error comes back).
        agent.approve(command.toolCallId, "args" in command ? { args: command.args } : undefined);
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
  /** The page with `?token=`. */
  url: string;
  port: number;
  token: string;
  /** The request comes from this page (Host and Origin are ours), not from another site or a rebound name. */
  trusted(request: IncomingMessage): boolean;
  /** The request carries the token (`?token=`): any client, browser or not, must. */
  authorized(request: IncomingMessage): boolean;
  close(): Promise<void>;
}

async function loadPageModel(): Promise<PageModelModule> {
  return importPageModule<PageModelModule>("model.js");
}

let graphsJson: string | undefined;

/** The three machines the page draws (the agent, its tool execution, and one tool call), full and simple. */
function graphs(): string {
  graphsJson ??= JSON.stringify({
    agent: layoutMachineGraph(agentMachine),
    toolExecution: layoutMachineGraph(toolExecutionMachine),
    toolCall: layoutMachineGraph(toolCallMachine),
    // The page's "Simple" view: momentary states folded into their edges, labels in words.
    simple: {
      agent: layoutMachineGraph(agentMachine, { simple: true }),
      toolExecution: layoutMachineGraph(toolExecutionMachine, { simple: true }),
      toolCall: layoutMachineGraph(toolCallMachine, { simple: true }),
    },
  });
  return graphsJson;
}

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/** The page's own files, by URL path; nothing else on disk is reachable. */
function pageAssets(dir: string): Record<string, Asset> {
  const assets: Record<string, Asset> = {};
  for (const name of nodeFs().readdirSync(dir)) {
    const type = TYPES[name.split(".").pop() ?? ""];
    if (!type || !/^[\w-]+\.\w+$/.test(name)) continue;
    assets[`/${name}`] = async () => ({ type, body: await nodeFsPromises().readFile(dir + name) });
  }
  assets["/"] = assets["/index.html"]!;
  // Browsers ask for /favicon.ico whatever the page says; answer with the page's icon, not a 404.
  if (assets["/favicon.svg"]) assets["/favicon.ico"] = assets["/favicon.svg"];
  assets["/graph.json"] = async () => ({ type: "application/json", body: graphs() });
  return assets;
}

const pathOf = (request: IncomingMessage) => (request.url ?? "/").split("?")[0]!;

/** Headers on every answer: no framing by other sites (clickjacking), no other origins, no referrer. */
function securityHeaders(port: number): Record<string, string> {
  const sockets = [`ws://${HOST}:${port}`, `ws://localhost:${port}`].join(" ");
  return {
    "content-security-policy": [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data:",
      `connect-src 'self' ${sockets}`,
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "object-src 'none'",
    ].join("; "),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-resource-policy": "same-origin",
    "cache-control": "no-store",
  };
}

async function serveSite(options: {
  port: number;
  token?: string;
  /** Paths that serve data, not the page: only with the token. */
  data?: Record<string, Asset>;
}): Promise<Site> {
  const assets = pageAssets(pageDirectory());
  const data = options.data ?? {};
  const { randomBytes } = process.getBuiltinModule("node:crypto"); // on first use (issue 44)
  const token = options.token ?? randomBytes(32).toString("base64url");
  const expected = Buffer.from(token);

  let port = 0;
  const allowedHosts = () => [`${HOST}:${port}`, `localhost:${port}`];
  const trusted = (request: IncomingMessage) => {
    if (!allowedHosts().includes(request.headers.host ?? "")) return false;
    const origin = request.headers.origin;
    return origin === undefined || allowedHosts().some((host) => origin === `http://${host}`);
  };
  const authorized = (request: IncomingMessage) => carriesToken(request, expected);

  const { createServer } = process.getBuiltinModule("node:http"); // on first use (issue 44)
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const headers = securityHeaders(port);
    const path = pathOf(request);
    if (!trusted(request)) {
      response.writeHead(403, headers).end("Forbidden");
      return;
    }
    const asset = assets[path] ?? data[path];
    if (request.method !== "GET" || !asset) {
      response.writeHead(404, { ...headers, "content-type": "text/plain" }).end("Not found");
      return;
    }
    if (data[path] && !authorized(request)) {
      response.writeHead(403, { ...headers, "content-type": "text/plain" }).end("Forbidden: no token");
      return;
    }
    asset().then(
      ({ type, body }) => {
        response.writeHead(200, { ...headers, "content-type": type }).end(body);
      },
      (error: Error) => {
        response.writeHead(500, { ...headers, "content-type": "text/plain" }).end(error.message);
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
    url: `http://${HOST}:${port}/?token=${encodeURIComponent(token)}`,
    port,
    token,
    trusted,
    authorized,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
