// agent-machine/http: agents behind the chat protocols existing frontends speak. A session host
// keeps one agent per thread and serves it over HTTP (a web-standard `Request => Response` handler,
// or Node's http server); protocol encoders (the AI SDK UI message stream, AG-UI) plug into it.
// See docs/frontends.md.

// Everything a page may also need (the message conversions, the encoders, the wire types) is
// browser-safe and has its own entry, agent-machine/protocols; this entry adds the host.
import { AgentCallError, type AgentHandle } from "./core/agent-handle.js";
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
  /**
   * The live channels of the processes serving the sessions (`serveAgents`' `server.liveUrl`): a
   * thread's text streams token by token from the process running its run. Without them, or while
   * none answers, a thread's events are the committed ones read from Restate (text per message).
   */
  live?: readonly string[];
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

/**
 * The `durable` alias: a durable session's handle per thread (`durableHandle`), served by the host as
 * any `threads` handle is. Loaded when used, so a host of in-process threads loads no Restate code.
 */
function durableThreads(durable: SessionClient | DurableHostOptions): DurableThreads {
  const given = typeof (durable as SessionClient).updates === "function";
  const { pollIntervalMs = 100, live = [] } = given ? {} : (durable as DurableHostOptions);
  let opened: Promise<{
    client: SessionClient;
    durableHandle: typeof import("./durable/durable-handle.js").durableHandle;
    unavailable: typeof import("./durable/session-follower.js").unavailable;
  }>;
  const open = () =>
    (opened ??= Promise.all([
      given
        ? (durable as SessionClient)
        : import("./durable/session-client.js").then((m) => {
            const { pollIntervalMs: _poll, live: _live, ...clientOptions } = durable as DurableHostOptions;
            return m.createSessionClient(clientOptions);
          }),
      import("./durable/durable-handle.js"),
      import("./durable/session-follower.js"),
    ]).then(([client, handle, follower]) => ({
      client,
      durableHandle: handle.durableHandle,
      unavailable: follower.unavailable,
    })));
  return {
    async open(threadId) {
      const { client, durableHandle } = await open();
      return withAliasErrors(durableHandle(client, threadId, { pollIntervalMs, live }));
    },
    async exists(threadId) {
      const { client, unavailable } = await open();
      return client.status(threadId).then(
        () => true,
        (error: unknown) => {
          if ((error as { status?: number }).status === 404) return false;
          throw unavailable(error);
        },
      );
    },
  };
}

/**
 * The alias's handle with the refusals the `durable` option has always answered: a call that does
 * not wait (or a session Restate does not know) is a 409 `refused`, and a run Restate would not
 * start is refused (400 `run_refused`), not a 503. `threads` handles answer the contract's own codes.
 */
function withAliasErrors(handle: AgentHandle): AgentHandle {
  const told =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>, refusedRun = false) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args);
      } catch (error) {
        if (!(error instanceof AgentCallError)) throw error;
        if (error.code === "not_found") throw new AgentCallError(409, "refused", error.message);
        if (refusedRun && error.code === "unavailable")
          throw new AgentCallError(400, "refused", error.message);
        throw error;
      }
    };
  return {
    id: handle.id,
    status: () => handle.status(),
    messages: () => handle.messages(),
    eventsSince: (runId, seq) => handle.eventsSince(runId, seq),
    run: told((message, options) => handle.run(message, options), true),
    steer: told((message) => handle.steer(message)),
    followUp: told((message) => handle.followUp(message)),
    check: told((answers) => handle.check(answers)),
    answer: told((answers) => handle.answer(answers)),
    abort: told(() => handle.abort()),
  };
}
