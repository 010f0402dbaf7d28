// The session host: one agent per thread behind a web-standard `Request => Response` handler.
// Protocols (the AI SDK UI message stream, AG-UI) add their routes; the host adds the side routes
// the protocols lack (steer, follow-up, abort, approve, deny, tool-result, status).
import type { Agent } from "../agent/agent.js";
import { createAgent } from "../agent/create-agent.js";
import type { AgentOptions } from "../core/options.js";
import { agUiProtocol } from "./ag-ui-protocol.js";
import { aiSdkProtocol } from "./ai-sdk-protocol.js";
import { HostedThreadImpl } from "./internal/hosted-thread.js";
import { errorResponse, jsonResponse, readJsonBody } from "./internal/json.js";
import { matchRoute } from "./internal/router.js";
import { threadRoutes } from "./internal/thread-routes.js";
import { type HostApi, type HostedThread, HostError, type HostProtocol, type HostRoute } from "./protocol.js";

/** Where the host keeps threads' snapshots between processes (default: nowhere, memory only). */
export interface ThreadStore {
  /** The thread's last saved snapshot, or `undefined` for a new thread. */
  load(threadId: string): unknown | Promise<unknown>;
  /** Called when a run ends or waits for the client, with `agent.getPersistedSnapshot()`. */
  save(threadId: string, snapshot: unknown): void | Promise<void>;
}

export interface SessionHostOptions {
  /**
   * The options each thread's agent is created with, or a function of the thread id and the
   * request that creates it (per-user settings, a system prompt per thread). Threads hibernate
   * when idle unless the options say `hibernate: "manual"`.
   */
  agent: AgentOptions | ((threadId: string, request: Request) => AgentOptions | Promise<AgentOptions>);
  /** The path the routes live under, e.g. `"/api"` (default `""`). */
  basePath?: string;
  /**
   * The app's authentication: runs before anything of the thread is read or stored. Return
   * `false` and the request gets 403 and touches nothing.
   */
  authorize?: (request: Request, threadId: string) => boolean | Promise<boolean>;
  /** The protocols served (default: both, `[aiSdkProtocol(), agUiProtocol()]`). */
  protocols?: readonly HostProtocol[];
  /** Keeps threads' snapshots (loaded when a thread is first asked for, saved when a run settles). */
  store?: ThreadStore;
  /** The largest request body read, in bytes (default 1 MB); larger ones get 413. */
  maxBodyBytes?: number;
}

/** A session host: `handle` is the web-standard handler to mount. */
export interface SessionHost {
  /** Answers one request (routes under `basePath`; anything else is 404). */
  handle(request: Request): Promise<Response>;
  /** A thread's agent, if the host holds it (for the app's own code and tests). */
  agent(threadId: string): Agent | undefined;
  /** Ends every open response and stops every agent. */
  close(): Promise<void>;
}

/**
 * Creates a session host: one agent per thread, served over HTTP.
 *
 * @example
 * ```ts
 * const host = createSessionHost({
 *   agent: { provider, tools, systemPrompt: "You help with the weather." },
 *   basePath: "/api",
 *   authorize: (request, threadId) => threadId.startsWith(userOf(request) + ":"),
 * });
 * export const POST = host.handle; // Next.js: app/api/[...path]/route.ts
 * export const GET = host.handle;
 * ```
 */
export function createSessionHost(options: SessionHostOptions): SessionHost {
  const base = (options.basePath ?? "").replace(/\/+$/, "");
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const threads = new Map<string, Promise<HostedThreadImpl>>();
  const ready = new Map<string, HostedThreadImpl>();
  const routes: HostRoute[] = [
    ...(options.protocols ?? [aiSdkProtocol(), agUiProtocol()]).flatMap((p) => p.routes),
    ...threadRoutes(),
  ];

  const save = (thread: HostedThreadImpl): void => {
    if (!options.store) return;
    const snapshot = thread.agent.getPersistedSnapshot();
    Promise.resolve(options.store.save(thread.threadId, snapshot)).catch((error: unknown) => {
      console.error(`agent-machine/http: saving thread ${thread.threadId} failed`, error);
    });
  };

  const createThread = async (threadId: string, request: Request): Promise<HostedThreadImpl> => {
    const base = typeof options.agent === "function" ? await options.agent(threadId, request) : options.agent;
    const snapshot = options.store ? await options.store.load(threadId) : undefined;
    const agent = createAgent({
      hibernate: "whenIdle",
      ...base,
      ...(snapshot !== undefined ? { snapshot } : {}),
    });
    const thread = new HostedThreadImpl(threadId, agent, save);
    ready.set(threadId, thread);
    return thread;
  };

  const host: HostApi = {
    async thread(request, threadId, { create = false } = {}): Promise<HostedThread> {
      if (options.authorize && !(await options.authorize(request, threadId))) {
        throw new HostError(403, "forbidden", "not allowed on this thread");
      }
      const known = threads.get(threadId);
      if (known) return known;
      if (!create) {
        const stored = options.store ? await options.store.load(threadId) : undefined;
        if (stored === undefined) throw new HostError(404, "unknown_thread", `no thread ${threadId}`);
      }
      const made = createThread(threadId, request);
      threads.set(threadId, made);
      made.catch(() => threads.delete(threadId));
      return made;
    },
    readJson: (request) => readJsonBody(request, maxBodyBytes),
  };

  return {
    async handle(request) {
      const path = new URL(request.url).pathname;
      if (base && path !== base && !path.startsWith(`${base}/`)) return notFound();
      const match = matchRoute(routes, request.method, path.slice(base.length));
      if (match === "method") {
        return errorResponse(
          new HostError(405, "method_not_allowed", `${request.method} is not allowed here`),
        );
      }
      if (!match) return notFound();
      try {
        return await match.route.handle(request, match.params, host);
      } catch (error) {
        if (error instanceof HostError) return errorResponse(error);
        console.error("agent-machine/http: a route failed", error);
        return errorResponse(new HostError(500, "internal_error", "the request failed on the server"));
      }
    },
    agent: (threadId) => ready.get(threadId)?.agent,
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

function notFound(): Response {
  return jsonResponse({ error: { code: "not_found", message: "no such route" } }, 404);
}
