// mcpTools against real servers of both MCP eras: the v2 SDK's reference server speaking only
// 2026-07-28, and the v1 SDK's speaking 2025-11-25. What the model sees is read from what the
// (scripted) provider was sent.
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AgentMessage,
  createAgent,
  createPermissions,
  type McpToolSet,
  mcpTools,
  scripted,
  type Tool,
} from "../index.js";
import { runTool } from "../testing.js";
import { serveLegacyMcp, serveModernMcp, type ServedMcp } from "./fixtures/mcp-revision-servers.js";
import { eventMatching, record } from "./helpers.js";

function toolResultTexts(messages: readonly AgentMessage[]): string[] {
  return messages.flatMap((m) =>
    m.role === "toolResult"
      ? [m.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("")]
      : [],
  );
}

function byName(set: McpToolSet, name: string): Tool {
  const tool = set.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

const eras = [
  { era: "2026-07-28", serve: serveModernMcp },
  { era: "2025-11-25", serve: serveLegacyMcp },
] as const;

describe.each(eras)("mcpTools against a server speaking $era", ({ era, serve }) => {
  let served: ServedMcp;
  let set: McpToolSet;
  beforeAll(async () => {
    served = await serve();
    set = await mcpTools({ url: served.url });
  });
  afterAll(async () => {
    await set?.close();
    await served?.close();
  });

  it(`negotiates ${era} and lists the tools with their schemas`, () => {
    expect(set.client.getNegotiatedProtocolVersion()).toBe(era);
    const both = ["count", "echo", "fail", "wait", "wipe"];
    expect(set.tools.map((t) => t.name).sort()).toEqual(era === "2026-07-28" ? ["confirm", ...both] : both);
    expect(byName(set, "echo").jsonSchema).toMatchObject({
      type: "object",
      properties: { message: { type: "string", description: "What to echo" } },
      required: ["message"],
    });
  });

  it("gives the model the tool's answer, and its isError, through an agent run", async () => {
    const provider = scripted([
      {
        toolCalls: [
          { id: "e1", name: "echo", arguments: { message: "hi", times: 2 } },
          { id: "f1", name: "fail", arguments: { why: "no reason" } },
          { id: "x1", name: "echo", arguments: { times: "three" } },
        ],
      },
      { text: "done" },
    ]);
    // bypass: this test is about results; the approvals test below is about permissions.
    const agent = createAgent({
      provider,
      tools: set.tools,
      permissions: createPermissions({ mode: "bypass" }),
    });
    await agent.prompt("go");
    const results = agent.messages.filter((m) => m.role === "toolResult");
    expect(toolResultTexts(results)).toEqual([
      "hi hi",
      "cannot do that: no reason",
      expect.stringMatching(/message|invalid/i),
    ]);
    expect(results.map((r) => (r.role === "toolResult" ? r.isError : undefined))).toEqual([
      false,
      true,
      true,
    ]);
    // The second model call was sent those results.
    expect(toolResultTexts(provider.requests[1]!.messages)).toEqual(toolResultTexts(results));
    const echo = results[0]!;
    expect(echo.role === "toolResult" && echo.details).toEqual({
      mcpTool: "echo",
      structuredContent: { echoed: "hi" },
    });
  });

  it("forwards progress and cancels the call on the server when the run is aborted", async () => {
    const counted = await runTool(byName(set, "count"), { n: 3 });
    expect(counted.text).toBe("counted to 3");
    expect(counted.progress).toEqual(["step 1 of 3", "step 2 of 3", "step 3 of 3"]);

    const controller = new AbortController();
    const waiting = runTool(byName(set, "wait"), {}, { signal: controller.signal });
    for (let i = 0; i < 200 && !served.log.calls.includes("wait"); i++)
      await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error("user pressed stop"));
    const run = await waiting;
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/user pressed stop|abort/i);
    for (let i = 0; i < 200 && served.log.cancelled.length === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    expect(served.log.cancelled).toEqual(["wait"]);
  });

  it("asks before a tool that changes things: denied, the server never runs it", async () => {
    const provider = scripted([{ toolCalls: [{ id: "w1", name: "wipe", arguments: {} }] }, { text: "ok" }]);
    const agent = createAgent({ provider, tools: set.tools, permissions: createPermissions() });
    const events = record(agent);
    const run = agent.prompt("wipe it");
    await eventMatching(agent, events, (e) => e.type === "approval_requested");
    expect(served.log.calls).not.toContain("wipe");
    agent.deny("w1", "not today");
    await run;
    expect(served.log.calls).not.toContain("wipe");
    expect(toolResultTexts(provider.requests[1]!.messages).join("")).toMatch(/not today/);
  });
});

describe("mcpTools on 2026-07-28, a tool that asks for input in band (input_required)", () => {
  it("declines it when no agent runs the call (nobody could approve): the server's answer reaches the model, not an error", async () => {
    const modern = await serveModernMcp();
    const own = await mcpTools({ url: modern.url });
    try {
      const run = await runTool(byName(own, "confirm"), {});
      expect(modern.log.calls).toEqual(["confirm", "confirm:decline"]);
      expect(run.isError).toBe(false);
      expect(run.text).toBe("stopped");
    } finally {
      await own.close();
      await modern.close();
    }
  });
});

describe("mcpTools protocol choice", () => {
  it('with protocol "2026-07-28" refuses an older server clearly, and "legacy" talks to a new one never', async () => {
    const legacy = await serveLegacyMcp();
    const modern = await serveModernMcp();
    try {
      await expect(mcpTools({ url: legacy.url, protocol: "2026-07-28" })).rejects.toThrow();
      // A 2025 client is refused by a 2026-only server: the default negotiation is what reaches it.
      await expect(mcpTools({ url: modern.url, protocol: "legacy" })).rejects.toThrow();
      const pinned = await mcpTools({ url: modern.url, protocol: "2026-07-28" });
      expect(pinned.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      await pinned.close();
      // @ts-expect-error -- a revision we do not speak
      await expect(mcpTools({ url: modern.url, protocol: "2024-01-01" })).rejects.toThrow(/protocol must be/);
    } finally {
      await legacy.close();
      await modern.close();
    }
  });

  it("turns a server gone mid-conversation into an error result the model reads", async () => {
    const modern = await serveModernMcp();
    const own = await mcpTools({ url: modern.url });
    await modern.close();
    const run = await runTool(byName(own, "echo"), { message: "anyone?" });
    expect(run.isError).toBe(true);
    expect(run.text).toMatch(/^MCP tool echo failed: /);
    await own.close();
  });
});

describe("mcpTools over stdio, both eras", () => {
  const tsxServer = (file: string) => ({
    command: process.execPath,
    args: ["--import", "tsx", `test/fixtures/${file}`],
    cwd: path.join(path.dirname(fileURLToPath(import.meta.url)), ".."),
  });

  it("speaks 2026-07-28 to the v2 reference server and 2025-11-25 to a v1 server", async () => {
    const modern = await mcpTools(tsxServer("mcp-modern-stdio-server.ts"));
    try {
      expect(modern.client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      expect((await runTool(byName(modern, "shout"), { text: "hi" })).text).toBe("HI");
    } finally {
      await modern.close();
    }
    const legacy = await mcpTools(tsxServer("mcp-test-server.ts"));
    try {
      expect(legacy.client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
      expect((await runTool(byName(legacy, "echo"), { message: "hi" })).text).toBe("hi");
    } finally {
      await legacy.close();
    }
  });
});
