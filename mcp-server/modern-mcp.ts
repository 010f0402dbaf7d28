// The agents' MCP server on the 2026-07-28 revision (the v2 SDK's `createMcpHandler`, stateless per
// request): a call's approvals are asked in band (an `input_required` result with an elicitation,
// the run waiting for the client's retry), and a long run, or one waiting for approval, becomes a
// Task of the Tasks extension (`io.modelcontextprotocol/tasks`) when the client declares it.
import {
  createMcpHandler,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type AuthInfo,
  type CallToolResult,
  type McpRequestContext,
  type ServerContext,
  type Transport,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { startAgentCall, type AgentCall } from "./agent-call.js";
import { LOCAL_PRINCIPAL } from "./mcp-principal.js";
import {
  answersForms,
  APPROVAL_WAIT_MS,
  NO_ELICITATION_REFUSAL,
  type McpAgentServerOptions,
  type McpAgentTool,
} from "./serve-mcp.js";

/** The Tasks extension's identifier (SEP-2663). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/**
 * How the 2026-07-28 server keeps runs that outlive a request.
 *
 * @example
 * ```ts
 * const tasks: McpTaskOptions = { taskAfterMs: 2_000, ttlMs: 600_000 };
 * ```
 */
export interface McpTaskOptions {
  /**
   * A call still running after this long is answered with a Task (to a client that declares the
   * Tasks extension; others wait for the answer). Default 5,000 ms.
   */
  taskAfterMs?: number;
  /** How long a finished task's result stays readable (`tasks/get`), and a run waiting for a retry or an answer waits. Default one hour. */
  ttlMs?: number;
  /** The polling interval suggested to clients. Default 500 ms. */
  pollIntervalMs?: number;
}

/** The part of the client's per-request capabilities a call depends on. */
interface CallerCapabilities {
  tasks: boolean;
  elicitation: boolean;
  /** A 2025-era connection (stdio): approvals are asked by a pushed `elicitation/create`. */
  legacy: boolean;
}

/**
 * The web-standard handler of the 2026-07-28 revision, with the running calls it holds. Close it
 * to abort them.
 */
export interface ModernMcpHandler {
  /** Serves `request` for `authInfo` (made by {@link authInfoOf}: the principal its tasks are bound to). */
  fetch(request: Request, options: { authInfo: AuthInfo }): Promise<Response>;
  close(): Promise<void>;
}

const TaskIdParams = z.looseObject({ taskId: z.string() });

/** Where the principal a request acts for travels to the server factory, in its `authInfo`. */
const PRINCIPAL_KEY = "agent-machine/principal";

/**
 * The `authInfo` the 2026-07-28 handler is given for a request admitted as `principal` (see
 * mcp-principal.ts): the server it makes binds the tasks it creates to that principal.
 *
 * @example
 * ```ts
 * await modern.fetch(request, { authInfo: authInfoOf("principal:alice") });
 * ```
 */
export function authInfoOf(principal: string): AuthInfo {
  return { token: "", clientId: principal, scopes: [], extra: { [PRINCIPAL_KEY]: principal } };
}

/** The principal an HTTP request was admitted as; none is a bug of the caller, not an open door. */
function principalOfHttp(ctx: McpRequestContext): string {
  const principal = ctx.authInfo?.extra?.[PRINCIPAL_KEY];
  if (typeof principal !== "string")
    throw new Error("An MCP request reached the agents' server without a principal");
  return principal;
}

/**
 * The server factory both serving entries use, and the calls it holds (stopped on close). Each call
 * is bound to the principal whose request started it (`principalOf` the request's context): a task
 * or a `requestState` of another principal's is answered as an unknown one.
 */
function createAgentServerFactory(
  agents: Record<string, McpAgentTool>,
  options: McpAgentServerOptions & { tasks?: McpTaskOptions },
  principalOf: (ctx: McpRequestContext) => string,
): { factory: (ctx: McpRequestContext) => Server; stopCalls: () => void } {
  const taskAfterMs = options.tasks?.taskAfterMs ?? 5_000;
  const ttlMs = options.tasks?.ttlMs ?? 3_600_000;
  const pollIntervalMs = options.tasks?.pollIntervalMs ?? 500;
  const info = { name: options.name ?? "agent-machine", version: options.version ?? "0.0.0" };
  const calls = new Map<
    string,
    { call: AgentCall; task: boolean; owner: string; expiry?: ReturnType<typeof setTimeout> }
  >();
  const tools = Object.entries(agents).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: {
      type: "object" as const,
      properties: { prompt: { type: "string", description: "What to ask the agent", pattern: "\\S" } },
      required: ["prompt"],
    },
    ...(tool.output && { outputSchema: z.toJSONSchema(tool.output) as { type: "object" } }),
  }));

  /** Forgets a call after `ttlMs` (aborting it if it still runs): nobody came back for it. */
  const expireLater = (id: string) => {
    const held = calls.get(id);
    if (!held) return;
    if (held.expiry) clearTimeout(held.expiry);
    held.expiry = setTimeout(() => {
      calls.delete(id);
      held.call.cancel();
    }, ttlMs);
    held.expiry.unref?.();
  };
  const forget = (id: string) => {
    const held = calls.get(id);
    if (held?.expiry) clearTimeout(held.expiry);
    calls.delete(id);
  };
  const keep = (call: AgentCall, task: boolean, owner: string) => {
    const held = calls.get(call.id);
    if (held) held.task ||= task;
    else calls.set(call.id, { call, task, owner });
    expireLater(call.id);
  };
  /** The call held as `id` for `owner`: another principal's is as unknown as none. */
  const heldFor = (id: string, owner: string) => {
    const held = calls.get(id);
    return held?.owner === owner ? held : undefined;
  };

  const taskOf = (call: AgentCall) => ({
    taskId: call.id,
    status: call.status,
    ...(call.statusMessage !== undefined && { statusMessage: call.statusMessage }),
    createdAt: call.createdAt,
    lastUpdatedAt: call.lastUpdatedAt,
    ttlMs,
    pollIntervalMs,
  });
  const detailedTask = (call: AgentCall) => ({
    ...taskOf(call),
    ...(call.status === "input_required" && { inputRequests: call.inputRequests() }),
    ...(call.result && call.status === "completed" && { result: call.result }),
  });

  /** Follows `call` for one request: its answer, an `input_required` round, or a Task. */
  async function answerOf(
    call: AgentCall,
    ctx: ServerContext,
    can: CallerCapabilities,
    owner: string,
  ): Promise<unknown> {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    let progress = 0;
    call.onProgress =
      progressToken === undefined
        ? undefined
        : (message) =>
            void ctx.mcpReq
              .notify({
                method: "notifications/progress",
                params: { progressToken, progress: ++progress, message },
              })
              .catch(() => {});
    // The line the run is at: its first come before this request follows it.
    if (call.statusMessage !== undefined) call.onProgress?.(call.statusMessage);
    const abort = () => call.cancel();
    ctx.mcpReq.signal.addEventListener("abort", abort, { once: true });
    let late: ReturnType<typeof setTimeout> | undefined;
    const becameLong = can.tasks
      ? new Promise<"long">((resolve) => (late = setTimeout(() => resolve("long"), taskAfterMs)))
      : undefined;
    try {
      for (;;) {
        if (call.result) {
          forget(call.id);
          return call.result;
        }
        if (call.status === "input_required") {
          if (can.tasks) return asTask(call, owner);
          if (can.legacy && can.elicitation) {
            await askPushed(call, ctx);
            continue;
          }
          if (can.elicitation) {
            keep(call, false, owner);
            return inputRequired({ inputRequests: call.inputRequests(), requestState: call.id });
          }
          call.refuseAll(NO_ELICITATION_REFUSAL);
          continue;
        }
        const changed = call.changed();
        if ((await (becameLong ? Promise.race([changed, becameLong]) : changed)) === "long")
          return asTask(call, owner);
      }
    } finally {
      if (late) clearTimeout(late);
      ctx.mcpReq.signal.removeEventListener("abort", abort);
      call.onProgress = undefined;
    }
  }

  /** The call goes on as a task: the client polls it (`tasks/get`), answers it, cancels it. */
  function asTask(call: AgentCall, owner: string) {
    keep(call, true, owner);
    // A finished task stays readable for ttlMs from its end.
    void waitForEnd(call).then(() => expireLater(call.id));
    return { resultType: "task", ...taskOf(call) };
  }

  function heldTask(taskId: string, ctx: ServerContext, server: Server, owner: string): AgentCall {
    if (!capabilitiesOf(ctx, server).tasks) {
      throw new ProtocolError(
        ProtocolErrorCode.MissingRequiredClientCapability,
        "Missing required client capability",
        {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      );
    }
    const held = heldFor(taskId, owner);
    if (!held?.task)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: no task ${taskId}`);
    return held.call;
  }

  const factory = (context: McpRequestContext) => {
    const owner = principalOf(context);
    const server = new Server(info, {
      capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
    } as ConstructorParameters<typeof Server>[1]);
    server.setRequestHandler("tools/list", () => ({ tools }));
    server.setRequestHandler("tools/call", async (request, ctx) => {
      const { name, arguments: args } = request.params;
      const tool = Object.hasOwn(agents, name) ? agents[name] : undefined;
      if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Tool ${name} not found`);
      const can = capabilitiesOf(ctx, server);
      const state = ctx.mcpReq.requestState();
      let call: AgentCall;
      if (state !== undefined) {
        // A retry with the answers to the approvals asked (multi-round-trip).
        const held = typeof state === "string" ? heldFor(state, owner) : undefined;
        if (!held || held.task || held.call.toolName !== name) {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            "Unknown or expired requestState: the run it named has ended or was never started here; call the tool again",
          );
        }
        call = held.call;
        if (held.expiry) clearTimeout(held.expiry);
        call.answer(ctx.mcpReq.inputResponses ?? {});
      } else {
        const prompt = (args as { prompt?: unknown } | undefined)?.prompt;
        // A blank prompt would send the model an empty message, which providers refuse mid-run.
        if (typeof prompt !== "string" || prompt.trim() === "") {
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `Invalid arguments for tool ${name}: prompt must be ${typeof prompt === "string" ? "a non-blank" : "a"} string`,
          );
        }
        call = startAgentCall(name, tool, prompt);
      }
      const answer = await answerOf(call, ctx, can, owner);
      // Results are projected as the SDK's own tools are (text beside structured content); tasks
      // and input_required rounds pass as they are.
      return (answer as { resultType?: string }).resultType === undefined
        ? server.projectCallToolResult(answer as CallToolResult, undefined)
        : (answer as CallToolResult);
    });
    server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, ctx) =>
      detailedTask(heldTask(params.taskId, ctx, server, owner)),
    );
    server.setRequestHandler("tasks/update", { params: TaskIdParams }, (params, ctx) => {
      // The SDK lifts `inputResponses` out of the params, as it does for a multi-round-trip retry.
      heldTask(params.taskId, ctx, server, owner).answer(ctx.mcpReq.inputResponses ?? {});
      return {};
    });
    server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, (params, ctx) => {
      heldTask(params.taskId, ctx, server, owner).cancel();
      return {};
    });
    return server;
  };

  const stopCalls = () => {
    for (const { call, expiry } of calls.values()) {
      if (expiry) clearTimeout(expiry);
      call.cancel();
    }
    calls.clear();
  };
  return { factory, stopCalls };
}

/**
 * Serves `agents` on the 2026-07-28 revision only (older requests are refused: route them to the
 * sessionful server, as {@link createMcpHttpHandler} does). Each agent is a tool taking `prompt`;
 * progress goes as `notifications/progress`, a cancelled request aborts the run, an approval is an
 * `input_required` elicitation (or a refusal the model reads, to a client without elicitation), and
 * a run longer than `taskAfterMs`, or one waiting for approval, is a Task to a client that
 * declares the Tasks extension.
 *
 * @example
 * ```ts
 * const modern = createModernMcpHandler({ helper: { description: "Helps", create: () => createAgent({ provider }) } });
 * const response = await modern.fetch(request, { authInfo: authInfoOf("principal:alice") });
 * ```
 */
export function createModernMcpHandler(
  agents: Record<string, McpAgentTool>,
  options: McpAgentServerOptions & { tasks?: McpTaskOptions } = {},
): ModernMcpHandler {
  const { factory, stopCalls } = createAgentServerFactory(agents, options, principalOfHttp);
  const handler = createMcpHandler(factory, { legacy: "reject" });
  return {
    fetch: (request, { authInfo }) => handler.fetch(request, { authInfo }),
    async close() {
      stopCalls();
      await handler.close();
    },
  };
}

/**
 * Serves `agents` over stdio (this process's stdin and stdout) with the v2 SDK's `serveStdio`:
 * 2026-07-28 to a client that asks for it, the `initialize` handshake of 2025-11-25 and before
 * to one that does not (approvals then asked by a pushed elicitation). Close the handle to end it.
 *
 * @example
 * ```ts
 * const served = await serveMcpStdio({ helper: { description: "Helps", create: () => createAgent({ provider }) } });
 * process.stdin.once("end", () => void served.close());
 * ```
 */
export async function serveMcpStdio(
  agents: Record<string, McpAgentTool>,
  options: McpAgentServerOptions & {
    tasks?: McpTaskOptions;
    /**
     * The connection to serve instead of this process's stdin and stdout: any MCP transport (a
     * `StdioServerTransport` over a socket, an in-memory pair). Its one client owns every task.
     */
    transport?: Transport;
  } = {},
): Promise<{ close(): Promise<void> }> {
  const { serveStdio } = await import("@modelcontextprotocol/server/stdio");
  // One client, the process that started this one, speaks on stdin: every task is its own.
  const { factory, stopCalls } = createAgentServerFactory(agents, options, () => LOCAL_PRINCIPAL);
  const handle = serveStdio(factory, options.transport ? { transport: options.transport } : undefined);
  return {
    async close() {
      stopCalls();
      await handle.close();
    },
  };
}

/**
 * What the client declared: in this request's capabilities on 2026-07-28, at `initialize` on a
 * 2025-era connection (stdio).
 */
function capabilitiesOf(ctx: ServerContext, server: Server): CallerCapabilities {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const perRequest = envelope?.["io.modelcontextprotocol/clientCapabilities"] as
    { elicitation?: unknown; extensions?: Record<string, unknown> } | undefined;
  const legacy = perRequest === undefined && !server.getNegotiatedProtocolVersion()?.startsWith("2026");
  const declared = perRequest ?? (server.getClientCapabilities() as typeof perRequest);
  return {
    tasks: !legacy && declared?.extensions?.[TASKS_EXTENSION] !== undefined,
    elicitation: answersForms(declared?.elicitation),
    legacy,
  };
}

/** Asks each waiting approval of `call` by a pushed elicitation (2025 era); a failed ask denies. */
async function askPushed(call: AgentCall, ctx: ServerContext): Promise<void> {
  for (const [key, request] of Object.entries(call.inputRequests())) {
    let answer: unknown = { action: "cancel" };
    try {
      const { mode: _mode, ...params } = request.params;
      answer = await ctx.mcpReq.elicitInput(params, { signal: ctx.mcpReq.signal, timeout: APPROVAL_WAIT_MS });
    } catch {
      // The request ended: the approval is denied.
    }
    call.answer({ [key]: answer });
  }
}

async function waitForEnd(call: AgentCall): Promise<void> {
  while (!call.result) await call.changed();
}
