// `agent-machine acp` with an editor that offers its file system and terminal (the ACP SDK's client
// side, over real stdio): the coding tools read and write through the editor's buffers and bash runs
// in its terminal, the workspace rules still ours; an editor that offers neither gets our own tools.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import {
  type ClientCapabilities,
  client as acpClient,
  type ClientContext,
  type CreateTerminalRequest,
  ndJsonStream,
  PROTOCOL_VERSION,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_BIN, SANDBOX_ARGS, cleanEnv, removeDir, TEST_SCRIPT, tempDir } from "./fixtures/cli-harness.js";

const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) removeDir(dir);
});

/** An editor with open buffers (path → text) it serves for reads and keeps writes in, and a real terminal. */
interface Editor {
  agent: ClientContext;
  updates: SessionUpdate[];
  buffers: Map<string, string>;
  reads: string[];
  writes: { path: string; content: string }[];
  terminals: CreateTerminalRequest[];
  close(): Promise<void>;
}

async function connectEditor(cwd: string, args: string[]): Promise<Editor> {
  const child = spawn(process.execPath, [CLI_BIN, "acp", ...args], {
    cwd,
    env: cleanEnv({ AGENT_MACHINE_SCRIPT: TEST_SCRIPT }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  const editor: Omit<Editor, "agent" | "close"> = {
    updates: [],
    buffers: new Map(),
    reads: [],
    writes: [],
    terminals: [],
  };
  const running = new Map<
    string,
    { output: string; exit: Promise<{ exitCode: number | null; signal: string | null }>; kill(): void }
  >();
  let next = 0;
  const app = acpClient()
    .onNotification("session/update", ({ params }) => void editor.updates.push(params.update))
    .onRequest("session/request_permission", () => ({ outcome: { outcome: "selected", optionId: "allow" } }))
    .onRequest("fs/read_text_file", ({ params }) => {
      editor.reads.push(params.path);
      const text = editor.buffers.get(params.path);
      if (text === undefined) throw new Error(`no buffer for ${params.path}`);
      return { content: text };
    })
    .onRequest("fs/write_text_file", ({ params }) => {
      editor.writes.push({ path: params.path, content: params.content });
      editor.buffers.set(params.path, params.content);
      return {};
    })
    .onRequest("terminal/create", ({ params }) => {
      editor.terminals.push(params);
      const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? cwd });
      const term = {
        output: "",
        exit: new Promise<{ exitCode: number | null; signal: string | null }>((resolve) =>
          proc.once("exit", (exitCode, signal) => resolve({ exitCode, signal })),
        ),
        kill: () => proc.kill("SIGKILL"),
      };
      proc.stdout.on("data", (chunk: Buffer) => (term.output += chunk.toString("utf8")));
      proc.stderr.on("data", (chunk: Buffer) => (term.output += chunk.toString("utf8")));
      const terminalId = `term-${++next}`;
      running.set(terminalId, term);
      return { terminalId };
    })
    .onRequest("terminal/wait_for_exit", async ({ params }) => running.get(params.terminalId)!.exit)
    .onRequest("terminal/output", async ({ params }) => {
      const term = running.get(params.terminalId)!;
      const exited = await Promise.race([term.exit, Promise.resolve(undefined)]);
      return { output: term.output, truncated: false, exitStatus: exited ?? null };
    })
    .onRequest("terminal/kill", ({ params }) => (running.get(params.terminalId)!.kill(), {}))
    .onRequest("terminal/release", ({ params }) => (running.delete(params.terminalId), {}));
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    ),
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    ...editor,
    agent: connection.agent,
    close: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const lastAnswer = (updates: SessionUpdate[]) => {
  const chunks: string[] = [];
  for (const update of updates) {
    if (update.sessionUpdate === "tool_call") chunks.length = 0;
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text")
      chunks.push(update.content.text);
  }
  return chunks.join("");
};

async function startSession(editor: Editor, cwd: string, clientCapabilities: ClientCapabilities) {
  await editor.agent.request("initialize", { protocolVersion: PROTOCOL_VERSION, clientCapabilities });
  const { sessionId } = await editor.agent.request("session/new", { cwd, mcpServers: [] });
  return async (text: string) => {
    editor.updates.length = 0;
    const done = await editor.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text }],
    });
    expect(done.stopReason).toBe("end_turn");
    return lastAnswer(editor.updates);
  };
}

function workspace(): string {
  const dir = tempDir("am-acp-fs-");
  dirs.push(dir);
  writeFileSync(path.join(dir, "a.txt"), "one on disk\n");
  mkdirSync(path.join(dir, ".git"));
  writeFileSync(path.join(dir, ".git", "config"), "[core]\n");
  return dir;
}

describe("agent-machine acp with the editor's file system and terminal", () => {
  it("reads the editor's unsaved buffer, writes and edits through the editor, runs bash in its terminal", async () => {
    const cwd = workspace();
    // --no-sandbox: bash would run unsandboxed anyway, so it may run in the editor's terminal.
    const editor = await connectEditor(cwd, ["--no-sandbox"]);
    const file = path.join(cwd, "a.txt");
    editor.buffers.set(file, "one unsaved\ntwo\n");
    const prompt = await startSession(editor, cwd, {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: true,
    });

    expect(await prompt("read: a.txt")).toMatch(/^tool results: +1\tone unsaved \|/);
    expect(editor.reads).toEqual([file]);

    expect(await prompt("edit: a.txt :: unsaved :: saved")).toMatch(
      /^tool results: Edited a\.txt: 1 replacement/,
    );
    expect(editor.writes).toEqual([{ path: file, content: "one saved\ntwo\n" }]);
    // The editor wrote it (into its buffer): the disk is the editor's business.
    expect(readFileSync(file, "utf8")).toBe("one on disk\n");

    expect(await prompt("write: new.txt")).toMatch(/^tool results: Created new\.txt \(4 bytes\) \/ Created/);
    // The two writes run in parallel (different files): the editor may receive them in either order.
    const byPath = (a: { path: string }, b: { path: string }) => a.path.localeCompare(b.path);
    expect(editor.writes.slice(1).sort(byPath)).toEqual([
      { path: path.join(cwd, "new.txt"), content: "one\n" },
      { path: path.join(cwd, "new.txt.2"), content: "two\n" },
    ]);

    const answer = await prompt("run: echo from-the-terminal; exit 3");
    expect(answer).toMatch(/^tool results: from-the-terminal \|/);
    expect(editor.terminals).toEqual([
      expect.objectContaining({ command: "bash", args: ["-c", "echo from-the-terminal; exit 3"], cwd }),
    ]);
    // The call shows the terminal while it runs, and its result carries the exit code.
    expect(editor.updates).toContainEqual(
      expect.objectContaining({
        sessionUpdate: "tool_call_update",
        content: [{ type: "terminal", terminalId: "term-1" }],
      }),
    );
    const end = editor.updates.findLast(
      (u) => u.sessionUpdate === "tool_call_update" && u.status === "completed",
    );
    expect(JSON.stringify(end)).toContain("[Exit code: 3]");
    await editor.close();
  }, 60_000);

  it("keeps the workspace rules on the editor's side: outside paths and .git/ never reach the editor", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd, ["--no-sandbox"]);
    editor.buffers.set(path.join(cwd, ".git", "config"), "[core]\n");
    const prompt = await startSession(editor, cwd, { fs: { readTextFile: true, writeTextFile: true } });

    editor.buffers.set(path.join(cwd, "a.txt"), "inside\n");
    // Inside the workspace the editor is asked; outside, or into a protected folder, it never is.
    expect(await prompt("read: a.txt")).toMatch(/^tool results: +1\tinside \|/);
    expect(await prompt("read: ../outside.txt")).toContain("outside the workspace");
    expect(await prompt("write: .git/hooks-x")).toMatch(/not allowed|protected/);
    expect(await prompt("edit: .git/config :: core :: evil")).toMatch(/not allowed|protected/);
    expect(await prompt("write: node_modules/x.js")).toMatch(/not allowed|protected/);
    expect(editor.reads).toEqual([path.join(cwd, "a.txt")]);
    expect(editor.writes).toEqual([]);
    expect(readFileSync(path.join(cwd, ".git", "config"), "utf8")).toBe("[core]\n");
    await editor.close();
  }, 60_000);

  it("uses our own tools where the editor offers neither: the disk read and written, bash ours", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd, [...SANDBOX_ARGS]);
    editor.buffers.set(path.join(cwd, "a.txt"), "one unsaved\n");
    const prompt = await startSession(editor, cwd, {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
    });

    expect(await prompt("read: a.txt")).toMatch(/^tool results: +1\tone on disk \|/);
    expect(await prompt("edit: a.txt :: on disk :: edited")).toMatch(/^tool results: Edited a\.txt/);
    expect(readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("one edited\n");
    expect(await prompt("run: echo ours")).toMatch(/^tool results: ours \|/);
    if (SANDBOX_ARGS.length === 0) {
      // bubblewrap here: our bash is the sandboxed one (its own pid namespace: the shell is a low pid).
      const pid = /pid=(\d+)/.exec(await prompt("run: echo pid=$$"))?.[1];
      expect(Number(pid)).toBeLessThan(10);
    }
    expect(editor.reads).toEqual([]);
    expect(editor.writes).toEqual([]);
    expect(editor.terminals).toEqual([]);
    await editor.close();
  }, 60_000);

  it("keeps bash in our sandbox when it is on, even where the editor offers a terminal", async () => {
    if (SANDBOX_ARGS.length > 0) return; // no bubblewrap here: nothing to keep bash in
    const cwd = workspace();
    const editor = await connectEditor(cwd, []);
    const prompt = await startSession(editor, cwd, { terminal: true });
    const pid = /pid=(\d+)/.exec(await prompt("run: echo pid=$$"))?.[1];
    expect(Number(pid)).toBeLessThan(10); // in bubblewrap's own pid namespace
    expect(editor.terminals).toEqual([]);
    await editor.close();
  }, 60_000);

  it("shows the model's plan as the session's plan, updated at each update_plan call", async () => {
    const cwd = workspace();
    const editor = await connectEditor(cwd, [...SANDBOX_ARGS]);
    const prompt = await startSession(editor, cwd, {});
    expect(await prompt("plan: read the code | fix the bug")).toMatch(
      /^tool results: Plan updated: 0 of 2 steps completed; in progress: read the code\./,
    );
    expect(editor.updates.filter((u) => u.sessionUpdate === "plan")).toEqual([
      {
        sessionUpdate: "plan",
        entries: [
          { content: "read the code", status: "in_progress", priority: "medium" },
          { content: "fix the bug", status: "pending", priority: "medium" },
        ],
      },
    ]);
    // The plan is the plan, not a tool call.
    expect(editor.updates.some((u) => u.sessionUpdate === "tool_call")).toBe(false);
    await prompt("plan: read the code | fix the bug | done");
    expect(editor.updates.find((u) => u.sessionUpdate === "plan")).toMatchObject({
      entries: [{ status: "completed" }, { status: "completed" }],
    });
    await editor.close();
  }, 60_000);
});
