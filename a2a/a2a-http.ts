// An agent served over A2A (v1.0, JSON-RPC binding) as a web-standard `Request => Response`
// handler, mounted like the session host (serveNode / toNodeListener from agent-machine/http).
// The official SDK's request handler and task store do the protocol; this file does what listens:
// the agent card, the guards (an `authorize` hook or the explicit "none-local-only", JSON bodies
// by media type and within a size, no cross-site POST, a loopback Host when nothing checks
// identity), and the JSON-RPC answer or SSE stream.
import {
  A2A_VERSION_HEADER,
  type AgentCard,
  type AgentSkill,
  formatSSEEvent,
  type Message,
} from "@a2a-js/sdk";
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  UnauthenticatedUser,
  validateVersion,
} from "@a2a-js/sdk/server";
import type { Agent } from "../agent/agent.js";
import { agentHandle } from "../agent/agent-handle.js";
import type { AgentHandle } from "../core/agent-handle.js";
import { HostError } from "../http/protocol.js";
import { readJsonBody } from "../http/internal/json.js";
import { logFailure } from "../http/internal/log-failure.js";
import { pacedBody } from "../http/internal/paced-body.js";
import { checkLoopbackHost, checkSameOrigin } from "../http/internal/request-guard.js";
import { createA2aExecutor } from "./a2a-executor.js";

/**
 * Options of {@link createA2aHandler}.
 *
 * @example
 * ```ts
 * const options: A2aServerOptions = {
 *   card: { name: "researcher", description: "Researches a question" },
 *   agent: () => createAgent({ provider, tools }),
 *   authorize: (request) => request.headers.get("authorization") === `Bearer ${process.env.TOKEN}`,
 * };
 * ```
 */
export interface A2aServerOptions {
  /** What the agent card says of the agent. */
  card: {
    name: string;
    description: string;
    version?: string;
    skills?: Pick<AgentSkill, "id" | "name" | "description" | "tags">[];
  };
  /**
   * The agent of one A2A context (one conversation), asked once per new `contextId`: an agent in
   * this process, or any {@link AgentHandle}.
   */
  agent: (contextId: string) => Agent | AgentHandle | Promise<Agent | AgentHandle>;
  /**
   * Your identity check, run on every request but the agent card's; `false` answers 403. Or
   * `"none-local-only"` to say there is none: the handler then answers only requests sent to a
   * loopback name. Required: the handler refuses to start open.
   */
  authorize: ((request: Request) => boolean | Promise<boolean>) | "none-local-only";
  /** The endpoint's public URL, as the card gives it. Default: the URL the card was asked at, without the card's path. */
  url?: string;
  /** Origins besides the handler's own whose pages may call it (exact, e.g. `https://app.example.com`). */
  allowedOrigins?: readonly string[];
  /** Largest request body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * The most a streaming answer holds for a client that reads slower than the run writes (bytes of
   * events it has not taken; default 1 MiB). Past it the client is dropped (its connection is cut,
   * the run goes on and the task keeps its state for everyone); it resumes with `SubscribeToTask`.
   */
  maxResponseBufferBytes?: number;
  /**
   * Contexts (conversations) kept: beyond it the least recently used one without a task in
   * progress is forgotten, and a message in it later starts a new agent. Default 1000.
   */
  maxContexts?: number;
}

/** A web-standard handler with what it holds: close it to abort every run. */
export interface A2aHandler {
  (request: Request): Promise<Response>;
  /** The agent card served at `/.well-known/agent-card.json`, for a given endpoint URL. */
  card(url: string): AgentCard;
  /** Aborts every run. */
  close(): Promise<void>;
}

const CARD_PATH = "/.well-known/agent-card.json";
const PROTOCOL_VERSION = "1.0";

function checkAuthorize(authorize: unknown): void {
  if (typeof authorize === "function" || authorize === "none-local-only") return;
  throw new TypeError(
    authorize === undefined
      ? 'createA2aHandler needs authorize: (request) => boolean, your identity check; or, for an agent only this machine uses, authorize: "none-local-only" (it then answers loopback requests only)'
      : `authorize must be a function (request) => boolean or "none-local-only", got ${JSON.stringify(authorize)}`,
  );
}

/**
 * The agent card of an agent served at `url`.
 *
 * @example
 * ```ts
 * const card = agentCardOf({ name: "helper", description: "Helps" }, "http://127.0.0.1:3000/a2a");
 * ```
 */
export function agentCardOf(card: A2aServerOptions["card"], url: string): AgentCard {
  return {
    name: card.name,
    description: card.description,
    version: card.version ?? "0.0.0",
    supportedInterfaces: [{ url, protocolBinding: "JSONRPC", tenant: "", protocolVersion: PROTOCOL_VERSION }],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills: (card.skills ?? []).map((skill) => ({
      ...skill,
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    })),
    signatures: [],
  };
}

/**
 * Serves an agent over A2A v1.0 (JSON-RPC): `GET /.well-known/agent-card.json` answers the agent
 * card; `POST` at the endpoint takes `SendMessage` (a task: one run of the agent, answered when it
 * ends or waits for input), `SendStreamingMessage` (the task's status and artifact updates as
 * server-sent events), `GetTask`, `CancelTask` (aborts the run) and `SubscribeToTask`. An approval
 * is the `input-required` state, answered by a message on the same task. Tasks are kept in memory.
 *
 * @example
 * ```ts
 * import { serveNode } from "agent-machine/http";
 * const handler = createA2aHandler({ card, agent: () => createAgent({ provider }), authorize: "none-local-only" });
 * await serveNode(handler, { port: 3002 });
 * ```
 */
export function createA2aHandler(options: A2aServerOptions): A2aHandler {
  checkAuthorize(options.authorize);
  const { authorize } = options;
  const allowedOrigins = new Set(options.allowedOrigins ?? []);
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const maxResponseBufferBytes = options.maxResponseBufferBytes ?? 1024 * 1024;
  if (!(maxResponseBufferBytes > 0)) {
    throw new TypeError(
      `maxResponseBufferBytes must be above 0, got ${String(options.maxResponseBufferBytes)}`,
    );
  }
  const executor = createA2aExecutor({
    handleFor: async (contextId) => {
      const agent = await options.agent(contextId);
      return isAgentHandle(agent) ? agent : agentHandle(agent);
    },
    ...(options.maxContexts !== undefined && { maxContexts: options.maxContexts }),
  });
  let endpoint = options.url;
  const cardAt = (url: string) => agentCardOf(options.card, options.url ?? url);
  const requestHandler = new CheckedRequestHandler(
    // The card's URL is only read by the version check; the served card names the real one.
    cardAt(options.url ?? "http://127.0.0.1/"),
    new InMemoryTaskStore(),
    executor,
  );
  requestHandler.check = (message) => executor.checkMessage(message);
  const transport = new JsonRpcTransportHandler(requestHandler);

  const handler = async (request: Request): Promise<Response> => {
    try {
      if (authorize === "none-local-only") checkLoopbackHost(request);
      const url = new URL(request.url);
      if (request.method === "GET" && url.pathname.endsWith(CARD_PATH)) {
        const base = `${url.origin}${url.pathname.slice(0, -CARD_PATH.length)}`;
        endpoint ??= base;
        return Response.json(cardAt(base));
      }
      if (request.method !== "POST") {
        throw new HostError(405, "method_not_allowed", `${request.method} is not served here: POST JSON-RPC`);
      }
      checkSameOrigin(request, allowedOrigins);
      if (typeof authorize === "function" && !(await authorize(request))) {
        throw new HostError(403, "forbidden", "not allowed");
      }
      let body: unknown;
      try {
        body = await readJsonBody(request, maxBodyBytes);
      } catch (error) {
        if (error instanceof HostError && error.status === 400) return rpcError(null, -32700, error.message);
        throw error;
      }
      return await answer(body, request);
    } catch (error) {
      if (error instanceof HostError) {
        return Response.json(
          { error: { code: error.code, message: error.message } },
          { status: error.status },
        );
      }
      logFailure("agent-machine/a2a: a request failed", error);
      return rpcError(null, -32603, "the request failed on the server");
    }
  };

  const answer = async (body: unknown, request: Request): Promise<Response> => {
    const id = rpcId(body);
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: new UnauthenticatedUser(),
      headers: headerRecord(request.headers),
      requestedVersion: request.headers.get(A2A_VERSION_HEADER) ?? undefined,
    });
    try {
      // A request without the A2A-Version header is taken for v0.3 (the spec's rule), which is not served.
      validateVersion(context.requestedVersion, await requestHandler.getAgentCard(), "JSONRPC");
    } catch (error) {
      return Response.json({ jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    const result = await transport.handle(body as Record<string, unknown>, context);
    if (!(Symbol.asyncIterator in (result as object))) return Response.json(result);
    const stream = result as AsyncGenerator<unknown, void, undefined>;
    // Read as the run goes, not as the client reads: the SDK updates the task store as its stream
    // is read, so a client that reads slowly (or not at all) would hold the task's state back from
    // everyone else (an approval others cannot give while the task still reads "working").
    return new Response(pacedBody(sseFrames(stream, id), maxResponseBufferBytes), {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    });
  };

  return Object.assign(handler, {
    card: (url: string) => cardAt(url),
    close: () => executor.close(),
  });
}

/**
 * The SDK's request handler, refusing (before anything changes) a message on an input-required
 * task that carries no valid decision: the SDK would run the executor, and the task would fail.
 */
class CheckedRequestHandler extends DefaultRequestHandler {
  check: (message: Message | undefined) => () => void = () => () => {};
  override async sendMessage(...args: Parameters<DefaultRequestHandler["sendMessage"]>) {
    const release = this.check(args[0].message);
    try {
      return await super.sendMessage(...args);
    } finally {
      release();
    }
  }
  override async *sendMessageStream(...args: Parameters<DefaultRequestHandler["sendMessageStream"]>) {
    const release = this.check(args[0].message);
    try {
      yield* super.sendMessageStream(...args);
    } finally {
      release();
    }
  }
}

/** The SDK's stream as server-sent event frames; a failure ends it with a JSON-RPC error frame. */
async function* sseFrames(
  stream: AsyncGenerator<unknown, void, undefined>,
  id: string | number | null,
): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder();
  try {
    for await (const value of stream) yield encoder.encode(formatSSEEvent(value));
  } catch (error) {
    const failure = { jsonrpc: "2.0", id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) };
    yield encoder.encode(formatSSEEvent(failure));
  }
}

/** Whether `value` is an AgentHandle (it has `run`) rather than an Agent (which has `prompt`). */
function isAgentHandle(value: Agent | AgentHandle): value is AgentHandle {
  return typeof (value as Partial<AgentHandle>).run === "function";
}

function headerRecord(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

function rpcId(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === "string" || typeof id === "number" ? id : null;
}

function rpcError(id: string | number | null, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", id, error: { code, message } });
}
