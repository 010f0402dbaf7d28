// Attack: another caller of the agents' MCP server learns a task id (a log line, a shared proxy, a
// guess from a leaked one) and reads its result, answers its approval or cancels it. Each task is
// bound to the principal `authorize` admitted its creator as; another principal is answered as for
// an unknown task. Driven by the v2 SDK's client on 2026-07-28, as a client of the Tasks extension.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { serveNode, type NodeServer } from "../http.js";
import { createAgent, defineTool, scripted } from "../index.js";
import { liftTaskResults, type McpTask, taskOf, TASKS_EXTENSION } from "../mcp/mcp-tasks.js";
import {
  createMcpHttpHandler,
  type McpAgentTool,
  type McpHttpOptions,
  principalOfRequest,
} from "../mcp-server.js";

const servers: NodeServer[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function serve(agents: Record<string, McpAgentTool>, authorize: McpHttpOptions["authorize"]) {
  const handler = createMcpHttpHandler({ agents, authorize, tasks: { taskAfterMs: 50 } });
  const server = await serveNode(handler);
  servers.push(server);
  closers.push(() => handler.close());
  return server;
}

/** A 2026-07-28 client of the Tasks extension that presents `token`. */
async function connect(url: string, token: string) {
  const client = new Client({ name: "test", version: "1.0.0" }, {
    capabilities: { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } },
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  } as ConstructorParameters<typeof Client>[1]);
  await client.connect(
    liftTaskResults(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    ),
  );
  closers.push(() => client.close());
  return client;
}

const Loose = z.looseObject({});

/** What `client` is answered for `method` on `taskId`: the result, or the error's code and message. */
async function ask(
  client: Client,
  method: string,
  params: Record<string, unknown>,
): Promise<{ result?: Record<string, unknown>; error?: { code: number | undefined; message: string } }> {
  return client.request({ method, params } as never, Loose).then(
    (result) => ({ result: result as Record<string, unknown> }),
    (error: { code?: number; message: string }) => ({ error: { code: error.code, message: error.message } }),
  );
}

/** A raw 2026-07-28 request with `token`, for methods the SDK's client will not send on that revision. */
async function rawRequest(
  url: string,
  token: string,
  method: string,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown> = { extensions: { [TASKS_EXTENSION]: {} } },
) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(method === "tools/call" && { "mcp-name": String(params.name) }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  return response.text();
}

/** An agent whose one tool asks for approval, then answers with what the tool said. */
function guarded(ran: string[]): McpAgentTool {
  const tool = defineTool({
    name: "deploy",
    description: "Deploys",
    parameters: z.object({}),
    needsApproval: true,
    execute: () => {
      ran.push("deploy");
      return "deployed";
    },
  });
  return {
    description: "Deploys, after asking",
    create: () =>
      createAgent({
        tools: [tool],
        provider: scripted((request) =>
          request.messages.at(-1)!.role === "toolResult"
            ? { text: "shipped" }
            : { toolCalls: [{ name: "deploy", arguments: {} }] },
        ),
      }),
  };
}

async function startTask(client: Client): Promise<McpTask> {
  const task = taskOf(await client.callTool({ name: "deploy", arguments: { prompt: "ship" } }));
  expect(task).toMatchObject({ status: "input_required" });
  return task!;
}

/** The same request about a task id nobody holds, the answer with that id put back: no oracle. */
async function asUnknown(
  client: Client,
  method: string,
  taskId: string,
  extra: Record<string, unknown> = {},
) {
  const unknownId = "00000000-0000-4000-8000-000000000000";
  const answer = await ask(client, method, { taskId: unknownId, ...extra });
  return JSON.parse(JSON.stringify(answer).replaceAll(unknownId, taskId)) as typeof answer;
}

const users: Record<string, string> = { "token-alice": "alice", "token-mallory": "mallory" };
const byToken: McpHttpOptions["authorize"] = (request) => {
  const user = users[request.headers.get("authorization")?.replace(/^Bearer /, "") ?? ""];
  return user ? { principal: user } : false;
};

describe("attack: another principal holds a task's id", () => {
  it("cannot read, answer, cancel or list it (answered as an unknown task); its owner can", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) }, byToken);
    const alice = await connect(url, "token-alice");
    const mallory = await connect(url, "token-mallory");
    const task = await startTask(alice);
    const taskId = task.taskId;
    const waiting = (await ask(alice, "tasks/get", { taskId })).result!;
    const [key] = Object.keys(waiting.inputRequests as object);

    // Mallory, with the id: every task method is answered as for an id nobody holds.
    const approve = { inputResponses: { [key!]: { action: "accept", content: { approve: true } } } };
    for (const [method, extra] of [
      ["tasks/get", {}],
      ["tasks/update", approve],
      ["tasks/cancel", {}],
    ] as const) {
      const answer = await ask(mallory, method, { taskId, ...extra });
      expect(answer.error, `${method} of another principal's task`).toBeDefined();
      expect(answer, method).toEqual(await asUnknown(mallory, method, taskId, extra));
    }
    // The 2025-era task methods (the SDK's client does not send them on 2026-07-28): sent raw, they
    // are not served, and say nothing of the task.
    for (const method of ["tasks/list", "tasks/result"]) {
      const raw = await rawRequest(url, "token-mallory", method, method === "tasks/list" ? {} : { taskId });
      expect(raw, method).not.toContain(taskId);
      expect(raw, method).not.toContain("shipped");
      expect(JSON.parse(raw), method).toMatchObject({ error: { code: -32601 } });
    }

    // The world afterwards: the deploy did not run, the task is not cancelled, Alice still answers it.
    expect(ran).toEqual([]);
    expect((await ask(alice, "tasks/update", { taskId, ...approve })).error).toBeUndefined();
    let state = (await ask(alice, "tasks/get", { taskId })).result!;
    for (let i = 0; i < 100 && state.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      state = (await ask(alice, "tasks/get", { taskId })).result!;
    }
    expect(state).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "shipped" }] },
    });
    expect(ran).toEqual(["deploy"]);

    // And Alice cancels her own; Mallory's cancel of it had changed nothing.
    const second = await startTask(alice);
    expect((await ask(mallory, "tasks/cancel", { taskId: second.taskId })).error).toBeDefined();
    expect((await ask(alice, "tasks/get", { taskId: second.taskId })).result).toMatchObject({
      status: "input_required",
    });
    expect((await ask(alice, "tasks/cancel", { taskId: second.taskId })).error).toBeUndefined();
    let cancelled = (await ask(alice, "tasks/get", { taskId: second.taskId })).result!;
    for (let i = 0; i < 50 && cancelled.status !== "cancelled"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      cancelled = (await ask(alice, "tasks/get", { taskId: second.taskId })).result!;
    }
    expect(cancelled.status).toBe("cancelled");
  });

  it("cannot answer another principal's approval by the multi-round-trip retry naming its run (requestState)", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) }, byToken);
    const call = { name: "deploy", arguments: { prompt: "ship" } };
    const elicitation = { elicitation: { form: {} } };
    const asked = JSON.parse(await rawRequest(url, "token-alice", "tools/call", call, elicitation)) as {
      result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    };
    expect(asked.result.resultType).toBe("input_required");
    const { requestState } = asked.result;
    const [key] = Object.keys(asked.result.inputRequests);
    const inputResponses = { [key!]: { action: "accept", content: { approve: true } } };
    const retry = (token: string, state: string) =>
      rawRequest(url, token, "tools/call", { ...call, requestState: state, inputResponses }, elicitation);
    const stolen = JSON.parse(await retry("token-mallory", requestState)) as { error?: unknown };
    expect(stolen.error).toBeDefined();
    expect(stolen).toEqual(JSON.parse(await retry("token-mallory", "no-such-run")));
    expect(ran).toEqual([]);
    const own = JSON.parse(await retry("token-alice", requestState)) as { result?: { content: unknown } };
    expect(own.result?.content).toEqual([{ type: "text", text: "shipped" }]);
    expect(ran).toEqual(["deploy"]);
  });

  it("authorize answering plain true binds a task to the credentials that created it", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) }, (request) => request.headers.has("authorization"));
    const first = await connect(url, "one");
    const other = await connect(url, "two");
    const { taskId } = await startTask(first);
    expect(await ask(other, "tasks/get", { taskId })).toEqual(await asUnknown(other, "tasks/get", taskId));
    expect((await ask(other, "tasks/cancel", { taskId })).error).toBeDefined();
    expect((await ask(first, "tasks/get", { taskId })).result).toMatchObject({ status: "input_required" });
  });

  it("a 2025-era MCP session of one principal is an unknown session to another", async () => {
    const { url } = await serve(
      {
        echo: { description: "Echoes", create: () => createAgent({ provider: scripted([{ text: "hi" }]) }) },
      },
      byToken,
    );
    const client = new LegacyClient({ name: "old", version: "1" });
    const transport = new LegacyTransport(new URL(url), {
      requestInit: { headers: { authorization: "Bearer token-alice" } },
    });
    await client.connect(transport);
    closers.push(() => client.close());
    const sessionId = transport.sessionId!;
    const asMallory = await fetch(url, {
      method: "POST",
      headers: {
        authorization: "Bearer token-mallory",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} }),
    });
    expect(asMallory.status).toBe(404);
    expect(await asMallory.text()).not.toContain("echo");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo"]);
  });
});

describe("principalOfRequest", () => {
  const request = (headers: Record<string, string>) => new Request("http://127.0.0.1/", { headers });
  it("takes an explicit principal as given, refuses false and an empty one, and digests the credentials for true", () => {
    expect(principalOfRequest("alice", request({}))).toBe("principal:alice");
    expect(principalOfRequest({ principal: "alice" }, request({}))).toBe("principal:alice");
    expect(principalOfRequest(false, request({}))).toBeUndefined();
    expect(principalOfRequest("", request({}))).toBeUndefined();
    const one = principalOfRequest(true, request({ authorization: "Bearer one" }));
    expect(one).toMatch(/^authorization:[0-9a-f]{64}$/);
    expect(one).not.toContain("one");
    expect(principalOfRequest(true, request({ authorization: "Bearer two" }))).not.toBe(one);
    expect(principalOfRequest(true, request({ cookie: "sid=1" }))).toMatch(/^cookie:/);
    expect(principalOfRequest(true, request({}))).toBe("anonymous");
    expect(() => principalOfRequest({} as never, request({}))).toThrow(/principal/);
  });
});
