// agent-machine/mcp-server on MCP 2026-07-28, driven by the v2 SDK's client (stateless requests,
// approvals in band as input_required, long runs as Tasks of the Tasks extension), beside the v1
// client on the same handler.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { serveNode, type NodeServer } from "../http.js";
import { createAgent, defineTool, scripted } from "../index.js";
import { createMcpHttpHandler, type McpAgentTool, NO_ELICITATION_REFUSAL } from "../mcp-server.js";

const servers: NodeServer[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function serve(agents: Record<string, McpAgentTool>, taskAfterMs = 5_000) {
  const handler = createMcpHttpHandler({ agents, authorize: "none-local-only", tasks: { taskAfterMs } });
  const server = await serveNode(handler);
  servers.push(server);
  closers.push(() => handler.close());
  return server;
}

async function connect(url: string, capabilities: Record<string, unknown> = {}) {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { capabilities, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  closers.push(() => client.close());
  return client;
}

const textOf = (result: object) =>
  (result as { content: { type: string; text?: string }[] }).content.map((part) => part.text ?? "").join("");

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
        provider: scripted((request) => {
          const last = request.messages.at(-1)!;
          if (last.role === "toolResult")
            return { text: `result: ${last.content.map((c) => (c.type === "text" ? c.text : "")).join("")}` };
          return { toolCalls: [{ name: "deploy", arguments: {} }] };
        }),
      }),
  };
}

/** A raw 2026-07-28 request, as a client declaring the Tasks extension sends it. */
async function rpc(url: string, method: string, params: Record<string, unknown>, name?: string) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name !== undefined && { "mcp-name": name }),
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
          "io.modelcontextprotocol/clientCapabilities": {
            elicitation: {},
            extensions: { "io.modelcontextprotocol/tasks": {} },
          },
        },
      },
    }),
  });
  const text = await response.text();
  // A JSON body, or an SSE stream whose last data line is the response.
  const json = text.startsWith("{")
    ? text
    : text
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .at(-1)!
        .slice(6);
  return JSON.parse(json) as { result?: Record<string, unknown>; error?: { code: number; message: string } };
}

describe("agents served over MCP 2026-07-28 (the v2 SDK's client)", () => {
  it("negotiates 2026-07-28; a call returns the answer, typed output as structuredContent, progress as notifications", async () => {
    const output = z.object({ city: z.string(), population: z.number() });
    const { url } = await serve({
      echo: {
        description: "Echoes",
        create: () =>
          createAgent({
            provider: scripted((request) => ({
              text: `echo: ${JSON.stringify(request.messages.at(-1)?.content)}`,
            })),
          }),
      },
      facts: {
        description: "Facts",
        output,
        create: () => createAgent({ provider: scripted([{ text: '{"city":"Lyon","population":522000}' }]) }),
      },
    });
    const client = await connect(url);
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo", "facts"]);
    expect(tools[1]!.outputSchema).toMatchObject({ properties: { city: { type: "string" } } });
    expect(textOf(await client.callTool({ name: "echo", arguments: { prompt: "hi" } }))).toBe('echo: "hi"');
    const progress: string[] = [];
    const typed = await client.callTool(
      { name: "facts", arguments: { prompt: "Lyon?" } },
      {
        onprogress: (p: { message?: string }) => void progress.push(p.message ?? ""),
      },
    );
    expect(typed.structuredContent).toEqual({ city: "Lyon", population: 522000 });
    expect(progress).toContain("turn 1");
  });

  it("asks an approval in band (input_required with an elicitation) of a client that can answer; refuses it where not", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) });
    const asking = await connect(url, { elicitation: { form: {} } });
    const asked: string[] = [];
    asking.setRequestHandler("elicitation/create", (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: "accept", content: { approve: true } };
    });
    const approved = await asking.callTool({ name: "deploy", arguments: { prompt: "ship it" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/deploy/);
    expect(ran).toEqual(["deploy"]);
    expect(textOf(approved)).toBe("result: deployed");

    const declining = await connect(url, { elicitation: { form: {} } });
    declining.setRequestHandler("elicitation/create", () => ({ action: "decline" }));
    const declined = await declining.callTool({ name: "deploy", arguments: { prompt: "ship it" } });
    expect(ran).toEqual(["deploy"]);
    expect(textOf(declined)).toContain("refused");

    const silent = await connect(url);
    const refused = await silent.callTool({ name: "deploy", arguments: { prompt: "ship it" } });
    expect(ran).toEqual(["deploy"]);
    expect(textOf(refused)).toContain(NO_ELICITATION_REFUSAL);
  });

  it("aborts the run when the client cancels the call", async () => {
    let aborted = false;
    const { url } = await serve({
      slow: {
        description: "Slow",
        create: () => {
          const agent = createAgent({
            provider: scripted([{ text: "x".repeat(400), chunkSize: 1, delayMs: 50 }]),
          });
          agent.events$.subscribe((e) => {
            if (e.type === "agent_end" && e.reason === "aborted") aborted = true;
          });
          return agent;
        },
      },
    });
    const client = await connect(url);
    const controller = new AbortController();
    const call = client.callTool(
      { name: "slow", arguments: { prompt: "go" } },
      { signal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await expect(call).rejects.toThrow();
    for (let i = 0; i < 50 && !aborted; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(aborted).toBe(true);
  });

  it("serves a v1 client (2025-11-25, with sessions) on the same handler", async () => {
    const { url } = await serve({
      echo: {
        description: "Echoes",
        create: () => createAgent({ provider: scripted([{ text: "old and new" }]) }),
      },
    });
    const client = new LegacyClient({ name: "old", version: "1" });
    await client.connect(new LegacyTransport(new URL(url)));
    closers.push(() => client.close());
    expect(textOf(await client.callTool({ name: "echo", arguments: { prompt: "hi" } }))).toBe("old and new");
  });
});

describe("long runs as MCP Tasks (io.modelcontextprotocol/tasks)", () => {
  it("answers a run longer than taskAfterMs with a task the client polls to its result", async () => {
    const { url } = await serve(
      {
        slow: {
          description: "Slow",
          create: () =>
            createAgent({ provider: scripted([{ text: "done at last", chunkSize: 2, delayMs: 40 }]) }),
        },
      },
      50,
    );
    const created = await rpc(url, "tools/call", { name: "slow", arguments: { prompt: "go" } }, "slow");
    expect(created.result).toMatchObject({ resultType: "task", status: "working" });
    const taskId = created.result!.taskId as string;
    let task = (await rpc(url, "tasks/get", { taskId }, taskId)).result!;
    for (let i = 0; i < 100 && task.status === "working"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      task = (await rpc(url, "tasks/get", { taskId }, taskId)).result!;
    }
    expect(task).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "done at last" }] },
    });
    expect((await rpc(url, "tasks/get", { taskId: "no-such" }, "no-such")).error?.code).toBe(-32602);
  });

  it("a task waiting for approval is input_required; tasks/update answers it; tasks/cancel aborts a run", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) });
    const created = await rpc(url, "tools/call", { name: "deploy", arguments: { prompt: "ship" } }, "deploy");
    expect(created.result).toMatchObject({ resultType: "task", status: "input_required" });
    const taskId = created.result!.taskId as string;
    const waiting = (await rpc(url, "tasks/get", { taskId }, taskId)).result!;
    const [key] = Object.keys(waiting.inputRequests as object);
    expect(waiting.inputRequests).toMatchObject({ [key!]: { method: "elicitation/create" } });
    expect(ran).toEqual([]);
    const updated = await rpc(
      url,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { approve: true } } } },
      taskId,
    );
    expect(updated.error).toBeUndefined();
    let task = (await rpc(url, "tasks/get", { taskId }, taskId)).result!;
    for (let i = 0; i < 100 && task.status !== "completed"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      task = (await rpc(url, "tasks/get", { taskId }, taskId)).result!;
    }
    expect(ran).toEqual(["deploy"]);
    expect(task).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "result: deployed" }] },
    });

    const again = await rpc(url, "tools/call", { name: "deploy", arguments: { prompt: "ship" } }, "deploy");
    const second = again.result!.taskId as string;
    expect((await rpc(url, "tasks/cancel", { taskId: second }, second)).result).toBeDefined();
    let cancelled = (await rpc(url, "tasks/get", { taskId: second }, second)).result!;
    for (let i = 0; i < 50 && cancelled.status !== "cancelled"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      cancelled = (await rpc(url, "tasks/get", { taskId: second }, second)).result!;
    }
    expect(cancelled.status).toBe("cancelled");
    expect(ran).toEqual(["deploy"]);
  });
});

describe("the 2026-07-28 path attacked by the web it faces", () => {
  it("a page's cross-site call is refused before it reaches the 2026-07-28 handler, and runs no agent", async () => {
    const ran: string[] = [];
    const server = await serve({ deploy: guarded(ran) });
    const call = (headers: Record<string, string>) =>
      fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": "deploy",
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "deploy",
            arguments: { prompt: "deploy" },
            _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" },
          },
        }),
      });
    const crossSite = await call({ "sec-fetch-site": "cross-site", origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect(await crossSite.json()).toMatchObject({ error: { code: "cross_site" } });
    expect(ran).toEqual([]);
  });
});
