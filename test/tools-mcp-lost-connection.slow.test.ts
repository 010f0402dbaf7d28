// mcpTools when the connection to a server is lost: for a stdio server, the call it was lost in is
// an error result that says why, and the next call starts the server again instead of failing for
// ever with "Not connected"; for a Streamable HTTP server that restarted and no longer knows the
// session (HTTP 404), a new session is started and the call made in it, as the MCP spec asks.
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type McpToolSet, mcpTools } from "../index.js";
import { processAlive } from "../tools/internal/process-group.js";
import { runTool } from "./fixtures/tools-helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const fragileServer = {
  command: process.execPath,
  args: ["--import", "tsx", path.join(here, "fixtures", "mcp-fragile-server.ts")],
  cwd: path.join(here, ".."),
  protocol: "legacy" as const,
};

const sets: McpToolSet[] = [];
afterEach(async () => {
  for (const set of sets.splice(0)) await set.close();
});

async function connect(): Promise<McpToolSet> {
  const set = await mcpTools(fragileServer);
  sets.push(set);
  return set;
}

const call = async (set: McpToolSet, name: string) =>
  runTool(
    set.tools.find((t) => t.name === name)!,
    {},
  );

describe("mcpTools after the connection to its server is lost", () => {
  it("a server that died mid-call is started again at the next call, which answers", async () => {
    const set = await connect();
    const firstPid = Number((await call(set, "pid")).text);
    const crashed = await call(set, "crash");
    expect(crashed.isError).toBe(true);
    expect(crashed.text).toMatch(/^MCP tool crash failed: .*closed/i);
    expect(crashed.text).toMatch(/the next call connects again \(a stdio server is started again\)/);
    const again = await call(set, "pid");
    expect(again.isError).toBe(false);
    const secondPid = Number(again.text);
    expect(secondPid).not.toBe(firstPid);
    expect(processAlive(secondPid)).toBe(true);
    // The set's client is the live one.
    expect(set.client.getServerVersion()?.name).toBe("agent-machine-fragile-server");
    await set.close();
    for (let i = 0; i < 100 && processAlive(secondPid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(processAlive(secondPid)).toBe(false);
  }, 60_000);

  it("an answer longer than the client reads fails that call, saying so; the next call answers", async () => {
    const set = await connect();
    const huge = await call(set, "huge");
    expect(huge.isError).toBe(true);
    expect(huge.text).toMatch(/exceeded maximum size/);
    const again = await call(set, "pid");
    expect(again.isError).toBe(false);
    expect(Number(again.text)).toBeGreaterThan(0);
  }, 60_000);

  it("after close() no call starts the server again", async () => {
    const set = await connect();
    await call(set, "pid");
    await set.close();
    const after = await call(set, "pid");
    expect(after.isError).toBe(true);
    expect(after.text).toMatch(/closed/i);
  }, 60_000);
});

/** A stateful Streamable HTTP server (sessions) on `port`; closing it forgets every session. */
async function sessionServer(port = 0) {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  let calls = 0;
  const http = createServer(async (req, res) => {
    const id = req.headers["mcp-session-id"];
    let transport = typeof id === "string" ? sessions.get(id) : undefined;
    if (!transport && typeof id === "string") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }),
      );
      return;
    }
    if (!transport) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
      });
      const server = new McpServer({ name: "sessions", version: "1.0.0" });
      server.registerTool("shout", { inputSchema: { text: z.string() } }, async ({ text }) => {
        calls++;
        return { content: [{ type: "text", text: text.toUpperCase() }] };
      });
      await server.connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, "127.0.0.1", resolve));
  return {
    port: (http.address() as { port: number }).port,
    calls: () => calls,
    close: () => {
      http.closeAllConnections();
      return new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

describe("mcpTools over Streamable HTTP when the server forgot the session", () => {
  it("a server that restarted (404 for the session) gets a new session, and the call is made in it, once", async () => {
    let server = await sessionServer();
    try {
      const set = await mcpTools({ url: `http://127.0.0.1:${server.port}/mcp`, protocol: "legacy" });
      sets.push(set);
      const shout = set.tools.find((t) => t.name === "shout")!;
      expect((await runTool(shout, { text: "before" })).text).toBe("BEFORE");
      await server.close();
      // Down for a moment (the client's pooled sockets see the old server go), then up again.
      await new Promise((resolve) => setTimeout(resolve, 200));
      server = await sessionServer(server.port);
      const after = await runTool(shout, { text: "after" });
      expect(after.isError).toBe(false);
      expect(after.text).toBe("AFTER");
      expect(server.calls()).toBe(1);
      expect((await runTool(shout, { text: "again" })).text).toBe("AGAIN");
    } finally {
      await server.close();
    }
  }, 60_000);
});
