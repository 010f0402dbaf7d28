import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type McpToolSet, mcpTools, type Tool } from "../index.js";
import { processAlive } from "../tools/internal/process-group.js";
import { runTool } from "./fixtures/tools-helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const serverScript = path.join(here, "fixtures", "mcp-test-server.ts");
const stdioServer = {
  command: process.execPath,
  args: ["--import", "tsx", serverScript],
  cwd: path.join(here, ".."),
};

let set: McpToolSet;
const byName = (name: string): Tool => {
  const tool = set.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
};

beforeAll(async () => {
  set = await mcpTools({ ...stdioServer, prefix: "test" });
});
afterAll(async () => {
  await set.close();
});

describe("mcpTools over stdio (a real MCP server process)", () => {
  it("lists the server's tools, prefixed, with their JSON Schemas passed through", () => {
    expect(set.tools.map((t) => t.name).sort()).toEqual(
      [
        "test__cancelled_calls",
        "test__count",
        "test__crash",
        "test__echo",
        "test__fail",
        "test__pid",
        "test__pixel",
        "test__wait",
      ].sort(),
    );
    const echo = byName("test__echo");
    expect(echo.description).toBe("Echoes a message back");
    expect(echo.jsonSchema).toMatchObject({
      type: "object",
      properties: { message: { type: "string", description: "What to echo" }, times: { type: "integer" } },
      required: ["message"],
    });
    // The server's readOnlyHint is a hint: without trustAnnotations it relaxes nothing.
    expect(echo.readOnly).toBe(false);
    expect(echo.concurrencySafe).toBe(false);
    expect(byName("test__fail").readOnly).toBe(false);
    // The permissive zod schema still validates what the agent passes: an object.
    expect(echo.parameters.safeParse({ message: "x" }).success).toBe(true);
    expect(echo.parameters.safeParse("not an object").success).toBe(false);
  });

  it("maps text results and puts structuredContent into details", async () => {
    const run = await runTool(byName("test__echo"), { message: "hi", times: 2 });
    expect(run.isError).toBe(false);
    expect(run.result.content).toEqual([{ type: "text", text: "hi hi" }]);
    expect(run.result.details).toEqual({ mcpTool: "echo", structuredContent: { echoed: "hi" } });
  });

  it("maps image content", async () => {
    const run = await runTool(byName("test__pixel"), {});
    expect(run.result.content).toEqual([
      { type: "image", data: expect.stringMatching(/^iVBORw0KGgo/), mimeType: "image/png" },
      { type: "text", text: "a single pixel" },
    ]);
  });

  it("turns a server-side isError into an error result", async () => {
    const run = await runTool(byName("test__fail"), { why: "no reason" });
    expect(run.isError).toBe(true);
    expect(run.text).toBe("cannot do that: no reason");
  });

  it("turns arguments the server rejects into an error result the model can read", async () => {
    const run = await runTool(byName("test__echo"), { times: "three" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/message|Invalid/i);
  });

  it("forwards progress notifications to onProgress", async () => {
    const run = await runTool(byName("test__count"), { n: 3 });
    expect(run.text).toBe("counted to 3");
    expect(run.progress).toEqual(["step 1 of 3", "step 2 of 3", "step 3 of 3"]);
  });

  it("cancels a call on the server when the signal aborts", async () => {
    const controller = new AbortController();
    const running = runTool(byName("test__wait"), {}, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("user pressed stop")), 50);
    const run = await running;
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/user pressed stop|abort/i);
    let cancelled = "0";
    for (let i = 0; i < 50 && cancelled === "0"; i++) {
      cancelled = (await runTool(byName("test__cancelled_calls"), {})).text;
    }
    expect(cancelled).toBe("1");
  });
});

describe("mcpTools lifecycle", () => {
  it("turns a protocol failure (the server dies mid-call) into an error result, and close() ends the process", async () => {
    const own = await mcpTools(stdioServer);
    const pid = Number(
      (
        await runTool(
          own.tools.find((t) => t.name === "pid")!,
          {},
        )
      ).text,
    );
    expect(processAlive(pid)).toBe(true);
    const crashed = await runTool(
      own.tools.find((t) => t.name === "crash")!,
      {},
    );
    expect(crashed.isError).toBe(true);
    expect(crashed.text).toMatch(/^MCP tool crash failed: .*(closed|Connection)/i);
    await own.close();
    await own.close(); // twice is fine
  });

  it("close() ends the server process", async () => {
    const own = await mcpTools(stdioServer);
    const pid = Number(
      (
        await runTool(
          own.tools.find((t) => t.name === "pid")!,
          {},
        )
      ).text,
    );
    expect(processAlive(pid)).toBe(true);
    await own.close();
    for (let i = 0; i < 100 && processAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    expect(processAlive(pid)).toBe(false);
  });

  it("rejects clearly when the server cannot be started", async () => {
    await expect(mcpTools({ command: "/nonexistent/mcp-server" })).rejects.toThrow(/ENOENT|spawn/);
  });
});

describe("mcpTools over Streamable HTTP ({ url })", () => {
  it("connects to a server on 127.0.0.1, calls its tools and closes", async () => {
    const { createServer } = await import("node:http");
    const { McpServer } = await import("@modelcontextprotocol/sdk/server/mcp.js");
    const { StreamableHTTPServerTransport } =
      await import("@modelcontextprotocol/sdk/server/streamableHttp.js");
    const { z } = await import("zod");
    const http = createServer(async (req, res) => {
      // Stateless: a fresh server and transport per request.
      const server = new McpServer({ name: "http-test", version: "1.0.0" });
      server.registerTool("shout", { inputSchema: { text: z.string() } }, async ({ text }) => ({
        content: [{ type: "text", text: text.toUpperCase() }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const { port } = http.address() as { port: number };
    try {
      const remote = await mcpTools({ url: `http://127.0.0.1:${port}/mcp` });
      expect(remote.tools.map((t) => t.name)).toEqual(["shout"]);
      const run = await runTool(remote.tools[0]!, { text: "hello" });
      expect(run.text).toBe("HELLO");
      await remote.close();
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});
