// agent-machine/mcp-server over Streamable HTTP, driven by the official MCP SDK's client.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { serveNode, type NodeServer } from "../http.js";
import { createAgent, defineTool, scripted } from "../index.js";
import { createMcpHttpHandler, type McpAgentTool, NO_ELICITATION_REFUSAL } from "../mcp-server.js";

const servers: NodeServer[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  for (const server of servers.splice(0)) await server.close();
});

async function serve(
  agents: Record<string, McpAgentTool>,
  authorize: Parameters<typeof createMcpHttpHandler>[0]["authorize"] = "none-local-only",
) {
  const handler = createMcpHttpHandler({ agents, authorize });
  const server = await serveNode(handler);
  servers.push(server);
  return server;
}

async function connect(
  url: string,
  options: { elicitation?: boolean; headers?: Record<string, string> } = {},
) {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { capabilities: options.elicitation ? { elicitation: {} } : {} },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: options.headers ?? {} } }),
  );
  clients.push(client);
  return client;
}

const echo: McpAgentTool = {
  description: "Echoes",
  create: () =>
    createAgent({
      provider: scripted((request) => ({
        text: `echo: ${JSON.stringify(request.messages.at(-1)?.content)}`,
      })),
    }),
};

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

describe("agents served over MCP Streamable HTTP (the MCP SDK's client)", () => {
  it("lists each agent as a tool; a call runs the prompt and returns the answer", async () => {
    const { url } = await serve({ echo });
    const client = await connect(url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["echo"]);
    expect(tools[0]!.inputSchema.properties).toHaveProperty("prompt");
    const result = await client.callTool({ name: "echo", arguments: { prompt: "hi" } });
    expect(result.content).toEqual([{ type: "text", text: 'echo: "hi"' }]);
  });

  it("returns typed output as structuredContent, and reports progress", async () => {
    const output = z.object({ city: z.string(), population: z.number() });
    const { url } = await serve({
      facts: {
        description: "Facts",
        output,
        create: () => createAgent({ provider: scripted([{ text: '{"city":"Lyon","population":522000}' }]) }),
      },
    });
    const client = await connect(url);
    const progress: string[] = [];
    const result = await client.callTool({ name: "facts", arguments: { prompt: "Lyon?" } }, undefined, {
      onprogress: (p) => void progress.push(p.message ?? ""),
    });
    expect(result.structuredContent).toEqual({ city: "Lyon", population: 522000 });
    expect(progress).toContain("turn 1");
  });

  it("asks approvals through elicitation when the client supports it; refuses them with a reason where not", async () => {
    const ran: string[] = [];
    const { url } = await serve({ deploy: guarded(ran) });
    const asking = await connect(url, { elicitation: true });
    const asked: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { approve: true } };
    });
    const approved = await asking.callTool({ name: "deploy", arguments: { prompt: "ship it" } });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/deploy/);
    expect(ran).toEqual(["deploy"]);
    expect(approved.content).toEqual([{ type: "text", text: "result: deployed" }]);

    const silent = await connect(url);
    const refused = await silent.callTool({ name: "deploy", arguments: { prompt: "ship it" } });
    expect(ran).toEqual(["deploy"]);
    expect((refused.content as { text: string }[])[0]!.text).toContain(NO_ELICITATION_REFUSAL);
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
    const call = client.callTool({ name: "slow", arguments: { prompt: "go" } }, undefined, {
      signal: controller.signal,
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await expect(call).rejects.toThrow();
    for (let i = 0; i < 50 && !aborted; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(aborted).toBe(true);
  });
});

describe("the MCP HTTP handler's guards (as the session host's)", () => {
  it("refuses to start without authorize", () => {
    expect(() => createMcpHttpHandler({ agents: { echo } } as never)).toThrow(/authorize/);
  });

  it("answers 403 when authorize says no, 415 to a body that is not JSON, 403 cross-site and to a foreign Host", async () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const closed = await serve({ echo }, (request) => request.headers.get("authorization") === "Bearer good");
    expect((await fetch(closed.url, { method: "POST", headers, body: initialize })).status).toBe(403);
    expect(
      (
        await fetch(closed.url, {
          method: "POST",
          headers: { ...headers, authorization: "Bearer good" },
          body: initialize,
        })
      ).status,
    ).toBe(200);

    const local = createMcpHttpHandler({ agents: { echo }, authorize: "none-local-only" });
    const post = (url: string, extra: Record<string, string>, body = initialize) =>
      local(new Request(url, { method: "POST", headers: { ...headers, ...extra }, body }));
    expect((await post("http://127.0.0.1/mcp", { "content-type": "text/plain" })).status).toBe(415);
    expect((await post("http://127.0.0.1/mcp", { origin: "https://evil.example" })).status).toBe(403);
    expect((await post("http://evil.example/mcp", {})).status).toBe(403);
    expect((await post("http://127.0.0.1/mcp", { "mcp-session-id": "no-such" })).status).toBe(404);
    const malformed = await post("http://127.0.0.1/mcp", {}, "{not json");
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: -32700 } });
    await local.close();
  });

  it("an authorize hook that throws quoting the token it was shown: 500, the token in neither the answer nor the log", async () => {
    const leaked = "sk-ant-api03-LEAKEDleakedLEAKED0123456789";
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const server = await serve({ echo }, (request) => {
        throw new Error(`rejected credentials ${request.headers.get("authorization")}`);
      });
      const response = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${leaked}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
      });
      expect(response.status).toBe(500);
      const answer = await response.text();
      expect(answer).toContain("the request failed on the server");
      expect(answer).not.toContain("LEAKED");
      const log = logged.mock.calls.flat().map(String).join("\n");
      expect(log).toContain("rejected credentials Bearer [redacted]");
      expect(log).not.toContain("LEAKED");
    } finally {
      logged.mockRestore();
    }
  });

  it("keeps maxSessions sessions per caller: its least recently used is closed (404), another caller's are untouched", async () => {
    const handler = createMcpHttpHandler({
      agents: { echo },
      authorize: (request) => request.headers.get("authorization")?.replace("Bearer ", "") ?? false,
      maxSessions: 2,
    });
    const server = await serveNode(handler);
    servers.push(server);
    const as = (who: string) => connect(server.url, { headers: { authorization: `Bearer ${who}` } });
    const bob = await as("bob");
    const first = await as("alice");
    const second = await as("alice");
    await first.listTools(); // used after the second was opened
    // Clients that go away without ending their sessions: without a bound each stayed held.
    const third = await as("alice");
    await expect(second.listTools()).rejects.toThrow(/404|session/i);
    for (const client of [first, third, bob]) {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["echo"]);
    }
    await handler.close();
  });
});
