// `agent-machine mcp` over real stdio, driven by the official MCP SDK's client, on the keyless
// scripted model (test/fixtures/cli-script.mjs).
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ModernClient } from "@modelcontextprotocol/client";
import { StdioClientTransport as ModernStdioTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLI_BIN,
  SANDBOX_ARGS,
  cleanEnv,
  removeDir,
  sessionsDirOf,
  TEST_SCRIPT,
  tempDir,
} from "./fixtures/cli-harness.js";

const dirs: string[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  for (const dir of dirs.splice(0)) removeDir(dir);
});

async function connect(cwd: string, elicitation: boolean) {
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { capabilities: elicitation ? { elicitation: {} } : {} },
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI_BIN, "mcp", ...SANDBOX_ARGS],
    cwd,
    env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

function workspace(): string {
  const dir = tempDir("am-mcp-");
  dirs.push(dir);
  return dir;
}

describe("agent-machine mcp over stdio (the MCP SDK's client)", () => {
  it("serves the coding agent as one tool; a call returns the answer", async () => {
    const cwd = workspace();
    const client = await connect(cwd, false);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["coding_agent"]);
    const result = await client.callTool({ name: "coding_agent", arguments: { prompt: "hello" } });
    expect(result.content).toEqual([{ type: "text", text: "heard: hello" }]);
  }, 60_000);

  it("speaks 2026-07-28 to the v2 SDK's client", async () => {
    const client = new ModernClient(
      { name: "test", version: "1.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await client.connect(
      new ModernStdioTransport({
        command: process.execPath,
        args: [CLI_BIN, "mcp", ...SANDBOX_ARGS],
        cwd: workspace(),
        env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
        stderr: "pipe",
      }),
    );
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const result = await client.callTool({ name: "coding_agent", arguments: { prompt: "hello" } });
      expect(result.content).toEqual([{ type: "text", text: "heard: hello" }]);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("asks an edit's approval by elicitation; a client without elicitation gets a refusal, the file unchanged", async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, "a.txt"), "one\n");
    const asking = await connect(cwd, true);
    asking.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { approve: true } }));
    await asking.callTool({ name: "coding_agent", arguments: { prompt: "edit: a.txt :: one :: two" } });
    expect(readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("two\n");

    const silent = await connect(cwd, false);
    const refused = await silent.callTool({
      name: "coding_agent",
      arguments: { prompt: "edit: a.txt :: two :: three" },
    });
    expect(readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("two\n");
    expect((refused.content as { text: string }[])[0]!.text).toMatch(
      /^tool results: The user denied this tool call: Refused: this call needs a human's approval/,
    );
  }, 60_000);

  it("leaves a session that can be resumed when the client goes away mid-call", async () => {
    const cwd = workspace();
    const client = await connect(cwd, true);
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked();
      return new Promise<never>(() => {});
    });
    void client.callTool({ name: "coding_agent", arguments: { prompt: "write: late.txt" } }).catch(() => {});
    await waiting;
    await client.close();
    const root = sessionsDirOf(cwd);
    for (let i = 0; i < 100; i++) {
      const [id] = existsSync(root) ? readdirSync(root) : [];
      const meta = id && JSON.parse(readFileSync(path.join(root, id, "meta.json"), "utf8"));
      if (meta?.status === "idle") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [id] = readdirSync(root);
    const meta = JSON.parse(readFileSync(path.join(root, id!, "meta.json"), "utf8"));
    expect(meta).toMatchObject({ status: "idle", title: "write: late.txt" });
    expect(existsSync(path.join(root, id!, "snapshot.json"))).toBe(true);
    expect(existsSync(path.join(cwd, "late.txt"))).toBe(false);
  }, 60_000);
});
