// The agents' MCP server over Streamable HTTP, as a web-standard `Request => Response` handler (the
// session host's shape: serveNode / toNodeListener from agent-machine/http mount it). Guarded as
// the session host is: an `authorize` hook or the explicit "none-local-only", JSON bodies by media
// type, no cross-site state changes, a loopback Host when nothing checks identity.
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { isLegacyRequest } from "@modelcontextprotocol/server";
import { logFailure } from "../http/internal/log-failure.js";
import { checkJsonContentType, checkLoopbackHost, checkSameOrigin } from "../http/internal/request-guard.js";
import { createMcpAgentServer, type McpAgentServerOptions, type McpAgentTool } from "./serve-mcp.js";
import { authInfoOf, createModernMcpHandler, type McpTaskOptions } from "./modern-mcp.js";
import { LOCAL_PRINCIPAL, type McpAuthorization, principalOfRequest } from "./mcp-principal.js";
import { AgentCallError } from "../core/agent-handle.js";

/**
 * Options of {@link createMcpHttpHandler}.
 *
 * @example
 * ```ts
 * const options: McpHttpOptions = {
 *   agents: { helper: { description: "Helps", create: () => createAgent({ provider }) } },
 *   authorize: (request) => request.headers.get("authorization") === `Bearer ${process.env.TOKEN}`,
 * };
 * ```
 */
export interface McpHttpOptions extends McpAgentServerOptions {
  agents: Record<string, McpAgentTool>;
  /**
   * Your identity check, run on every request: `false` answers 403; a principal (`"alice"` or
   * `{ principal: "alice" }`) admits the request as that caller, and binds the MCP Tasks and
   * sessions it creates to it (another principal is answered as for an unknown one); `true` binds
   * them to the credentials the request presented (see `principalOfRequest`). Or
   * `"none-local-only"` to say there is none: the handler then answers only requests sent to a
   * loopback name. Required: the handler refuses to start open.
   */
  authorize: ((request: Request) => McpAuthorization | Promise<McpAuthorization>) | "none-local-only";
  /** Origins besides the handler's own whose pages may call it (exact, e.g. `https://app.example.com`). */
  allowedOrigins?: readonly string[];
  /** When a call becomes an MCP Task (2026-07-28 clients that declare the Tasks extension), and how long tasks are kept. */
  tasks?: McpTaskOptions;
  /**
   * The 2025-era MCP sessions kept per caller (principal; default 100). A client that goes away
   * without ending its session (most do) would otherwise leave it held for the process's life;
   * past the bound the caller's least recently used session is closed (a call running in it is
   * aborted), and its client, answered 404, starts a new one as the spec says.
   */
  maxSessions?: number;
}

/** A web-standard handler with what it holds: close it to end every MCP session. */
export interface McpHttpHandler {
  (request: Request): Promise<Response>;
  /** Closes every MCP session (running calls are aborted). */
  close(): Promise<void>;
}

/**
 * Serves `agents` over MCP's Streamable HTTP transport (stateful: each client gets an
 * `mcp-session-id`, so elicitations and cancellations reach the call they belong to). An unknown
 * session id answers 404 (the client starts a new session, as the spec says).
 *
 * @example
 * ```ts
 * import { serveNode } from "agent-machine/http";
 * const handler = createMcpHttpHandler({ agents, authorize: "none-local-only" });
 * serveNode(handler, { port: 3001 });
 * ```
 */
export function createMcpHttpHandler(options: McpHttpOptions): McpHttpHandler {
  const { authorize } = options;
  if (typeof authorize !== "function" && authorize !== "none-local-only") {
    throw new TypeError(
      authorize === undefined
        ? 'createMcpHttpHandler needs authorize: (request) => boolean, your identity check; or, for a server only this machine uses, authorize: "none-local-only" (it then answers loopback requests only)'
        : `authorize must be a function (request) => boolean or "none-local-only", got ${JSON.stringify(authorize)}`,
    );
  }
  const allowedOrigins = new Set(options.allowedOrigins ?? []);
  const maxSessions = options.maxSessions ?? 100;
  if (!(Number.isInteger(maxSessions) && maxSessions > 0)) {
    throw new TypeError(`maxSessions must be a whole number above 0, got ${String(options.maxSessions)}`);
  }
  // Each 2025-era session with the principal that opened it (another principal's request for it is
  // answered as for an unknown session), least recently used first.
  const sessions = new Map<string, Session>();
  const modern = createModernMcpHandler(options.agents, options);

  const handler = async (request: Request): Promise<Response> => {
    try {
      if (authorize === "none-local-only") checkLoopbackHost(request);
      checkSameOrigin(request, allowedOrigins);
      if (request.method === "POST") checkJsonContentType(request);
      const principal =
        typeof authorize === "function"
          ? principalOfRequest(await authorize(request), request)
          : LOCAL_PRINCIPAL;
      if (principal === undefined) throw new AgentCallError(403, "forbidden", "not allowed");
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId === null && (await isModernRequest(request))) {
        return await modern.fetch(request, { authInfo: authInfoOf(principal) });
      }
      if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (session?.principal !== principal) {
          return jsonRpcError(404, -32001, `No MCP session ${sessionId}: initialize a new one`);
        }
        sessions.delete(sessionId);
        sessions.set(sessionId, session);
        return await session.transport.handleRequest(request);
      }
      if (request.method !== "POST") return jsonRpcError(400, -32000, "No mcp-session-id: initialize first");
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, principal });
            closeLeastRecentlyUsed(sessions, principal, maxSessions);
          },
          onsessionclosed: (id) => void sessions.delete(id),
        });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createMcpAgentServer(options.agents, options).connect(transport);
      return await transport.handleRequest(request);
    } catch (error) {
      if (error instanceof AgentCallError) {
        return Response.json(
          { error: { code: error.code, message: error.message } },
          { status: error.status },
        );
      }
      // What failed stays in the server's log (redacted): an error's text may hold what the
      // request carried (a token an authorize hook quoted) or what the server holds.
      logFailure("agent-machine/mcp-server: a request failed", error);
      return jsonRpcError(500, -32603, "the request failed on the server");
    }
  };
  return Object.assign(handler, {
    async close() {
      for (const { transport } of [...sessions.values()]) await transport.close();
      sessions.clear();
      await modern.close();
    },
  });
}

/** A 2025-era MCP session and the principal that opened it. */
interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  principal: string;
}

/** Closes `principal`'s least recently used sessions beyond `max` (`sessions` is in order of use). */
function closeLeastRecentlyUsed(sessions: Map<string, Session>, principal: string, max: number): void {
  const own = [...sessions].filter(([, session]) => session.principal === principal);
  for (const [id, session] of own.slice(0, Math.max(0, own.length - max))) {
    sessions.delete(id);
    void session.transport.close().catch(() => undefined);
  }
}

/**
 * Whether a request speaks the 2026-07-28 revision (served statelessly by the v2 SDK) rather than an
 * older one (served with sessions). Its `MCP-Protocol-Version` header says so when it has one; a
 * request without (a client's first, `server/discover` or `initialize`) is read by the SDK.
 */
async function isModernRequest(request: Request): Promise<boolean> {
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null) return version >= "2026-07-28";
  if (request.method !== "POST") return false;
  return !(await isLegacyRequest(request));
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}
