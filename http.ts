// agent-machine/http: agents behind the chat protocols existing frontends speak. A session host
// keeps one agent per thread and serves it over HTTP (a web-standard `Request => Response` handler,
// or Node's http server); protocol encoders (the AI SDK UI message stream, AG-UI) plug into it.
// See docs/frontends.md.

// Everything a page may also need (the message conversions, the encoders, the wire types) is
// browser-safe and has its own entry, agent-machine/protocols; this entry adds the host.
import type { SessionClient, SessionClientOptions } from "./durable/session-client.js";
import {
  createThreadHost,
  type DurableThreads,
  type SessionHost,
  type ThreadHostOptions,
} from "./http/session-host.js";

export * from "./protocols.js";
export type { HostApi, HostProtocol, HostRoute, ThreadAgent, ThreadInput } from "./http/protocol.js";
export type { OpenThread, SessionHost, ThreadStore } from "./http/session-host.js";
export type { AiSdkProtocolOptions } from "./http/ai-sdk-protocol.js";
export { aiSdkProtocol } from "./http/ai-sdk-protocol.js";
export type { FetchHandler, NodeServer, ServeNodeOptions } from "./http/node.js";
export { serveNode, toNodeListener } from "./http/node.js";
export { type AgUiProtocolOptions, agUiProtocol } from "./http/ag-ui-protocol.js";
export { agentMachineEncoder, agentMachineProtocol } from "./http/agent-machine-protocol.js";

// --- The host, and its `durable` alias (resolved here, so http/ itself knows nothing of Restate) ---

/**
 * Where the durable sessions a host serves live: Restate's ingress, as `createSessionClient`
 * takes it (`{ url, headers?, names? }`), with how often a thread with a run in progress polls it.
 *
 * @example
 * ```ts
 * const host = createSessionHost({ durable: { url: "http://127.0.0.1:8080", pollIntervalMs: 100 }, authorize });
 * ```
 */
export interface DurableHostOptions extends SessionClientOptions {
  /** Ms between two polls of a session while its run goes on (default 100). */
  pollIntervalMs?: number;
}

/** The options of {@link createSessionHost}. */
export interface SessionHostOptions extends ThreadHostOptions {
  /**
   * Serve durable sessions on Restate instead of agents in this process: thread id = session id,
   * runs go through the session client (`createSessionClient`, or its options) to the services
   * `createAgentServices` serves, wherever they run. What differs from in-process threads (text
   * per message, not per token): docs/frontends.md, "Durable threads".
   *
   * @deprecated Kept for one release as an alias: give `threads`, a function that opens the
   * durable session's AgentHandle per thread id, instead.
   */
  durable?: SessionClient | DurableHostOptions;
}

/**
 * Creates a session host: one agent per thread, served over HTTP. The agent of a thread is made
 * in this process from `agent`, or opened elsewhere by `threads` (an `AgentHandle` per thread id).
 *
 * @example
 * ```ts
 * const host = createSessionHost({
 *   agent: { provider, tools, systemPrompt: "You help with the weather." },
 *   basePath: "/api",
 *   // Your identity check: the signed-in user's threads only (userOf: undefined when signed out).
 *   authorize: (request, threadId) => {
 *     const user = userOf(request);
 *     return user !== undefined && threadId.startsWith(`${user}:`);
 *   },
 * });
 * export const POST = host.handle; // Next.js: app/api/[...path]/route.ts
 * export const GET = host.handle;
 * ```
 */
export function createSessionHost(options: SessionHostOptions): SessionHost {
  const { durable, ...rest } = options;
  return createThreadHost(rest, durable === undefined ? undefined : durableThreads(durable));
}

/** The `durable` alias: a durable session per thread, through the session client (loaded when used). */
function durableThreads(durable: SessionClient | DurableHostOptions): DurableThreads {
  const given = typeof (durable as SessionClient).updates === "function";
  const pollIntervalMs = given ? 100 : ((durable as DurableHostOptions).pollIntervalMs ?? 100);
  let opened: Promise<{
    client: SessionClient;
    backend: typeof import("./http/internal/durable-backend.js");
  }>;
  // Imported when used, so a host of in-process threads loads no Restate code.
  const open = () =>
    (opened ??= Promise.all([
      given
        ? (durable as SessionClient)
        : import("./durable/session-client.js").then((m) => {
            const { pollIntervalMs: _poll, ...clientOptions } = durable as DurableHostOptions;
            return m.createSessionClient(clientOptions);
          }),
      import("./http/internal/durable-backend.js"),
    ]).then(([client, backend]) => ({ client, backend })));
  return {
    async open(threadId) {
      const { client, backend } = await open();
      return backend.durableBackend(client, threadId, pollIntervalMs);
    },
    async exists(threadId) {
      const { client, backend } = await open();
      return client.status(threadId).then(
        () => true,
        (error: unknown) => {
          if ((error as { status?: number }).status === 404) return false;
          throw backend.unavailable(error);
        },
      );
    },
  };
}
