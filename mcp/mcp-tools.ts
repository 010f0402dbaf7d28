import type { Client, VersionNegotiationMode } from "@modelcontextprotocol/client";
import { z } from "zod";
import { lazy } from "../core/lazy.js";
import type { LaterResults } from "../wake/later-results.js";
import type { LaterStarted } from "../wake/later-tool.js";
import { startedText } from "../rules/later-texts.js";
import { askAsApproval, type McpInputAnswer, type McpInputRequest } from "./mcp-input.js";
import { followTask, liftTaskResults, taskOf, TASKS_EXTENSION, type McpTask } from "./mcp-tasks.js";
import type { ImageContent, TextContent } from "../core/messages.js";
import { checkOptionKeys, type OptionKeys } from "../core/option-keys.js";
import type { Tool, ToolResult } from "../tools/define-tool.js";
import { serverText } from "../tools/server-text.js";

// Node's modules load on first use, not with the package (issue 44).
const nodeAsyncHooks = () => process.getBuiltinModule("node:async_hooks");

interface McpCommonOptions {
  /** Prefix for tool names (`prefix__tool`), to keep several servers' tools apart. Default: none. */
  prefix?: string;
  /** Timeout of one tool call, reset by the server's progress notifications. Default 600 000 ms. */
  callTimeoutMs?: number;
  /** Client name announced to the server. Default `agent-machine`. */
  clientName?: string;
  /**
   * Believe the server's tool annotations: a tool it marks `readOnlyHint: true` is then read-only
   * (allowed without approval by the default permissions, and run beside other calls). Default
   * `false`: annotations are the server's claims, and a server could mark `wipe_disk` read-only;
   * set it only for a server you trust.
   */
  trustAnnotations?: boolean;
  /** Pages of `tools/list` read at most: a server that keeps answering `nextCursor` is refused. Default 100. */
  maxListPages?: number;
  /**
   * Which MCP revision to speak. `"auto"` (the default) asks the server first (`server/discover`) and
   * speaks 2026-07-28 to a server that offers it, else the older `initialize` handshake (2025-11-25
   * and before). `"legacy"` skips the question; `"2026-07-28"` insists on it and fails to connect to
   * an older server. Over stdio, `"auto"` asks on a short-lived second process of the same command,
   * so a server whose start has effects is better given `"legacy"` or `"2026-07-28"`.
   */
  protocol?: McpProtocolChoice;
  /**
   * Where a server's Task goes (2026-07-28, the Tasks extension): the call is answered at once with
   * a handle and the task's result comes later as a follow-up message that wakes `agentId`
   * (`createLaterResults`, as a tool that answers later). Without it, the call waits for the task,
   * polling it, as for any result.
   */
  later?: { results: LaterResults; agentId: string };
  /**
   * Called after the set's `tools` followed a change of the server's list (the server sent
   * `notifications/tools/list_changed`): the array is updated in place (new tools added, removed
   * ones dropped, unchanged ones the same objects). An agent made with a copy keeps its tools; pass
   * `set.tools` to each run (`agent.prompt(text, { tools: set.tools })`) to give the model the list
   * as it is now.
   */
  onToolsChanged?: (tools: readonly Tool[]) => void;
}

/** The MCP revisions {@link mcpTools} can be told to speak: see `protocol` in its options. */
export type McpProtocolChoice = "auto" | "legacy" | "2026-07-28";

/** Options of {@link mcpTools} for a server started as a process and spoken to over stdio. */
export interface McpStdioOptions extends McpCommonOptions {
  command: string;
  args?: string[];
  /** Environment of the server process (added to a minimal safe default environment, as the SDK does). */
  env?: Record<string, string>;
  cwd?: string;
  /** What happens to the server's stderr. Default `"inherit"`. */
  stderr?: "inherit" | "ignore" | "pipe";
}

/** Options of {@link mcpTools} for a server reached over HTTP (Streamable HTTP, falling back to SSE). */
export interface McpUrlOptions extends McpCommonOptions {
  url: string | URL;
  /** Extra HTTP headers, e.g. an authorization header. */
  headers?: Record<string, string>;
}

const MCP_STDIO_KEYS: OptionKeys<McpStdioOptions> = {
  command: true,
  args: true,
  env: true,
  cwd: true,
  stderr: true,
  prefix: true,
  callTimeoutMs: true,
  clientName: true,
  trustAnnotations: true,
  maxListPages: true,
  protocol: true,
  later: true,
  onToolsChanged: true,
};
const MCP_URL_KEYS: OptionKeys<McpUrlOptions> = {
  url: true,
  headers: true,
  prefix: true,
  callTimeoutMs: true,
  clientName: true,
  trustAnnotations: true,
  maxListPages: true,
  protocol: true,
  later: true,
  onToolsChanged: true,
};

/** What {@link mcpTools} returns. */
export interface McpToolSet {
  /** The server's tools as agent tools. */
  tools: Tool[];
  /** The connected MCP client, for resources, prompts or a fresh `listTools`. */
  client: Client;
  /** Closes the connection; for a stdio server, ends its process. Safe to call twice. */
  close(): Promise<void>;
}

/** `details` of an MCP tool result. */
export interface McpResultDetails {
  /** The server's `structuredContent`, when it sent one. */
  structuredContent?: unknown;
  /** The MCP tool name as the server gave it (before prefixing; control characters removed). */
  mcpTool: string;
  /** The server's task the call became, when it answered with one (2026-07-28, the Tasks extension). */
  taskId?: string;
}

// Model arguments are validated by the server against its own JSON Schema; here they only need to be an object.
const permissiveParameters = /* @__PURE__ */ lazy(() => z.record(z.string(), z.unknown()));

/** A server's JSON Schema with the texts meant for people and models (`description`, `title`) made safe. */
function safeSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(safeSchema);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] =
      (key === "description" || key === "title") && typeof item === "string"
        ? serverText(item)
        : safeSchema(item);
  }
  return out;
}

/**
 * Reads every page of the server's `tools/list`, up to `maxPages`: a server answering `nextCursor`
 * for ever (or the same cursor again) would otherwise hold the caller, and its memory, for ever.
 */
async function listAllTools(
  client: Client,
  maxPages: number,
): Promise<Awaited<ReturnType<Client["listTools"]>>["tools"]> {
  const listed: Awaited<ReturnType<Client["listTools"]>>["tools"] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let pages = 0; ; pages++) {
    if (pages === maxPages) {
      throw new Error(
        `mcpTools: the server's tools/list did not end after ${maxPages} pages (it keeps answering nextCursor); raise maxListPages if it really has that many`,
      );
    }
    // Page by page through request(): the SDK's listTools() without a cursor walks every page
    // itself, and ends a repeated cursor quietly where this refuses it.
    const page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} });
    listed.push(...page.tools);
    cursor = page.nextCursor;
    if (!cursor) return listed;
    if (seen.has(cursor))
      throw new Error(
        `mcpTools: the server's tools/list answered the same nextCursor twice; it would never end`,
      );
    seen.add(cursor);
  }
}

function toolName(prefix: string | undefined, name: string): string {
  const full = prefix ? `${prefix}__${name}` : name;
  return full.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

type McpContent = { type: string; [key: string]: unknown };

function mapContent(item: McpContent): TextContent | ImageContent {
  switch (item.type) {
    case "text":
      return { type: "text", text: String(item.text ?? "") };
    case "image":
      return { type: "image", data: String(item.data ?? ""), mimeType: String(item.mimeType ?? "image/png") };
    case "resource": {
      const resource = (item.resource ?? {}) as { uri?: string; text?: string; mimeType?: string };
      if (typeof resource.text === "string") return { type: "text", text: resource.text };
      return {
        type: "text",
        text: `[binary resource ${resource.uri ?? ""} (${resource.mimeType ?? "unknown type"})]`,
      };
    }
    case "resource_link":
      return {
        type: "text",
        text: `[resource ${String(item.uri ?? "")}${item.name ? ` "${String(item.name)}"` : ""}]`,
      };
    case "audio":
      return { type: "text", text: `[audio content (${String(item.mimeType ?? "unknown type")}) not shown]` };
    default:
      return { type: "text", text: `[unsupported MCP content type "${item.type}"]` };
  }
}

/**
 * Turns an MCP `CallToolResult` into a {@link ToolResult}: text and images as they are, embedded text
 * resources as text, other content as a short placeholder, `structuredContent` into `details`.
 *
 * @example
 * ```ts
 * const result = mapMcpResult(await client.callTool({ name: "echo", arguments: { message: "hi" } }), "echo");
 * ```
 */
export function mapMcpResult(result: Record<string, unknown>, mcpTool: string): ToolResult<McpResultDetails> {
  const content = Array.isArray(result.content) ? (result.content as McpContent[]).map(mapContent) : [];
  // Old servers may answer with `toolResult` instead of `content`.
  if (content.length === 0 && "toolResult" in result) {
    content.push({ type: "text", text: JSON.stringify(result.toolResult) });
  }
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  return {
    content,
    details: {
      mcpTool,
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
    isError: result.isError === true,
  };
}

/** Asks the agent what a server's elicitation asks, for the call it came in. */
type Asker = (request: McpInputRequest) => Promise<McpInputAnswer>;

/**
 * The result of a task that ended: its tool result when it completed (an `isError` result
 * included), else an error result saying how it ended.
 *
 * @example
 * ```ts
 * taskResult({ taskId: "t1", status: "failed", error: { message: "rate limited" } }, "render");
 * ```
 */
export function taskResult(task: McpTask, mcpTool: string): ToolResult<McpResultDetails> {
  if (task.status === "completed" && task.result) {
    const mapped = mapMcpResult(task.result, mcpTool);
    return { ...mapped, details: { ...mapped.details!, taskId: task.taskId } };
  }
  const why =
    task.status === "failed"
      ? `failed: ${serverText(task.error?.message ?? task.statusMessage ?? "no reason given")}`
      : `ended ${task.status}${task.statusMessage ? `: ${serverText(task.statusMessage)}` : ""}`;
  return {
    content: [{ type: "text", text: `MCP tool ${mcpTool}'s task ${task.taskId} ${why}` }],
    details: { mcpTool, taskId: task.taskId },
    isError: true,
  };
}

/** The SDK's negotiation mode for a {@link McpProtocolChoice}. */
function negotiationMode(choice: McpProtocolChoice | undefined): VersionNegotiationMode {
  switch (choice ?? "auto") {
    case "auto":
      return "auto";
    case "legacy":
      return "legacy";
    case "2026-07-28":
      return { pin: "2026-07-28" };
    default:
      throw new Error(
        `mcpTools: protocol must be "auto", "legacy" or "2026-07-28", not ${JSON.stringify(choice)}`,
      );
  }
}

/** A tool as the server lists it. */
type ListedTool = Awaited<ReturnType<Client["listTools"]>>["tools"][number];

async function connect(
  options: McpStdioOptions | McpUrlOptions,
  toolsChanged: (tools: ListedTool[]) => void,
): Promise<Client> {
  const mode = negotiationMode(options.protocol);
  // The MCP SDK (with its JSON Schema validator) is loaded when a server is connected, not when
  // agent-machine is imported: most agents use no MCP server, and a cold start pays for each module.
  const { Client, SSEClientTransport, StreamableHTTPClientTransport } =
    await import("@modelcontextprotocol/client");
  const newClient = (negotiate: VersionNegotiationMode = mode) =>
    new Client({ name: options.clientName ?? "agent-machine", version: "0.1.0" }, {
      versionNegotiation: { mode: negotiate },
      // A server's questions are asked as approvals; its tasks are followed (mcp-input, mcp-tasks).
      capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
      // The SDK reads the list again when the server says it changed (debounced), on either revision.
      listMaxPages: options.maxListPages ?? 100,
      listChanged: {
        tools: {
          onChanged: (error: unknown, tools: ListedTool[] | null) => !error && tools && toolsChanged(tools),
        },
      },
    } as ConstructorParameters<typeof Client>[1]);
  const client = newClient();
  if ("command" in options) {
    const { StdioClientTransport } = await import("@modelcontextprotocol/client/stdio");
    const transport = new StdioClientTransport({
      command: options.command,
      args: options.args,
      env: options.env,
      cwd: options.cwd,
      stderr: options.stderr ?? "inherit",
    });
    await client.connect(liftTaskResults(transport));
    return client;
  }
  const url = typeof options.url === "string" ? new URL(options.url) : options.url;
  const requestInit = options.headers ? { headers: options.headers } : undefined;
  try {
    await client.connect(liftTaskResults(new StreamableHTTPClientTransport(url, { requestInit })));
    return client;
  } catch (streamableError) {
    // Servers from before Streamable HTTP speak SSE only; a failed client is not reused.
    await client.close().catch(() => undefined);
    if (typeof mode === "object") throw streamableError;
    // SSE-only servers are from before 2025-03-26: no revision to ask about.
    const sseClient = newClient("legacy");
    try {
      await sseClient.connect(new SSEClientTransport(url, { requestInit }));
      return sseClient;
    } catch {
      throw streamableError;
    }
  }
}

/**
 * Connects to an MCP server and turns its tools into agent tools. The server's JSON Schemas go to the
 * model unchanged (the server validates the arguments); results are mapped to text and image content,
 * `structuredContent` goes to `details`; a result with `isError` and a failed request (protocol
 * error, timeout, closed connection) both become error results the model sees. A server's
 * annotations are hints: a tool is read-only (and concurrency-safe) by `annotations.readOnlyHint`
 * only with `trustAnnotations: true`, else it asks like any other tool that changes things. Names,
 * descriptions and schema descriptions lose control and escape characters ({@link serverText});
 * `tools/list` is read for at most `maxListPages` pages.
 *
 * @example
 * ```ts
 * const fs = await mcpTools({
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-filesystem", process.cwd()],
 *   prefix: "fs",
 * });
 * const agent = createAgent({ provider, tools: [...fs.tools] });
 * // ... when done:
 * await fs.close();
 * ```
 */
export async function mcpTools(options: McpStdioOptions | McpUrlOptions): Promise<McpToolSet> {
  if ("url" in options) checkOptionKeys("mcpTools", options, MCP_URL_KEYS);
  else checkOptionKeys("mcpTools", options, MCP_STDIO_KEYS);
  let followList: ((tools: ListedTool[]) => void) | undefined;
  const reconnect = () => connect(options, (tools) => followList?.(tools));
  const connection = createLiveConnection(await reconnect(), reconnect);
  try {
    const listed = await listAllTools(connection.current(), options.maxListPages ?? 100);

    const callTimeoutMs = options.callTimeoutMs ?? 600_000;
    const later = options.later;
    // A server's question (an elicitation) belongs to the call it came in: the one whose request
    // carried it (async context), else the only call running.
    const { AsyncLocalStorage } = nodeAsyncHooks();
    const asking = new AsyncLocalStorage<Asker>();
    const inFlight = new Set<Asker>();
    // Each client the set connects (the first, and one after a lost connection) asks the same way.
    connection.prepare((client) =>
      client.setRequestHandler("elicitation/create", async (request) => {
        const ask = asking.getStore() ?? (inFlight.size === 1 ? [...inFlight][0] : undefined);
        if (!ask) return { action: "decline" as const };
        const answer = await ask({ method: "elicitation/create", params: request.params });
        // The server validates the content against the form it sent.
        return answer as {
          action: "accept" | "decline" | "cancel";
          content?: Record<string, string | number | boolean | string[]>;
        };
      }),
    );
    const agentTool = (
      mcpTool: ListedTool,
    ): Tool<Record<string, unknown>, McpResultDetails | LaterStarted> => {
      // A hint relaxes the user's permissions only when the user trusts the server.
      const readOnly = options.trustAnnotations === true && mcpTool.annotations?.readOnlyHint === true;
      const { $schema: _ignored, ...jsonSchema } = safeSchema(mcpTool.inputSchema) as Record<string, unknown>;
      const title = mcpTool.annotations?.title;
      const agentToolName = toolName(options.prefix, mcpTool.name);
      // A task handed to the later results is followed by this work, here and after a restart.
      later?.results.register(later.agentId, agentToolName, async (args, work) => {
        const { taskId, pollIntervalMs } = args as { taskId: string; pollIntervalMs?: number };
        const done = await followTask(
          await connection.live(),
          { taskId, status: "working", pollIntervalMs },
          { signal: work.signal },
        );
        return taskResult(done, serverText(mcpTool.name));
      });
      return {
        name: agentToolName,
        description: serverText(mcpTool.description ?? title ?? mcpTool.name),
        parameters: permissiveParameters(),
        jsonSchema,
        readOnly,
        concurrencySafe: readOnly,
        async execute(args, ctx): Promise<ToolResult<McpResultDetails | LaterStarted>> {
          const name = serverText(mcpTool.name);
          let inputs = 0;
          const ask: Asker = (request) => askAsApproval(ctx, name, `input-${++inputs}`, request);
          let client: Client | undefined;
          try {
            inFlight.add(ask);
            const callOn = (calling: Client) =>
              asking.run(ask, () =>
                calling.callTool(
                  { name: mcpTool.name, arguments: args },
                  {
                    // The listed definition, so the SDK need not read a cached tools/list to validate the output.
                    toolDefinition: mcpTool,
                    signal: ctx.signal,
                    timeout: callTimeoutMs,
                    resetTimeoutOnProgress: true,
                    onprogress: (progress: { progress: number; total?: number; message?: string }) => {
                      const total = progress.total !== undefined ? `/${progress.total}` : "";
                      ctx.onProgress(progress.message ?? `${progress.progress}${total}`);
                    },
                  },
                ),
              );
            client = await connection.live();
            let result: Awaited<ReturnType<Client["callTool"]>>;
            try {
              result = await callOn(client);
            } catch (error) {
              // The server no longer knows the session (it restarted): the call never ran there.
              if (!connection.sessionLost(client, error)) throw error;
              client = await connection.live();
              result = await callOn(client);
            }
            const calling = client;
            const task = taskOf(result as Record<string, unknown>);
            if (!task) return mapMcpResult(result as Record<string, unknown>, name);
            if (later) {
              const handle = await later.results.begin({
                agentId: later.agentId,
                toolName: agentToolName,
                toolCallId: ctx.toolCallId,
                args: {
                  taskId: task.taskId,
                  ...(task.pollIntervalMs !== undefined && { pollIntervalMs: task.pollIntervalMs }),
                },
              });
              return {
                content: [{ type: "text", text: startedText(handle) }],
                details: {
                  status: "started",
                  handle: handle.id,
                  ...(handle.deadline !== undefined && { deadline: handle.deadline }),
                },
              };
            }
            const done = await followTask(calling, task, {
              signal: ctx.signal,
              onStatus: (text) => ctx.onProgress(text),
              answerInput: (key, request) => askAsApproval(ctx, name, key, request),
            });
            return taskResult(done, name);
          } catch (error) {
            if (ctx.signal.aborted) throw error;
            const message = `${error instanceof Error ? error.message : String(error)}${connection.lostNote(client)}`;
            return {
              content: [{ type: "text", text: `MCP tool ${name} failed: ${message}` }],
              details: { mcpTool: name },
              isError: true,
            };
          } finally {
            inFlight.delete(ask);
          }
        },
      };
    };
    const tools = listed.map(agentTool);
    // What each tool was made from, so a tool the server lists unchanged keeps its object.
    const madeFrom = new WeakMap<Tool, string>(tools.map((tool, i) => [tool, JSON.stringify(listed[i])]));
    followList = (next) => {
      const current = new Map(tools.map((tool) => [tool.name, tool]));
      const updated = next.map((mcpTool) => {
        const same = current.get(toolName(options.prefix, mcpTool.name));
        const definition = JSON.stringify(mcpTool);
        if (same && madeFrom.get(same) === definition) return same;
        const made = agentTool(mcpTool);
        madeFrom.set(made, definition);
        return made;
      });
      tools.splice(0, tools.length, ...updated);
      try {
        options.onToolsChanged?.(tools);
      } catch {
        // The app's callback failed, in the SDK's notification handler: the list is up to date anyway.
      }
    };
    return {
      tools,
      get client() {
        return connection.current();
      },
      close: connection.close,
    };
  } catch (error) {
    await connection.close().catch(() => undefined);
    throw error;
  }
}

/** The set's connection to its server, connected again at the next call after it was lost. */
interface LiveConnection {
  /** The client now: the live one, or the one whose connection was lost. */
  current(): Client;
  /** The client to call: the current one, or a new connection when the current one was lost. */
  live(): Promise<Client>;
  /** Sets up each client, the current one at once and each new one before it is used. */
  prepare(setUp: (client: Client) => void): void;
  /**
   * Whether `error` says the Streamable HTTP server no longer knows `client`'s session (HTTP 404
   * to a request with a session id: it restarted, or expired the session). The connection then
   * counts as lost, so `live()` starts a new session, as the MCP spec asks of a client.
   */
  sessionLost(client: Client, error: unknown): boolean;
  /** Why the connection of `client` ended, for the error of a call made on it; "" while it is up. */
  lostNote(client: Client | undefined): string;
  /** Closes the connection for good: no call connects again. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Keeps a set's connection: when it is lost (a stdio server that died, an answer over the SDK's
 * 10 MB line limit, which makes the SDK close the connection), the call it was lost in fails saying
 * why, and the next call connects again (starting the server again), instead of every later call
 * failing with "Not connected" until the app calls `mcpTools` again.
 *
 * @example
 * ```ts
 * const connection = createLiveConnection(await connect(options), () => connect(options));
 * const result = await (await connection.live()).callTool({ name: "echo", arguments: {} });
 * ```
 */
export function createLiveConnection(first: Client, reconnect: () => Promise<Client>): LiveConnection {
  let current = first;
  let lost: Error | undefined;
  let reconnecting: Promise<Client> | undefined;
  let closed: Promise<void> | undefined;
  const setUps: ((client: Client) => void)[] = [];
  const why = new WeakMap<Client, Error>();
  const watch = (client: Client) => {
    let lastError: { error: Error; at: number } | undefined;
    // The transport tells why just before it closes (an over-long line, a broken pipe); an error
    // long before (a line that was not JSON-RPC, skipped) is not why.
    client.onerror = (error) => void (lastError = { error, at: Date.now() });
    client.onclose = () => {
      if (closed) return;
      const recent = lastError && Date.now() - lastError.at < 1_000 ? lastError.error : undefined;
      const reason = recent ?? new Error("the server closed the connection");
      why.set(client, reason);
      if (client === current) lost = reason;
    };
  };
  watch(first);
  return {
    current: () => current,
    async live() {
      if (closed) throw new Error("the connection to the MCP server was closed (close() was called)");
      if (!lost) return current;
      reconnecting ??= (async () => {
        try {
          const next = await reconnect();
          if (closed) {
            await next.close().catch(() => undefined);
            throw new Error("the connection to the MCP server was closed (close() was called)");
          }
          watch(next);
          for (const setUp of setUps) setUp(next);
          current = next;
          lost = undefined;
          return next;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          throw new Error(`the connection to the server was lost and connecting again failed: ${message}`, {
            cause: error,
          });
        } finally {
          reconnecting = undefined;
        }
      })();
      return reconnecting;
    },
    sessionLost(client, error) {
      const sessionId = (client.transport as { sessionId?: unknown } | undefined)?.sessionId;
      if ((error as { status?: unknown } | null)?.status !== 404 || typeof sessionId !== "string")
        return false;
      if (closed) return false;
      // A call beside it saw the same 404 first and a new session is made: this one goes there too.
      if (client !== current) return true;
      const reason = new Error("the server no longer knows this session (HTTP 404)");
      why.set(client, reason);
      lost = reason;
      // Its session is gone on the server: nothing more to say on it.
      void client.close().catch(() => undefined);
      return true;
    },
    prepare(setUp) {
      setUps.push(setUp);
      setUp(current);
    },
    lostNote(client) {
      const reason = client && why.get(client);
      if (!reason || closed) return "";
      return ` (the connection to the server was lost: ${reason.message}); the next call connects again (a stdio server is started again)`;
    },
    close() {
      closed ??= current.close();
      return closed;
    },
  };
}
