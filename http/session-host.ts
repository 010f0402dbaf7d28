// The session host: one agent per thread behind a web-standard `Request => Response` handler.
// Protocols (the AI SDK UI message stream, AG-UI) add their routes; the host adds the side routes
// the protocols lack (steer, follow-up, abort, approve, deny, tool-result, status).
import type { Agent } from "../agent/agent.js";
import { agentHandle } from "../agent/agent-handle.js";
import { createAgent } from "../agent/create-agent.js";
import { AgentCallError, type AgentHandle } from "../core/agent-handle.js";
import type { AgentOptions } from "../core/options.js";
import { agUiProtocol } from "./ag-ui-protocol.js";
import { aiSdkProtocol } from "./ai-sdk-protocol.js";
import { handleBackend } from "./internal/handle-backend.js";
import { HostedThreadImpl } from "./internal/hosted-thread.js";
import { errorResponse, jsonResponse, readJsonBody } from "./internal/json.js";
import { logFailure } from "./internal/log-failure.js";
import { redactText } from "../core/redact.js";
import { checkJsonContentType, checkLoopbackHost, checkSameOrigin } from "./internal/request-guard.js";
import { matchRoute } from "./internal/router.js";
import type { ThreadBackend } from "./internal/thread-backend.js";
import { threadRoutes } from "./internal/thread-routes.js";
import { eventRoute } from "./internal/event-route.js";
import { type HostApi, type HostedThread, type HostProtocol, type HostRoute } from "./protocol.js";

/** Where the host keeps threads' snapshots between processes (default: nowhere, memory only). */
export interface ThreadStore {
  /** The thread's last saved snapshot, or `undefined` for a new thread. */
  load(threadId: string): unknown | Promise<unknown>;
  /** Called when a run ends or waits for the client, with `agent.getPersistedSnapshot()`. */
  save(threadId: string, snapshot: unknown): void | Promise<void>;
}

/**
 * Opens the agent of a thread: an {@link AgentHandle} per thread id (a durable session, an agent in
 * another process, one of your own), given the request that asks for it (after `authorize`).
 * Called when the host first needs the thread, and again after `maxThreads` dropped it.
 *
 * @example
 * ```ts
 * const threads: OpenThread = (threadId) => sessions.handle(threadId);
 * ```
 */
export type OpenThread = (threadId: string, request: Request) => AgentHandle | Promise<AgentHandle>;

/**
 * What serves the `durable` alias (the entry resolves it, so this file knows nothing of Restate):
 * a durable session's handle per thread, served as any `threads` handle is, and whether a thread
 * the host does not hold exists there (a session that never ran answers `status()` as idle, so
 * the handle alone cannot tell).
 */
export interface DurableThreads {
  open(threadId: string): Promise<AgentHandle>;
  exists(threadId: string): Promise<boolean>;
}

/** The options of `createSessionHost` but its `durable` alias (which the entry resolves). */
export interface ThreadHostOptions {
  /**
   * The options each thread's agent is created with, or a function of the thread id and the
   * request that creates it (per-user settings, a system prompt per thread). Threads hibernate
   * when idle unless the options say `hibernate: "manual"`. Give this, `threads` or `durable`.
   */
  agent?: AgentOptions | ((threadId: string, request: Request) => AgentOptions | Promise<AgentOptions>);
  /**
   * Serve agents that run elsewhere: a function of the thread id (and the request) that opens its
   * {@link AgentHandle} (a durable session's, one of your own). The host speaks only the handle's
   * contract; a thread it does not hold exists when the handle's `status()` does not refuse it with
   * a 404 `AgentCallError`. No `store` (the handle's side keeps the thread).
   */
  threads?: OpenThread;
  /** The path the routes live under, e.g. `"/api"` (default `""`). */
  basePath?: string;
  /**
   * The app's authentication, required: runs before anything of the thread is read or stored.
   * Return `false` and the request gets 403 and touches nothing. A host for this machine alone (a
   * local tool, a test) says so with `"none-local-only"`: it checks no identity and answers only
   * requests sent to a loopback name (`localhost`, `127.0.0.1`, `[::1]`; anything else gets 403
   * `not_loopback`, so a DNS-rebound page gets nothing). Without either, `createSessionHost` throws:
   * a host without an identity check would let anyone who knows a thread id read it and approve
   * its calls.
   */
  authorize: ((request: Request, threadId: string) => boolean | Promise<boolean>) | "none-local-only";
  /**
   * Origins of pages on other sites that may send state-changing requests (POST) to the host,
   * exactly as a browser's `Origin` header gives them, e.g. `["https://app.example.com"]`
   * (default: none, only the host's own origin). A request a browser marks as cross-site
   * (`Sec-Fetch-Site`, else `Origin`) from any other origin gets 403 `cross_site` before anything
   * is read. The CORS headers such a page also needs are your server's to send.
   */
  allowedOrigins?: readonly string[];
  /** The protocols served (default: both, `[aiSdkProtocol(), agUiProtocol()]`). */
  protocols?: readonly HostProtocol[];
  /**
   * Keeps threads' snapshots (loaded when a thread is first asked for, saved when a run settles).
   * In-process threads (`agent`) only: a handle's thread is kept on its side.
   */
  store?: ThreadStore;
  /** The largest request body read, in bytes (default 1 MB); larger ones get 413. */
  maxBodyBytes?: number;
  /**
   * The most one streaming response holds for a client that reads slower than the run writes
   * (bytes of events not yet taken by the client; default 1 MB). An event that comes while more
   * than that waits drops the response (the connection is cut, the run goes on); the client
   * reconnects and gets the response replayed from its start, as fast as it reads.
   */
  maxResponseBufferBytes?: number;
  /**
   * The most threads the host holds in memory (default: no bound, every thread it has seen).
   * Over it, the least recently used threads that rest (idle: no run going or waiting for an
   * answer, no response open) are saved to the `store` and dropped; the next request for one
   * loads it again, same transcript and ids. A thread that runs, waits for an approval or a
   * client-run tool's result, or streams is never dropped (the host holds more than the bound
   * while more than that many are busy). In-process threads need `store` for this (without it a
   * dropped thread would be lost); a handle's thread (`threads`) is opened again from there.
   */
  maxThreads?: number;
}

/** A session host: `handle` is the web-standard handler to mount. */
export interface SessionHost {
  /** Answers one request (routes under `basePath`; anything else is 404). */
  handle(request: Request): Promise<Response>;
  /**
   * A thread's agent, if the host holds it in this process (only for `agent` threads; not for a
   * thread `maxThreads` dropped, until a request brings it back: the dropped agent is stopped).
   */
  agent(threadId: string): Agent | undefined;
  /** Ends every open response and stops every agent. */
  close(): Promise<void>;
}

/**
 * The session host over `options` (the entry's `createSessionHost` resolves the `durable` alias into
 * `durable`).
 */
export function createThreadHost(options: ThreadHostOptions, durable?: DurableThreads): SessionHost {
  const sources = [options.agent, options.threads, durable].filter((source) => source !== undefined);
  if (sources.length !== 1) {
    throw new TypeError(
      "createSessionHost needs either agent (in-process threads), threads (an AgentHandle per thread id) " +
        "or durable (Restate sessions)",
    );
  }
  checkAuthorize(options.authorize);
  if (options.agent === undefined && options.store) {
    throw new TypeError(
      durable
        ? "a durable host keeps its threads in Restate: drop the store option"
        : "a host of handles (threads) keeps no snapshots: the handle's side keeps the thread; drop the store option",
    );
  }
  const maxThreads = options.maxThreads ?? Infinity;
  if (options.maxThreads !== undefined && !(Number.isInteger(maxThreads) && maxThreads > 0)) {
    throw new TypeError(`maxThreads must be a whole number above 0, got ${String(options.maxThreads)}`);
  }
  if (options.maxThreads !== undefined && options.agent !== undefined && !options.store) {
    throw new TypeError(
      "maxThreads drops resting threads from memory: give a store to keep them (without one they would be lost)",
    );
  }
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxResponseBufferBytes = options.maxResponseBufferBytes ?? 1024 * 1024;
  if (!(maxResponseBufferBytes > 0)) {
    throw new TypeError(
      `maxResponseBufferBytes must be above 0, got ${String(options.maxResponseBufferBytes)}`,
    );
  }
  const localOnly = options.authorize === "none-local-only";
  const authorize = typeof options.authorize === "function" ? options.authorize : undefined;
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(checkedOrigin));
  const threads = new Map<string, Promise<HostedThreadImpl>>();
  /** The threads made, least recently used first (a request moves its thread to the end). */
  const ready = new Map<string, HostedThreadImpl>();
  let uses = 0;
  const routes: HostRoute[] = [
    ...(options.protocols ?? [aiSdkProtocol(), agUiProtocol()]).flatMap((p) => p.routes),
    ...threadRoutes(),
    eventRoute(),
  ];

  const save = (thread: HostedThreadImpl): void => {
    if (options.store) {
      const snapshot = thread.agent.persistedSnapshot();
      Promise.resolve(options.store.save(thread.threadId, snapshot)).catch((error: unknown) => {
        console.error(`agent-machine/http: saving thread ${thread.threadId} failed`, error);
      });
    }
    // After the sinks closed: a thread whose run just ended may rest now.
    queueMicrotask(() => evictResting());
  };

  /** Threads being saved before they are dropped. */
  const evicting = new Set<string>();

  /**
   * Over `maxThreads`: drops the least recently used resting threads until within it (never
   * `spared`, a thread just made for the request at hand).
   */
  function evictResting(spared?: HostedThreadImpl): void {
    let over = ready.size - evicting.size - maxThreads;
    for (const thread of ready.values()) {
      if (over <= 0) return;
      if (thread === spared || evicting.has(thread.threadId) || !thread.resting) continue;
      over -= 1;
      void evict(thread);
    }
  }

  /**
   * Saves the thread's snapshot, then drops it, unless a request used it meanwhile or the save
   * failed (then it stays in memory).
   */
  async function evict(thread: HostedThreadImpl): Promise<void> {
    const { threadId } = thread;
    const used = thread.lastUsed;
    evicting.add(threadId);
    try {
      if (options.store) await options.store.save(threadId, thread.agent.persistedSnapshot());
    } catch (error) {
      console.error(`agent-machine/http: saving thread ${threadId} failed; it stays in memory`, error);
      return;
    } finally {
      evicting.delete(threadId);
    }
    if (thread.lastUsed !== used || !thread.resting || ready.get(threadId) !== thread) return;
    ready.delete(threadId);
    threads.delete(threadId);
    thread.dispose();
    thread.agent.stop();
  }

  const createLocal = async (threadId: string, request: Request): Promise<ThreadBackend> => {
    const agentOptions = options.agent!;
    const base = typeof agentOptions === "function" ? await agentOptions(threadId, request) : agentOptions;
    const snapshot = options.store ? await options.store.load(threadId) : undefined;
    const agent = createAgent({
      hibernate: "whenIdle",
      ...base,
      ...(snapshot !== undefined ? { snapshot } : {}),
    });
    return handleBackend(agentHandle(agent, { tools: base.tools ?? [] }), agent);
  };

  const openBackend = async (threadId: string, request: Request): Promise<ThreadBackend> => {
    if (durable) return handleBackend(await durable.open(threadId));
    if (options.threads) return handleBackend(await options.threads(threadId, request));
    return createLocal(threadId, request);
  };

  const createThread = async (
    threadId: string,
    request: Request,
    create: boolean,
  ): Promise<HostedThreadImpl> => {
    const backend = await openBackend(threadId, request);
    // Subscribed before the first look: a run found in progress is published then.
    const thread = new HostedThreadImpl(threadId, backend, save, {
      maxBufferedBytes: maxResponseBufferBytes,
    });
    try {
      await backend.refresh();
    } catch (error) {
      thread.dispose();
      backend.stop();
      // A handle that does not know the thread: unknown, unless this request creates it.
      if (error instanceof AgentCallError && error.status === 404 && !create) {
        throw new AgentCallError(404, "unknown_thread", `no thread ${threadId}`);
      }
      if (error instanceof AgentCallError || error instanceof AgentCallError) throw error;
      throw new AgentCallError(503, "unavailable", messageOf(error));
    }
    thread.adoptRun();
    thread.lastUsed = ++uses;
    ready.set(threadId, thread);
    evictResting(thread);
    return thread;
  };

  /**
   * Whether a thread the host does not hold may exist elsewhere (a stored snapshot, a durable
   * session; a handle's thread is asked when it is opened).
   */
  const existsElsewhere = async (threadId: string): Promise<boolean> => {
    if (durable) return durable.exists(threadId);
    if (options.threads) return true;
    return options.store ? (await options.store.load(threadId)) !== undefined : false;
  };

  /**
   * The thread, counted as used by a request until `release`: the most recently used, and not
   * dropped while the request handles it.
   */
  const hold = (thread: HostedThreadImpl, held: HostedThreadImpl[]): void => {
    thread.requests += 1;
    held.push(thread);
    thread.lastUsed = ++uses;
    if (ready.get(thread.threadId) === thread) {
      ready.delete(thread.threadId);
      ready.set(thread.threadId, thread);
    }
  };

  /** The host's API for one request; the threads it handed out are in `held`. */
  const hostFor = (held: HostedThreadImpl[]): HostApi => ({
    async thread(request, threadId, { create = false } = {}): Promise<HostedThread> {
      if (authorize && !(await authorize(request, threadId))) {
        throw new AgentCallError(403, "forbidden", "not allowed on this thread");
      }
      for (;;) {
        const known = threads.get(threadId);
        if (known) {
          const thread = await known;
          // Dropped (maxThreads) while this request waited: made again, from the store.
          if (threads.get(threadId) !== known) continue;
          hold(thread, held);
          await thread.agent.refresh();
          return thread;
        }
        if (!create && !(await existsElsewhere(threadId))) {
          throw new AgentCallError(404, "unknown_thread", `no thread ${threadId}`);
        }
        if (threads.has(threadId)) continue; // another request made it meanwhile
        const made = createThread(threadId, request, create);
        threads.set(threadId, made);
        made.catch(() => {
          if (threads.get(threadId) === made) threads.delete(threadId);
        });
        const thread = await made;
        if (threads.get(threadId) !== made) continue;
        hold(thread, held);
        return thread;
      }
    },
    readJson: (request) => readJsonBody(request, maxBodyBytes),
  });

  return {
    async handle(request) {
      const path = new URL(request.url).pathname;
      const held: HostedThreadImpl[] = [];
      try {
        if (localOnly) checkLoopbackHost(request);
        if (base && path !== base && !path.startsWith(`${base}/`)) return notFound();
        const match = matchRoute(routes, request.method, path.slice(base.length));
        if (match === "method") {
          throw new AgentCallError(405, "method_not_allowed", `${request.method} is not allowed here`);
        }
        if (!match) return notFound();
        // Before any route reads the body or a thread: a page on another site gets nothing applied.
        checkSameOrigin(request, allowedOrigins);
        if (request.method === "POST") checkJsonContentType(request);
        return await match.route.handle(request, match.params, hostFor(held));
      } catch (error) {
        if (error instanceof AgentCallError) return errorResponse(error);
        logFailure("agent-machine/http: a route failed", error);
        return errorResponse(new AgentCallError(500, "internal_error", "the request failed on the server"));
      } finally {
        for (const thread of held) thread.requests -= 1;
        if (held.length > 0 && ready.size > maxThreads) evictResting();
      }
    },
    agent: (threadId) => ready.get(threadId)?.agent.local,
    async close() {
      for (const thread of ready.values()) {
        thread.dispose();
        thread.agent.stop();
      }
      ready.clear();
      threads.clear();
    },
  };
}

/** Refuses a host with no identity check unless the app chose one for this machine alone. */
function checkAuthorize(authorize: unknown): void {
  if (typeof authorize === "function" || authorize === "none-local-only") return;
  throw new TypeError(
    authorize === undefined
      ? "createSessionHost needs authorize: (request, threadId) => boolean, your app's identity check " +
          "(without one anyone who knows a thread id could read it and approve its calls). For a host " +
          'this machine alone uses, say so: authorize: "none-local-only" (it then answers loopback requests only)'
      : `authorize must be a function (request, threadId) => boolean or "none-local-only", got ${JSON.stringify(authorize)}`,
  );
}

/** An `allowedOrigins` entry as a browser's `Origin` header gives it, or a TypeError saying what it lacks. */
function checkedOrigin(origin: string): string {
  let parsed: string | undefined;
  try {
    parsed = new URL(origin).origin;
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || parsed === "null" || parsed !== origin) {
    throw new TypeError(
      `allowedOrigins takes origins as browsers send them (scheme://host[:port], no path or trailing slash), got ${JSON.stringify(origin)}` +
        (parsed && parsed !== "null" ? `: did you mean ${JSON.stringify(parsed)}?` : ""),
    );
  }
  return origin;
}

function notFound(): Response {
  return jsonResponse({ error: { code: "not_found", message: "no such route" } }, 404);
}

function messageOf(error: unknown): string {
  // Told to the client: what the error says of where the agent lives (a URL's password) is not.
  return `the thread's agent cannot be reached: ${redactText(error instanceof Error ? error.message : String(error))}`;
}
