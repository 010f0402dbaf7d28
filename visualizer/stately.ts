import type { IncomingMessage } from "node:http";
import type { StatelyInspectionEvent } from "@statelyai/inspect";
import type { WebSocket } from "ws";
import type { AnyActorRef, InspectionEvent, Observer, Subscription } from "xstate";
import { type Agent, followActors } from "../agent/create-agent.js";
import {
  type InspectorSanitizeOptions,
  inspectorSanitizers,
  sanitizeInspectionEvent,
  shrinkingObserver,
} from "./stately-browser.js";
import { carriesToken, refuseUpgrade } from "./page-gate.js";
import { sendOrDrop } from "./send-or-drop.js";
import { guardInspector, inspectorFailure } from "../agent/guarded-inspector.js";
import { errorText } from "../core/error-text.js";

export {
  createStatelyBrowserInspector,
  type InspectorSanitizeOptions,
  inspectorSanitizers,
  type StatelyBrowserInspectorOptions,
} from "./stately-browser.js";

const HOST = "127.0.0.1";
const STATELY_INSPECTOR_URL = "https://stately.ai/inspect";

/** A local relay that carries inspection events from this process to the Stately inspector page. */
export interface InspectorRelay {
  /** Open this in a browser: a bridge page that embeds the Stately inspector and feeds it the events. */
  readonly url: string;
  /** Where inspectors send events and receivers listen, e.g. `ws://127.0.0.1:40123/?token=…`. */
  readonly wsUrl: string;
  readonly port: number;
  /** The access token both URLs carry (`?token=`): the relay answers no one without it. */
  readonly token: string;
  close(): Promise<void>;
}

/** Options of {@link createInspectorRelay}. */
export interface InspectorRelayOptions {
  /** Port on 127.0.0.1; 0 (the default) picks a free one. */
  port?: number;
  /** The inspector UI the bridge page embeds. Default `https://stately.ai/inspect`. */
  inspectorUrl?: string;
  /** Non-registration events kept for pages that connect later. Default 1,000. */
  bufferSize?: number;
  /**
   * Actor registrations kept for pages that connect later (so a late page knows the actors); the
   * oldest go first beyond it. Default 1,000.
   */
  maxRegistrations?: number;
  /** Bytes the whole backlog may hold; the oldest events go first (then the oldest registrations). Default 64 MiB. */
  maxBacklogBytes?: number;
  /** Bytes a client may have waiting to be sent before it is closed (a page that does not read). Default 32 MiB. */
  maxClientBufferBytes?: number;
  /**
   * The secret every client (the bridge page, an inspector sending events) must present as
   * `?token=`. Default: 32 random bytes, new for each relay.
   */
  token?: string;
}

/**
 * Starts a WebSocket relay on 127.0.0.1 that speaks the protocol of `@statelyai/inspect/server`
 * (every message from one client goes to all the others; late clients get a backlog) and serves the
 * bridge page that hands the events to the Stately inspector. Unlike the package's own server it binds
 * loopback only, accepts port 0, refuses other web origins and every client without its token (in
 * `url` and `wsUrl`), never opens a browser by itself, keeps actor registrations apart in its
 * backlog so a page opened late still knows the actors, bounds that backlog, and closes a client
 * that does not read.
 *
 * @example
 * ```ts
 * const relay = await createInspectorRelay();
 * console.log(`Open ${relay.url}`);
 * ```
 */
export async function createInspectorRelay(options: InspectorRelayOptions = {}): Promise<InspectorRelay> {
  const inspectorUrl = options.inspectorUrl ?? STATELY_INSPECTOR_URL;
  const backlog = createRelayBacklog({
    maxEvents: options.bufferSize ?? 1_000,
    maxRegistrations: options.maxRegistrations ?? 1_000,
    maxBytes: options.maxBacklogBytes ?? 64 * 1024 * 1024,
  });
  const maxClientBufferBytes = options.maxClientBufferBytes ?? 32 * 1024 * 1024;
  const { randomBytes } = process.getBuiltinModule("node:crypto"); // on first use (issue 44)
  const token = options.token ?? randomBytes(32).toString("base64url");
  const expected = Buffer.from(token);
  let port = 0;

  const hosts = () => [`${HOST}:${port}`, `localhost:${port}`];
  const trusted = (request: IncomingMessage) =>
    hosts().includes(request.headers.host ?? "") &&
    (request.headers.origin === undefined || hosts().some((h) => request.headers.origin === `http://${h}`));
  // Host and Origin keep web pages out; the token keeps out every other local process too.
  const authorized = (request: IncomingMessage) => carriesToken(request, expected);
  const wsUrl = () => `ws://${HOST}:${port}/?token=${encodeURIComponent(token)}`;

  const { createServer } = process.getBuiltinModule("node:http"); // on first use (issue 44)
  const server = createServer((request, response) => {
    if (!trusted(request)) return void response.writeHead(403).end("Forbidden");
    if ((request.url ?? "/").split("?")[0] !== "/") return void response.writeHead(404).end("Not found");
    // The page carries the token: only for those who have it.
    if (!authorized(request)) return void response.writeHead(403).end("Forbidden: no token");
    response
      .writeHead(200, {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "x-frame-options": "DENY",
        "content-security-policy": "frame-ancestors 'none'",
        // The page's URL carries the token, and it loads the inspector from another site: no
        // browser's referrer policy may send that site the URL.
        "referrer-policy": "no-referrer",
        "x-content-type-options": "nosniff",
      })
      .end(bridgePage(wsUrl(), inspectorUrl));
  });
  // ws is loaded when a relay starts, not with agent-machine: a cold start pays for each module.
  const { WebSocketServer } = await import("ws");
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  server.on("upgrade", (request, socket, head) => {
    if (!trusted(request) || !authorized(request)) return refuseUpgrade(socket);
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit("connection", ws, request));
  });
  wss.on("connection", (ws) => {
    ws.on("error", () => ws.terminate());
    // The backlog goes whatever the page has waiting (it is the page's start); a socket whose send
    // throws is cut off by `sendOrDrop` rather than throwing out of the connection's handler.
    for (const data of backlog.entries()) if (!sendOrDrop(ws, data, Number.POSITIVE_INFINITY)) return;
    ws.on("message", (raw) => {
      const data = raw.toString();
      backlog.add(data);
      for (const client of wss.clients) if (client !== ws) sendOrDrop(client, data, maxClientBufferBytes);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        error.code === "EADDRINUSE"
          ? new Error(
              `The inspector relay cannot listen on 127.0.0.1:${options.port ?? 0}: the port is in use`,
            )
          : error,
      ),
    );
    server.listen(options.port ?? 0, HOST, () => {
      server.removeAllListeners("error");
      // A listening server's later errors must not crash the host process.
      server.on("error", () => undefined);
      resolve();
    });
  });
  const address = server.address();
  port = typeof address === "object" && address ? address.port : (options.port ?? 0);
  return {
    url: `http://${HOST}:${port}/?token=${encodeURIComponent(token)}`,
    wsUrl: wsUrl(),
    port,
    token,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What a relay keeps for clients that connect later, within its bounds. */
export interface RelayBacklog {
  /** Keeps a message (an actor registration if it holds `"type":"@xstate.actor"`), dropping the oldest beyond the bounds. */
  add(data: string): void;
  /** What a new client gets, oldest first. */
  entries(): string[];
  /** Bytes held (UTF-16 code units, as the strings are kept). */
  readonly bytes: number;
}

/**
 * The relay's backlog: registrations are kept apart from other events so a page opened late still
 * knows the actors, but neither is kept without bound (a client can send 16 MiB registrations for
 * ever): at most `maxRegistrations` registrations, `maxEvents` other events, and `maxBytes` in all,
 * the oldest events dropped first, then the oldest registrations.
 *
 * @example
 * ```ts
 * const backlog = createRelayBacklog({ maxEvents: 1_000, maxRegistrations: 1_000, maxBytes: 64 << 20 });
 * backlog.add(message);
 * for (const data of backlog.entries()) socket.send(data);
 * ```
 */
export function createRelayBacklog(limits: {
  maxEvents: number;
  maxRegistrations: number;
  maxBytes: number;
}): RelayBacklog {
  // Each message keeps its arrival number, so the two lists merge back into arrival order.
  const registrations: { n: number; data: string }[] = [];
  const events: { n: number; data: string }[] = [];
  let arrived = 0;
  let bytes = 0;
  const dropOldest = (list: { data: string }[]) => {
    bytes -= list.shift()!.data.length;
  };
  return {
    add(data) {
      const list = data.includes('"type":"@xstate.actor"') ? registrations : events;
      list.push({ n: arrived++, data });
      bytes += data.length;
      while (events.length > limits.maxEvents) dropOldest(events);
      while (registrations.length > limits.maxRegistrations) dropOldest(registrations);
      while (bytes > limits.maxBytes && (events.length || registrations.length))
        dropOldest(events.length ? events : registrations);
    },
    entries() {
      return [...registrations, ...events].sort((a, b) => a.n - b.n).map((entry) => entry.data);
    },
    get bytes() {
      return bytes;
    },
  };
}

/**
 * The bridge page of `@statelyai/inspect/server`, pointed at our relay. Until the embedded inspector
 * says it is connected, a banner explains that it loads from its site (so needs the internet) and
 * that our own visualizer page works offline: without it, offline, all one sees is a grey frame.
 */
export function bridgePage(wsUrl: string, inspectorUrl: string): string {
  const site = new URL(inspectorUrl).host;
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Stately Inspector · agent-machine</title>
<style>
*{margin:0;padding:0}html,body{height:100%}body{display:flex;flex-direction:column;font:14px/1.5 system-ui,sans-serif}
iframe{flex:1;width:100%;border:none}
#hint{padding:10px 16px;background:#fffbeb;border-bottom:1px solid #f5d9a8;color:#1d2330}
#hint[hidden]{display:none}#hint code{font:13px ui-monospace,monospace;background:#fff;padding:0 4px;border-radius:4px}
</style></head>
<body><div id="hint" role="status"><b>Waiting for the Stately inspector</b> (<span id="queued">0</span> events queued).
It loads from <b>${escapeHtml(site)}</b>, so it needs the internet: offline, or if that site is blocked, it cannot
appear below. The agent's own visualizer page works offline: <code>visualize(agent)</code> in code, or
<code>agent-machine --visualize</code>.</div>
<iframe id="inspector" src="${escapeHtml(encodeURI(inspectorUrl))}"></iframe>
<script>
  const iframe = document.getElementById("inspector");
  const buffer = [];
  let connected = false;
  window.addEventListener("message", (e) => {
    if (e.source !== iframe.contentWindow) return;
    if (e.data && e.data.type === "@statelyai.connected") {
      connected = true;
      document.getElementById("hint").hidden = true;
      for (const event of buffer.splice(0)) iframe.contentWindow.postMessage(event, "*");
    }
  });
  const ws = new WebSocket(${JSON.stringify(wsUrl)});
  ws.onmessage = (event) => {
    const data = JSON.parse(event.data);
    if (connected) iframe.contentWindow.postMessage(data, "*");
    else {
      buffer.push(data);
      document.getElementById("queued").textContent = String(buffer.length);
    }
  };
</script></body></html>`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** An inspector wired to the Stately inspector. Pass `inspect` to `createAgent`, or `attach` an agent. */
export interface StatelyInspector {
  /** The XState inspection observer: `createAgent({ ..., inspect: inspector.inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  /** The page to open (the relay's bridge page), when this inspector started the relay. */
  readonly url?: string;
  /** The relay the events go to. */
  readonly relayUrl: string;
  /** Inspects an agent created without `inspect`: registers its actors now and follows the rest. Returns a detach function. */
  attach(agent: Agent): () => void;
  /** Sends what is still queued, disconnects and closes the relay it started, so the process can exit. */
  stop(): Promise<void>;
}

/** Options of {@link createStatelyInspector}. */
export interface StatelyInspectorOptions extends InspectorSanitizeOptions {
  /** Send to this relay (e.g. one from `createInspectorRelay`, or `@statelyai/inspect/server`) instead of starting one. */
  relayUrl?: string;
  /** Port of the relay this inspector starts; 0 (the default) picks a free one. */
  port?: number;
  /** The inspector UI the bridge page embeds. Default `https://stately.ai/inspect`. */
  inspectorUrl?: string;
}

/**
 * Connects agents to the Stately inspector from Node, through `@statelyai/inspect`: starts a local
 * relay (unless given `relayUrl`) and returns an inspection observer. The agent machine, its tool
 * execution and tool-call actors, its model stream and every agent that shares the observer
 * (sub-agents too) appear as actors. Contexts and events are sanitized: transcripts are cut, secrets
 * redacted. Opt-in: nothing is inspected unless you pass `inspect` or call `attach`.
 *
 * @example
 * ```ts
 * const inspector = await createStatelyInspector();
 * console.log(`Open ${inspector.url} to watch the agent`);
 * const agent = createAgent({ provider, tools, inspect: inspector.inspect });
 * await agent.prompt("Hi");
 * await inspector.stop();
 * ```
 */
export async function createStatelyInspector(
  options: StatelyInspectorOptions = {},
): Promise<StatelyInspector> {
  const { createInspector } = await import("@statelyai/inspect");
  const relay = options.relayUrl
    ? undefined
    : await createInspectorRelay({ port: options.port ?? 0, inspectorUrl: options.inspectorUrl });
  const relayUrl = options.relayUrl ?? relay!.wsUrl;
  const adapter = new RelaySocketAdapter(relayUrl, (await import("ws")).WebSocket);
  const sanitizers = inspectorSanitizers(options);
  const inspector = createInspector(adapter, { ...sanitizers, autoStart: false });
  inspector.start();
  const observer = shrinkingObserver(inspector.inspect, sanitizers);
  const detachers = new Set<() => void>();

  return {
    inspect: observer,
    ...(relay && { url: relay.url }),
    relayUrl,
    attach(agent) {
      let subscription: Subscription | undefined;
      const following: { stop?: () => void } = {};
      let detached = false;
      const detach = () => {
        detached = true;
        following.stop?.();
        subscription?.unsubscribe();
        detachers.delete(detach);
      };
      // Guarded as the agent's own `inspect` option is: XState calls it in the middle of delivering
      // an event, where an error would leave the run waiting for ever. One report, then detached.
      const guarded = guardInspector(observer, (error) => {
        inspectorFailure(agent.id)(error);
        detach();
      });
      // A hibernating agent wakes with a new actor (and actor system) each time: each one is followed.
      following.stop = followActors(agent, (actor) => {
        subscription?.unsubscribe();
        const rootId = actor.sessionId;
        const register = (actorRef: AnyActorRef) => {
          guarded.next?.({ type: "@xstate.actor", actorRef, rootId } as InspectionEvent);
          const children = (actorRef.getSnapshot() as { children?: Record<string, AnyActorRef> }).children;
          for (const child of Object.values(children ?? {})) register(child);
        };
        register(actor as unknown as AnyActorRef);
        subscription = actor.system.inspect(guarded);
      });
      if (detached) detach();
      else detachers.add(detach);
      return detach;
    },
    async stop() {
      for (const detach of [...detachers]) detach();
      // The inspector converts events in a zero-delay timer; let the last ones reach the adapter.
      await new Promise((resolve) => setTimeout(resolve, 5));
      await adapter.close();
      await relay?.close();
    },
  };
}

/**
 * The Node side of the inspector's transport: one WebSocket to the relay, events queued until it is
 * open (and while it reconnects), every event JSON-encoded with secrets redacted by key name. Unlike
 * the package's own WebSocket adapter, its retry timer never keeps the process alive and `close()`
 * flushes the queue first. It never throws: the inspector calls it from a timer, where an error
 * would end the process. An event it cannot encode is dropped; a send that throws drops the
 * connection, which is made again (the events meanwhile are queued); the first failure is reported
 * on the console.
 */
class RelaySocketAdapter {
  private socket: WebSocket | undefined;
  private queue: string[] = [];
  private stopped = false;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private reported = false;

  constructor(
    private readonly url: string,
    private readonly Socket: typeof WebSocket,
  ) {}

  start(): void {
    if (this.stopped || this.socket) return;
    const socket = new this.Socket(this.url);
    this.socket = socket;
    socket.on("open", () => this.flushTo(socket));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.socket = undefined;
      if (this.stopped) return;
      this.retry = setTimeout(() => this.start(), 1_000);
      this.retry.unref();
    });
  }

  stop(): void {
    void this.close();
  }

  send(event: StatelyInspectionEvent): void {
    if (this.stopped) return;
    let data: string;
    try {
      // The machine definition is one long string; contexts and events were already cut by the sanitizers.
      data = JSON.stringify(sanitizeInspectionEvent(event)) ?? "null";
    } catch (error) {
      return this.report("could not encode an inspection event (it is dropped)", error);
    }
    if (this.socket?.readyState === this.Socket.OPEN) this.transmit(this.socket, data);
    else {
      this.queue.push(data);
      if (this.queue.length > 5_000) this.queue.shift();
    }
  }

  async close(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retry);
    const socket = this.socket;
    if (!socket) return;
    if (socket.readyState === this.Socket.CONNECTING) {
      await new Promise<void>((resolve) => {
        socket.once("open", () => resolve());
        socket.once("close", () => resolve());
      });
    }
    this.flushTo(socket);
    if (socket.readyState === this.Socket.OPEN) {
      await new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        socket.close();
      });
    }
  }

  /** Sends what is queued, in order, while the socket takes it. */
  private flushTo(socket: WebSocket): void {
    while (this.queue.length > 0 && socket.readyState === this.Socket.OPEN) {
      if (!this.transmit(socket, this.queue.shift()!)) return;
    }
  }

  /** One send; a socket whose send throws is dropped (its `close` makes a new one). */
  private transmit(socket: WebSocket, data: string): boolean {
    try {
      socket.send(data);
      return true;
    } catch (error) {
      this.report("could not send to the relay (the connection is made again)", error);
      socket.terminate();
      return false;
    }
  }

  private report(what: string, error: unknown): void {
    if (this.reported) return;
    this.reported = true;
    console.error(
      `agent-machine: the Stately inspector ${what}; later failures are not reported: ${errorText(error)}`,
    );
  }
}
