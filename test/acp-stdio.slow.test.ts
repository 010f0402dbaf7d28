// `agent-machine acp` driven over real stdio by the official ACP SDK's client side, on the keyless
// scripted model (test/fixtures/cli-script.mjs).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import {
  client as acpClient,
  type ClientContext,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_BIN, SANDBOX_ARGS, cleanEnv, removeDir, TEST_SCRIPT, tempDir } from "./fixtures/cli-harness.js";

interface Editor {
  child: ChildProcessWithoutNullStreams;
  agent: ClientContext;
  updates: { sessionId: string; update: SessionUpdate }[];
  permissions: RequestPermissionRequest[];
  close(): Promise<void>;
}

const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) removeDir(dir);
});

function startAcp(cwd: string, extraArgs: string[] = []): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, [CLI_BIN, "acp", ...SANDBOX_ARGS, ...extraArgs], {
    cwd,
    env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  return child;
}

/** An editor: the SDK's client connected to a fresh `agent-machine acp`, answering permissions with `answer`. */
async function connectEditor(
  cwd: string,
  answer: (request: RequestPermissionRequest, agent: ClientContext) => RequestPermissionResponse = () => ({
    outcome: { outcome: "selected", optionId: "allow" },
  }),
): Promise<Editor> {
  const child = startAcp(cwd);
  const updates: Editor["updates"] = [];
  const permissions: RequestPermissionRequest[] = [];
  const app = acpClient()
    .onNotification("session/update", ({ params }) => void updates.push(params))
    .onRequest("session/request_permission", ({ params, agent }) => {
      permissions.push(params);
      return answer(params, agent);
    });
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    agent: connection.agent,
    updates,
    permissions,
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const textOfChunks = (updates: Editor["updates"], kind: SessionUpdate["sessionUpdate"]) =>
  updates
    .map((u) => u.update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => {
      const content = "content" in u ? (u.content as { type?: string; text?: string } | null) : null;
      return content && !Array.isArray(content) && content.type === "text" ? (content.text ?? "") : "";
    })
    .join("");

async function initialize(agent: ClientContext) {
  return agent.request("initialize", {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
}

function workspace(): string {
  const dir = tempDir("am-acp-");
  dirs.push(dir);
  return dir;
}

describe("agent-machine acp over stdio (the ACP SDK's client)", () => {
  it("initializes, streams a prompt's answer as message chunks and ends the turn", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd);
    const init = await initialize(editor.agent);
    expect(init.protocolVersion).toBe(PROTOCOL_VERSION);
    expect(init.agentCapabilities?.loadSession).toBe(true);
    expect(init.agentInfo?.name).toBe("agent-machine");
    const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] });
    const done = await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hello there" }],
    });
    expect(done.stopReason).toBe("end_turn");
    expect(textOfChunks(editor.updates, "agent_message_chunk")).toBe("heard: hello there");
    await editor.close();
    expect(editor.child.exitCode).toBe(0);
  }, 60_000);

  it("asks the editor before an edit, with its diff; allowed, the file changes; rejected, it does not", async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, "a.txt"), "one\n");
    writeFileSync(path.join(cwd, "b.txt"), "one\n");
    const editor = await connectEditor(cwd, (request) => ({
      outcome: {
        outcome: "selected",
        optionId: request.toolCall.title?.includes("b.txt") ? "reject" : "allow",
      },
    }));
    await initialize(editor.agent);
    const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] });

    await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "edit: a.txt :: one :: two" }],
    });
    expect(editor.permissions).toHaveLength(1);
    const asked = editor.permissions[0]!;
    expect(asked.toolCall.kind).toBe("edit");
    expect(asked.toolCall.content).toEqual([
      { type: "diff", path: path.join(cwd, "a.txt"), oldText: "one", newText: "two" },
    ]);
    expect(readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("two\n");
    const callId = asked.toolCall.toolCallId;
    const statuses = editor.updates
      .map((u) => u.update)
      .filter((u) => "toolCallId" in u && u.toolCallId === callId)
      .map((u) => ("status" in u ? u.status : undefined));
    expect(statuses).toEqual(["in_progress", "completed"]);

    await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "edit: b.txt :: one :: two" }],
    });
    expect(editor.permissions).toHaveLength(2);
    expect(readFileSync(path.join(cwd, "b.txt"), "utf8")).toBe("one\n");
    await editor.close();
  }, 60_000);

  it("cancel aborts the run: the turn stops with `cancelled`", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd, (request, agent) => {
      // The editor cancels while it is asked, and answers the pending request as cancelled (ACP's rule).
      void agent.notify("session/cancel", { sessionId: request.sessionId });
      return { outcome: { outcome: "cancelled" } };
    });
    await initialize(editor.agent);
    const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] });
    const done = await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "write: new.txt" }],
    });
    expect(done.stopReason).toBe("cancelled");
    expect(() => readFileSync(path.join(cwd, "new.txt"))).toThrow();
    // The session goes on: the next turn runs.
    const next = await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "still there?" }],
    });
    expect(next.stopReason).toBe("end_turn");
    await editor.close();
  }, 60_000);

  it("loads a session in a new process (its history replayed) after the client went away mid-run", async () => {
    const cwd = workspace();
    // A permission request that is never answered: the editor quits while the run waits on it.
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    const first = await connectEditor(cwd, () => {
      asked();
      return new Promise<never>(() => {}) as never;
    });
    await initialize(first.agent);
    const { sessionId } = await first.agent.request("session/new", { cwd, mcpServers: [] });
    await first.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "remember: 42" }],
    });
    void first.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "write: late.txt" }] })
      .catch(() => {});
    await waiting;
    await first.close();
    expect(first.child.exitCode).toBe(0);

    const second = await connectEditor(cwd);
    await initialize(second.agent);
    await second.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
    expect(textOfChunks(second.updates, "user_message_chunk")).toContain("remember: 42");
    expect(textOfChunks(second.updates, "agent_message_chunk")).toContain("heard: remember: 42");
    second.updates.length = 0;
    const done = await second.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "and now?" }],
    });
    expect(done.stopReason).toBe("end_turn");
    expect(textOfChunks(second.updates, "agent_message_chunk")).toBe("heard: and now?");
    await second.close();
  }, 60_000);

  it("session/new in a folder that does not exist, or in a file, is invalid params naming it; the next one in a folder works", async () => {
    const cwd = workspace();
    writeFileSync(path.join(cwd, "notes.txt"), "not a folder\n");
    const editor = await connectEditor(cwd);
    await initialize(editor.agent);
    await expect(
      editor.agent.request("session/new", { cwd: path.join(cwd, "missing"), mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(path.join(cwd, "missing")) });
    await expect(
      editor.agent.request("session/new", { cwd: path.join(cwd, "notes.txt"), mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/notes\.txt is not a folder/) });
    const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] });
    const done = await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "hi" }],
    });
    expect(done.stopReason).toBe("end_turn");
    await editor.close();
  }, 60_000);

  it("answers bad input with ACP's errors and changes nothing: unknown session, malformed JSON", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd);
    await initialize(editor.agent);
    await expect(
      editor.agent.request("session/prompt", { sessionId: "no-such", prompt: [{ type: "text", text: "x" }] }),
    ).rejects.toMatchObject({ code: -32002 });
    await expect(
      editor.agent.request("session/load", { sessionId: "no-such-1", cwd, mcpServers: [] }),
    ).rejects.toMatchObject({ code: -32002 });
    await editor.close();

    // Raw: a line that is not JSON gets a parse error, and the server goes on answering.
    const child = startAcp(cwd);
    const lines: string[] = [];
    let buffer = "";
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const parts = buffer.split("\n");
      buffer = parts.pop()!;
      lines.push(...parts.filter(Boolean));
    });
    child.stdin.write("{not json\n");
    child.stdin.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION } })}\n`,
    );
    const deadline = Date.now() + 20_000;
    while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const messages = lines.map((line) => JSON.parse(line));
    expect(messages).toContainEqual(
      expect.objectContaining({ id: null, error: expect.objectContaining({ code: -32700 }) }),
    );
    expect(messages).toContainEqual(
      expect.objectContaining({
        id: 1,
        result: expect.objectContaining({ protocolVersion: PROTOCOL_VERSION }),
      }),
    );
    child.stdin.end();
  }, 60_000);
});
