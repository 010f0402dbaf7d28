// serveAcp in process, driven by the ACP SDK's client side over a pair of streams: what an editor
// that cannot do everything meets (no permission dialog, an empty prompt).
import {
  client as acpClient,
  type ClientContext,
  ndJsonStream,
  PROTOCOL_VERSION,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { serveAcp } from "../acp.js";
import { type Agent, createAgent, createPermissions, defineTool, scripted } from "../index.js";
import { expectValidTranscript, resultText, toolResults } from "./helpers.js";

/** An editor connected to `serveAcp` serving `agent`; `permissions` false: it has no permission dialog. */
async function editorFor(agent: Agent, { permissions = true } = {}) {
  const { editor, newSessions } = await connectEditor(agent, { permissions });
  const { sessionId } = await editor.request("session/new", { cwd: "/tmp", mcpServers: [] });
  return { editor, sessionId, updates: newSessions.updates };
}

/** An editor connected and initialized, no session yet; `newSession` is what the source does. */
async function connectEditor(
  agent: Agent,
  {
    permissions = true,
    newSession = (cwd: string) => ({ id: "s1", cwd, agent }),
  }: { permissions?: boolean; newSession?: (cwd: string) => { id: string; cwd: string; agent: Agent } } = {},
) {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  serveAcp(
    { newSession: ({ cwd }) => newSession(cwd) },
    { stream: ndJsonStream(toClient.writable, toAgent.readable) },
  );
  const updates: SessionUpdate[] = [];
  let app = acpClient().onNotification("session/update", ({ params }) => void updates.push(params.update));
  if (permissions) {
    app = app.onRequest("session/request_permission", () => ({
      outcome: { outcome: "selected" as const, optionId: "allow" },
    }));
  }
  const connection = app.connect(ndJsonStream(toAgent.writable, toClient.readable));
  const editor: ClientContext = connection.agent;
  await editor.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
  return { editor, newSessions: { updates } };
}

describe("serveAcp with an editor that cannot do everything", () => {
  it("an editor without a permission dialog: the call is denied with the editor's error as the reason, not a closed connection", async () => {
    const ran: string[] = [];
    const deploy = defineTool({
      name: "deploy",
      description: "Deploys",
      parameters: z.object({}),
      execute: () => {
        ran.push("deploy");
        return "deployed";
      },
    });
    const agent = createAgent({
      provider: scripted([{ toolCalls: [{ name: "deploy", arguments: {} }] }, { text: "Not deployed." }]),
      tools: [deploy],
      permissions: createPermissions(),
    });
    const { editor, sessionId } = await editorFor(agent, { permissions: false });
    const done = await editor.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "ship it" }],
    });
    expect(done.stopReason).toBe("end_turn");
    expect(ran).toEqual([]);
    const [result] = toolResults(agent.messages);
    expect(result!.isError).toBe(true);
    expect(resultText(result!)).toMatch(/could not be asked: .*method not found/i);
    expect(resultText(result!)).not.toMatch(/connection ended/);
    expectValidTranscript(agent.messages);
  });

  it("an empty prompt (no blocks, or blank text) is invalid params and starts no run", async () => {
    const provider = scripted([{ text: "hi" }]);
    const agent = createAgent({ provider });
    const { editor, sessionId } = await editorFor(agent);
    for (const prompt of [[], [{ type: "text" as const, text: "  \n" }]]) {
      await expect(editor.request("session/prompt", { sessionId, prompt })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/empty/),
      });
    }
    expect(provider.calls).toBe(0);
    expect(agent.messages).toEqual([]);
    const done = await editor.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hello" }],
    });
    expect(done.stopReason).toBe("end_turn");
  });

  it("session/new with a relative cwd, or one the app refuses, is invalid params with the reason; no session is made", async () => {
    let made = 0;
    const agent = createAgent({ provider: scripted([{ text: "hi" }]) });
    const { editor } = await connectEditor(agent, {
      newSession: (cwd) => {
        if (cwd === "/no/such/dir") throw new Error(`ENOENT: no such file or directory, lstat '${cwd}'`);
        made++;
        return { id: "s1", cwd, agent };
      },
    });
    await expect(
      editor.request("session/new", { cwd: "relative/dir", mcpServers: [] }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/absolute/),
    });
    await expect(
      editor.request("session/new", { cwd: "/no/such/dir", mcpServers: [] }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/ENOENT/),
    });
    expect(made).toBe(0);
    await expect(editor.request("session/new", { cwd: "/tmp", mcpServers: [] })).resolves.toEqual({
      sessionId: "s1",
    });
  });
});
