// The agents' MCP servers (the v1 `createMcpAgentServer`, and `serveMcpStdio` to a 2025-era
// client, as `agent-machine mcp` serves Claude Desktop) over the SDK's in-memory transport, driven
// by the v1 SDK's client. A person answering the client's approval dialog takes the time they take:
// the server must not give up on the question after the SDK's default 60 s request timeout and deny
// the call while the dialog is still open. A blank prompt is refused before a run starts.
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createAgent, defineTool, scripted } from "../index.js";
import {
  createMcpAgentServer,
  type McpAgentTool,
  NO_ELICITATION_REFUSAL,
  serveMcpStdio,
} from "../mcp-server.js";

afterEach(() => {
  vi.useRealTimers();
});

/** An agent whose one tool asks for approval, then answers with what the tool said. */
function guarded(ran: string[]): McpAgentTool {
  const deploy = defineTool({
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
        tools: [deploy],
        provider: scripted((request) => {
          const last = request.messages.at(-1)!;
          if (last.role !== "toolResult") return { toolCalls: [{ name: "deploy", arguments: {} }] };
          const text = last.content.map((part) => (part.type === "text" ? part.text : "")).join("");
          return { text: `result: ${text}` };
        }),
      }),
  };
}

/** A 2025-era client that answers the approval only when the test says so. */
async function slowApprover(serverSide: (transport: InMemoryTransport) => Promise<unknown>) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await serverSide(serverTransport);
  const client = new Client({ name: "desktop", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  let asked!: () => void;
  const askedOnce = new Promise<void>((resolve) => (asked = resolve));
  let answer!: (value: { action: "accept"; content: { approve: boolean } }) => void;
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked();
    return new Promise((resolve) => (answer = resolve));
  });
  await client.connect(clientTransport);
  return { client, askedOnce, approve: () => answer({ action: "accept", content: { approve: true } }) };
}

describe("an approval asked of an MCP client waits for the person, past the SDK's 60 s", () => {
  it("createMcpAgentServer: allowed after two minutes, the call runs", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const ran: string[] = [];
    const server = createMcpAgentServer({ ops: guarded(ran) });
    const { client, askedOnce, approve } = await slowApprover((transport) => server.connect(transport));
    const result = client.callTool({ name: "ops", arguments: { prompt: "ship it" } }, undefined, {
      timeout: 3_600_000,
    });
    await askedOnce;
    await vi.advanceTimersByTimeAsync(120_000);
    approve();
    await expect(result).resolves.toMatchObject({ content: [{ type: "text", text: "result: deployed" }] });
    expect(ran).toEqual(["deploy"]);
    await client.close();
  });

  it("serveMcpStdio (a 2025-era client, as agent-machine mcp serves it): allowed after two minutes, the call runs", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const ran: string[] = [];
    let served: { close(): Promise<void> } | undefined;
    const { client, askedOnce, approve } = await slowApprover(async (transport) => {
      served = await serveMcpStdio({ ops: guarded(ran) }, { transport });
    });
    const result = client.callTool({ name: "ops", arguments: { prompt: "ship it" } }, undefined, {
      timeout: 3_600_000,
    });
    await askedOnce;
    await vi.advanceTimersByTimeAsync(120_000);
    approve();
    await expect(result).resolves.toMatchObject({ content: [{ type: "text", text: "result: deployed" }] });
    expect(ran).toEqual(["deploy"]);
    await client.close();
    await served!.close();
  });
});

describe("a blank prompt is refused before any run starts", () => {
  const servers = {
    createMcpAgentServer: (tool: McpAgentTool) => async (transport: InMemoryTransport) =>
      createMcpAgentServer({ helper: tool }).connect(transport),
    "serveMcpStdio (a 2025-era client)": (tool: McpAgentTool) => async (transport: InMemoryTransport) =>
      serveMcpStdio({ helper: tool }, { transport }),
  };
  for (const [name, serverSide] of Object.entries(servers)) {
    it(`${name}: an error, no agent made; a prompt with text runs`, async () => {
      let made = 0;
      const tool: McpAgentTool = {
        description: "Helps",
        create: () => {
          made++;
          return createAgent({ provider: scripted(() => ({ text: "hello" })) });
        },
      };
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await serverSide(tool)(serverTransport);
      const client = new Client({ name: "desktop", version: "1.0.0" });
      await client.connect(clientTransport);
      for (const prompt of ["", "  \n"]) {
        const refused = await client.callTool({ name: "helper", arguments: { prompt } }).then(
          (result) => JSON.stringify(result),
          (error: Error) => error.message,
        );
        expect(refused).toMatch(/prompt must (not be blank|be a non-blank string)/);
      }
      expect(made).toBe(0);
      const answered = await client.callTool({ name: "helper", arguments: { prompt: "hi" } });
      expect(answered.content).toEqual([{ type: "text", text: "hello" }]);
      await client.close();
    });
  }
});

describe("a client whose elicitation is URL mode only cannot answer an approval's form", () => {
  const servers = {
    createMcpAgentServer: (tool: McpAgentTool) => async (transport: InMemoryTransport) =>
      createMcpAgentServer({ ops: tool }).connect(transport),
    "serveMcpStdio (a 2025-era client)": (tool: McpAgentTool) => async (transport: InMemoryTransport) =>
      serveMcpStdio({ ops: tool }, { transport }),
  };
  for (const [name, serverSide] of Object.entries(servers)) {
    it(`${name}: the call is refused with the reason for a client that cannot ask, never run`, async () => {
      const ran: string[] = [];
      const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
      await serverSide(guarded(ran))(serverTransport);
      const client = new Client(
        { name: "browser", version: "1.0.0" },
        { capabilities: { elicitation: { url: {} } } },
      );
      await client.connect(clientTransport);
      const result = await client.callTool({ name: "ops", arguments: { prompt: "ship it" } });
      expect(ran).toEqual([]);
      expect((result.content as { text: string }[])[0]!.text).toContain(NO_ELICITATION_REFUSAL);
      await client.close();
    });
  }
});
