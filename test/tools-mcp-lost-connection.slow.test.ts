// mcpTools when the connection to a stdio server is lost: the call it was lost in is an error
// result that says why, and the next call starts the server again instead of failing for ever with
// "Not connected".
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
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
