// Serves agents over the Agent Client Protocol (ACP): an editor (Zed, JetBrains) or a harness
// (the AI SDK's HarnessAgent) drives them as it drives any coding agent. Built on the in-process
// agent behind `AcpAgentSource`, a small adapter: where sessions come from is the app's business
// (the `agent-machine acp` command keeps them in its session store).
import { isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";
import {
  agent as acpAgent,
  type AgentConnection,
  type ClientCapabilities,
  type AgentContext,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type RequestPermissionRequest,
  type SessionUpdate,
  type Stream,
} from "@agentclientprotocol/sdk";
import type { Subscription } from "rxjs";
import type { Agent } from "../agent/agent.js";
import type { AcpClientAccess } from "./client-tools.js";
import { acpHistory, acpStopReason, acpToolCall, acpUpdateOf, promptFromAcp } from "./acp-updates.js";

/**
 * One session served over ACP: its id (what the client names it by), the agent that runs its
 * prompts, and the directory its paths are relative to.
 */
export interface AcpSession {
  id: string;
  agent: Agent;
  cwd: string;
  /** Called when the client closes the session or the connection ends (save it, stop the agent). */
  close?(): void | Promise<void>;
}

/**
 * Where the sessions an ACP server serves come from: the adapter between ACP and an app's agents.
 */
export interface AcpAgentSource {
  /**
   * A new session in `cwd` (an absolute path the client chose). `client` is what the client offers
   * this session (its file system, its terminal): give it to `withAcpClient` for the tools.
   */
  newSession(request: { cwd: string; client: AcpClientAccess }): AcpSession | Promise<AcpSession>;
  /**
   * An earlier session by id, for `session/load` and `session/resume`; `undefined` when there is
   * none (the client gets ACP's "resource not found"). Without it, sessions cannot be loaded.
   */
  loadSession?(request: {
    sessionId: string;
    cwd: string;
    client: AcpClientAccess;
  }): AcpSession | undefined | Promise<AcpSession | undefined>;
}

/**
 * Options of {@link serveAcp}.
 *
 * @example
 * ```ts
 * const options: ServeAcpOptions = { name: "my-agent", version: "1.0.0" };
 * ```
 */
export interface ServeAcpOptions {
  /** The transport: stdin/stdout as newline-delimited JSON by default. */
  stream?: Stream;
  /** The agent's name and version in `initialize`'s `agentInfo`. */
  name?: string;
  version?: string;
}

/** The live state of one session on this connection. */
interface ServedSession {
  session: AcpSession;
  subscription: Subscription;
  prompting: boolean;
}

/**
 * Serves `source`'s agents over ACP. Each `session/prompt` runs a prompt: text and thinking stream
 * as message chunks, tool calls as `tool_call` / `tool_call_update` (edits with their diff), each
 * approval the agent asks for as `session/request_permission` (the editor's answer approves or
 * denies the call), `session/cancel` aborts the run. When the connection ends, running prompts are
 * aborted and every session closed, so a client that went away leaves sessions that can be loaded.
 *
 * @example
 * ```ts
 * import { createAgent } from "agent-machine";
 * import { serveAcp } from "agent-machine/acp";
 *
 * const connection = serveAcp({
 *   newSession: ({ cwd }) => ({ id: crypto.randomUUID(), cwd, agent: createAgent({ provider }) }),
 * });
 * await connection.closed;
 * ```
 */
export function serveAcp(source: AcpAgentSource, options: ServeAcpOptions = {}): AgentConnection {
  const sessions = new Map<string, ServedSession>();
  let client: AgentContext | undefined;
  let capabilities: ClientCapabilities = {};

  /** What the client offers the session `sessionId()` names (known once the source has made it). */
  const access = (sessionId: () => string): AcpClientAccess => ({
    ...(capabilities.fs?.readTextFile && {
      readTextFile: async (path: string) =>
        (await client!.request("fs/read_text_file", { sessionId: sessionId(), path })).content,
    }),
    ...(capabilities.fs?.writeTextFile && {
      writeTextFile: async (path: string, content: string) => {
        await client!.request("fs/write_text_file", { sessionId: sessionId(), path, content });
      },
    }),
    ...(capabilities.terminal && {
      createTerminal: (request: Parameters<NonNullable<AcpClientAccess["createTerminal"]>>[0]) =>
        client!.createTerminal({ ...request, sessionId: sessionId() }),
    }),
  });

  const send = (sessionId: string, update: SessionUpdate) =>
    // The connection may be gone (the client quit): the agent goes on and its session is saved.
    client?.notify("session/update", { sessionId, update }).catch(() => {});

  const serve = (session: AcpSession): ServedSession => {
    const served: ServedSession = {
      session,
      prompting: false,
      subscription: session.agent.events$.subscribe((event) => {
        if (event.type === "approval_requested") {
          void askPermission(session, event.toolCallId, event.toolName, event.args);
          return;
        }
        const update = acpUpdateOf(event, session.cwd);
        if (update) void send(session.id, update);
      }),
    };
    sessions.set(session.id, served);
    return served;
  };

  const askPermission = async (session: AcpSession, toolCallId: string, toolName: string, args: unknown) => {
    let approved = false;
    let reason = "The user refused this call.";
    try {
      const request: RequestPermissionRequest = {
        sessionId: session.id,
        toolCall: { ...acpToolCall(toolCallId, toolName, args, session.cwd), status: "pending" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      };
      const answer = await client!.request("session/request_permission", request);
      approved = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
      if (answer.outcome.outcome === "cancelled") reason = "The prompt turn was cancelled.";
    } catch (error) {
      // The connection ended, or the editor answered with an error (it has no permission dialog).
      reason = `The editor could not be asked: ${error instanceof Error ? error.message : String(error)}`;
    }
    try {
      if (approved) session.agent.approve(toolCallId);
      else session.agent.deny(toolCallId, reason);
    } catch {
      // Already decided: a cancel aborted the run and answered the call.
    }
  };

  const served = (sessionId: string): ServedSession => {
    const found = sessions.get(sessionId);
    if (!found) throw RequestError.sessionNotFound(sessionId);
    return found;
  };

  const load = async (sessionId: string, cwd: string): Promise<ServedSession> => {
    const open = sessions.get(sessionId);
    if (open) return open;
    if (!source.loadSession) throw RequestError.methodNotFound("session/load");
    let session: AcpSession | undefined;
    try {
      session = await source.loadSession({ sessionId, cwd, client: access(() => sessionId) });
    } catch (error) {
      throw RequestError.invalidParams(undefined, (error as Error).message);
    }
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return serve(session);
  };

  const app = acpAgent({ name: options.name ?? "agent-machine" })
    .onRequest("initialize", ({ params }) => {
      // What the client offers (its file system, its terminal) decides how the sessions' tools do I/O.
      capabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
        agentCapabilities: {
          loadSession: source.loadSession !== undefined,
          promptCapabilities: { image: true, embeddedContext: true },
          sessionCapabilities: {
            close: {},
            ...(source.loadSession && { resume: {} }),
          },
        },
        agentInfo: { name: options.name ?? "agent-machine", version: options.version ?? "0.0.0" },
        authMethods: [],
      };
    })
    .onRequest("session/new", async ({ params }) => {
      // ACP's rule: the session's paths are relative to it, so a relative one means nothing here.
      if (!isAbsolute(params.cwd)) {
        throw RequestError.invalidParams(
          undefined,
          `cwd must be an absolute path, got ${JSON.stringify(params.cwd)}`,
        );
      }
      // The client is asked in the session's name, which the source is about to choose.
      const named = { id: "" };
      let session: AcpSession;
      try {
        session = await source.newSession({ cwd: params.cwd, client: access(() => named.id) });
      } catch (error) {
        // The app refused the session (a folder that does not exist): the client's request, as for load.
        throw RequestError.invalidParams(undefined, (error as Error).message);
      }
      named.id = session.id;
      serve(session);
      return { sessionId: session.id };
    })
    .onRequest("session/load", async ({ params }) => {
      const { session } = await load(params.sessionId, params.cwd);
      for (const update of acpHistory(session.agent.messages, session.cwd)) await send(session.id, update);
      return {};
    })
    .onRequest("session/resume", async ({ params }) => {
      await load(params.sessionId, params.cwd);
      return {};
    })
    .onRequest("session/close", async ({ params }) => {
      const found = served(params.sessionId);
      await closeSession(found);
      return {};
    })
    .onRequest("session/prompt", async ({ params }) => {
      const found = served(params.sessionId);
      if (found.prompting || found.session.agent.state !== "idle") {
        throw RequestError.invalidRequest(undefined, "A prompt turn is already running in this session");
      }
      let input: ReturnType<typeof promptFromAcp>;
      try {
        input = promptFromAcp(params.prompt);
      } catch (error) {
        throw RequestError.invalidParams(undefined, (error as Error).message);
      }
      found.prompting = true;
      try {
        const outcome = await found.session.agent.prompt(input);
        const stopReason = acpStopReason(outcome.reason);
        if (!stopReason)
          throw RequestError.internalError(undefined, outcome.errorMessage ?? "The run failed");
        return { stopReason };
      } finally {
        found.prompting = false;
      }
    })
    .onNotification("session/cancel", ({ params }) => {
      sessions.get(params.sessionId)?.session.agent.abort();
    });

  const closeSession = async (found: ServedSession) => {
    sessions.delete(found.session.id);
    found.subscription.unsubscribe();
    if (found.session.agent.state !== "idle") {
      found.session.agent.abort();
      await found.session.agent.waitForIdle();
    }
    await found.session.close?.();
  };

  app.onConnect((connection) => {
    client = connection.client;
  });
  const connection = app.connect(options.stream ?? stdioStream());
  void connection.closed.then(async () => {
    // The client went away: stop what runs, so each session rests saved and can be loaded again.
    for (const found of [...sessions.values()]) await closeSession(found).catch(() => {});
  });
  return connection;
}

/** ACP over this process's stdin and stdout (newline-delimited JSON-RPC). */
function stdioStream(): Stream {
  return ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
}
